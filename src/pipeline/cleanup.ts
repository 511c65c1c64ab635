/**
 * The temporary folders a run makes (the local work area holds a full copy of the input), gone
 * on every exit path: their owner removes them when it finishes or fails, and the CLI, once it
 * has called `removeOnSignals`, removes them on SIGINT, SIGTERM and SIGHUP before it exits with
 * 128 + the signal's number. What must stop or be given up first (worker threads writing into a
 * folder, the release folder's lock, publish.ts) is registered with `stopOnSignal`. A process
 * killed outright (SIGKILL, the out-of-memory killer) cannot clean up: its folders carry its
 * pid, and the next run removes those of dead pids.
 *
 * A signal stops a run only before its point of no return, the write of manifest.json
 * (`finishOnSignal`): from there on the release is published (or the write fails as any
 * failure does), and a signal lets the run finish and exit as it ends, 0 once published. A
 * scheduler that stops ppdp then sees the release it asked for, not a failure to retry.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { OutputError } from '../errors.ts';
import { errorCode, FILE_SYSTEM_REASONS } from '../util/unreadable.ts';

const folders = new Set<string>();
const stops = new Set<() => Promise<unknown>>();
let installed = false;
/** The signal that is stopping the run, once one has arrived before its point of no return. */
let stoppedBy: string | undefined;
/** Past the point of no return: `writing` manifest.json, or `published` (it is written). */
let finishing: 'writing' | 'published' | undefined;

/** Exit codes by signal: 128 + its number, as a shell reports a process the signal ended. */
export const SIGNALS = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
/**
 * How long the stops (worker threads, the release folder's lock) may take before the folders
 * go anyway, counted in event-loop ticks of TICK_MS (idleFor).
 */
const STOP_MS = 3000;
const TICK_MS = 100;

/**
 * A new folder `<prefix><pid>-XXXXXX` in the system's temporary folder, removed on a signal
 * until `removeTemporaryFolder`. Folders of the same prefix left by processes that are gone
 * go first.
 */
export function makeTemporaryFolder(prefix: string): string {
  removeAbandoned(prefix);
  let dir: string;
  try {
    dir = mkdtempSync(join(tmpdir(), `${prefix}${process.pid}-`));
  } catch (err) {
    // The environment's folder, not the run's data: said as such, not as an internal error.
    const code = errorCode(err) ?? 'unknown error';
    const why: Record<string, string> = {
      ...FILE_SYSTEM_REASONS,
      ENOENT: 'it does not exist',
      ENOTDIR: 'it is not a folder',
    };
    throw new OutputError(
      'E_TMPDIR',
      `cannot make a working folder in the temporary folder ${resolve(tmpdir())}: ${why[code] ?? 'the file system refused'} (${code})`,
      'set TMPDIR to an existing folder this user can write in',
    );
  }
  folders.add(dir);
  return dir;
}

/** Removes the `<prefix><pid>-…` folders whose process no longer runs on this machine. */
function removeAbandoned(prefix: string): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const pid = name.startsWith(prefix) ? /^(\d+)-/.exec(name.slice(prefix.length))?.[1] : undefined;
    if (pid !== undefined && Number(pid) !== process.pid && !running(Number(pid)))
      remove(join(tmpdir(), name));
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH'; // EPERM: another user's live process
  }
}

/** Removes a folder `makeTemporaryFolder` made (never throws: a cleanup must not hide the run's own error). */
export function removeTemporaryFolder(dir: string): void {
  remove(dir);
  folders.delete(dir);
}

/**
 * Runs `stop` before the folders are removed on a signal; the returned function unregisters it.
 * Only once `removeOnSignals` has been called (the CLI): elsewhere (the library, a Lambda) no
 * signal runs it, and nothing is kept.
 */
export function stopOnSignal(stop: () => Promise<unknown>): () => void {
  if (!installed) return () => {};
  stops.add(stop);
  return () => stops.delete(stop);
}

/**
 * Throws when a signal is stopping the run: no step starts, and nothing more is written to the
 * release, once one has arrived (what fails here goes its failure path's way).
 */
export function stopIfSignalled(): void {
  if (stoppedBy === undefined) return;
  throw new OutputError(
    'E_SIGNAL',
    `${stoppedBy} received: the run stops and publishes nothing`,
    'run the release again',
  );
}

/**
 * The run's point of no return (`writing`: manifest.json is about to be written; `published`:
 * it is written, or the folder already held this run's release). Throws instead, as
 * `stopIfSignalled`, when a signal came first. From here on a signal lets the run finish.
 */
export function finishOnSignal(stage: 'writing' | 'published'): void {
  stopIfSignalled();
  finishing = stage;
}

/** A run starts: nothing of it is published yet (a process may run several, the tests do). */
export function runStarts(): void {
  if (stoppedBy === undefined) finishing = undefined;
}

/**
 * For the CLI: on SIGINT, SIGTERM or SIGHUP, says so on stderr, stops what was registered
 * (at most STOP_MS), removes every temporary folder and exits with 130, 143 or 129. Once the
 * run has passed its point of no return (`finishOnSignal`) it says so and lets the run finish
 * instead. A second signal meanwhile removes the folders and exits at once: 0 if the release
 * was published by then, else the signal's code.
 */
export function removeOnSignals(): void {
  if (installed) return;
  installed = true;
  let stopping = false;
  for (const [signal, code] of Object.entries(SIGNALS)) {
    process.on(signal, () => {
      if (stopping) {
        if (finishing === 'published')
          process.stderr.write(`\nppdp: ${signal} received: exiting at once; the release is published\n`);
        exitNow(finishing === 'published' ? 0 : code);
      }
      stopping = true;
      if (finishing !== undefined) {
        process.stderr.write(
          `\nppdp: ${signal} received ${
            finishing === 'published' ? 'after the release was published' : 'while manifest.json is written'
          }: the run finishes (a second signal exits at once)\n`,
        );
        return;
      }
      stoppedBy = signal;
      process.stderr.write(`\nppdp: ${signal} received: stopping and removing temporary files\n`);
      Promise.race([Promise.allSettled([...stops].map((stop) => stop())), idleFor(STOP_MS)]).then(() =>
        exitNow(code),
      );
    });
  }
}

/**
 * Resolves once `ms` have passed in turns of the event loop (ticks of TICK_MS), not in wall
 * time: a synchronous step of the run still going when the signal came (an optimizer's risk
 * evaluation on a loaded machine takes seconds) holds the loop, and the stops' replies (the
 * lock's removal) wait behind it. A plain timer would fire in the same turn and exit first;
 * the ticks let those replies in. A stop that hangs is still given up after `ms` at least.
 */
function idleFor(ms: number): Promise<void> {
  return new Promise((done) => {
    let left = Math.ceil(ms / TICK_MS);
    const tick = () => (--left <= 0 ? done() : setTimeout(tick, TICK_MS).unref());
    setTimeout(tick, TICK_MS).unref();
  });
}

function exitNow(code: number): never {
  for (const dir of folders) remove(dir);
  process.exit(code);
}

function remove(dir: string): void {
  // A second pass catches what a write in flight created while the first one ran.
  for (let pass = 0; pass < 2 && existsSync(dir); pass++) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 10 });
    } catch {
      // left for the next pass (or for the system's own cleanup of its temporary folder)
    }
  }
}
