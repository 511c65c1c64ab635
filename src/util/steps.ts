/**
 * Long synchronous work written as a generator that yields between units of work (a risk
 * evaluation, a row of a check). A caller runs it to the end at once (`runSteps`), or in
 * slices that give the event loop its turn between them (`runStepsAsync`): a loop that never
 * returns to the event loop never lets the CLI's signal handler run, so SIGINT/SIGTERM would
 * wait for the end of the work.
 */

/** Work that yields between its units and returns its result. */
export type Steps<T> = Generator<void, T, undefined>;

/** How often long work says how far it has come (a progress line for a person). */
export const PROGRESS_MS = 2000;

/** How long a slice runs before the event loop gets its turn. */
export const SLICE_MS = 50;

/** Runs the work to the end without yielding to the event loop. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Runs the work, giving the event loop its turn at each of its yields (signals, timers). */
export async function runStepsAsync<T>(steps: Steps<T>): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Runs one slice of work inside something that wraps it (a phase timer). */
export type Around = <R>(work: () => R) => R;

/**
 * The same work, its units grouped into slices of about `sliceMs` by the clock `now` (a test
 * may drive it), each run inside `around`: it yields once a slice rather than once a unit.
 * A slice runs at least one unit, so the work moves on whatever the clock says.
 */
export function* sliced<T>(
  steps: Steps<T>,
  around: Around = (w) => w(),
  sliceMs = SLICE_MS,
  now: () => number = () => performance.now(),
): Steps<T> {
  for (;;) {
    const r = around(() => {
      const until = now() + sliceMs;
      let next: IteratorResult<void, T>;
      do next = steps.next();
      while (!next.done && now() < until);
      return next;
    });
    if (r.done) return r.value;
    yield;
  }
}

/** The same work, calling `report` at most every `everyMs` while it runs (progress lines). */
export function* reporting<T>(steps: Steps<T>, report: () => void, everyMs: number): Steps<T> {
  let last = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    const now = performance.now();
    if (now - last >= everyMs) {
      last = now;
      report();
    }
    yield;
  }
}
