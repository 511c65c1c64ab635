/**
 * A large release on Linux runs in a child process whose C allocator (glibc's malloc, which
 * holds Node's ArrayBuffers) keeps freed memory for reuse and, for the largest inputs, backs
 * large blocks with huge pages. Its settings are environment variables read when a process
 * starts, so the command starts itself again with them. On virtual machines where a page fault is slow, paging
 * fresh memory in was the largest single cost of a 10⁷-row release (docs/performance.md);
 * other C libraries ignore the variable.
 */
import { spawn } from 'node:child_process';
import { inputSize } from '../data/input.ts';
import { SIGNALS } from '../pipeline/cleanup.ts';
import { loadSpec } from '../release-spec/spec.ts';
import { nodeFlagSet } from '../util/node-flags.ts';

/** The variable glibc reads its malloc settings from. Set by the user, it is left as it is. */
export const TUNABLES_ENV = 'GLIBC_TUNABLES';

/**
 * Blocks up to 32 MiB from the heap rather than their own mappings, and freed memory kept
 * there (trim threshold 4 GiB, heap grown 256 MiB at a time); one arena for all threads, so
 * that memory a worker thread freed is reused by the next.
 */
export const TUNABLES = [
  'glibc.malloc.mmap_threshold=33554432',
  'glibc.malloc.trim_threshold=4294967296',
  'glibc.malloc.top_pad=268435456',
  'glibc.malloc.arena_max=1',
].join(':');

/**
 * From this input size large blocks go on huge pages too (transparent huge pages on madvise):
 * a huge page is slower to fault in (the kernel zeroes, and may compact for, 2 MiB at once),
 * which a release of a few million rows pays without gaining it back (docs/performance.md).
 */
export const HUGE_PAGES_INPUT_BYTES = 256_000_000;

/** The allocator's settings for a release of an input of `inputBytes`. */
export function tunablesFor(inputBytes: number): string {
  return inputBytes >= HUGE_PAGES_INPUT_BYTES ? `glibc.malloc.hugetlb=1:${TUNABLES}` : TUNABLES;
}

/**
 * The allocator settings a release of `specPath` should restart with (tunablesFor its input's
 * size), or undefined to run here: on Linux, unless the variable is set already (then this is
 * the restarted process, or the user chose) or a debugger is attached, for a local input of
 * `largeBytes` or more. Any doubt (a spec or input that does not load, an input in a bucket)
 * answers undefined: the release then runs here and reports what is wrong itself.
 */
export function tunedAllocatorFor(
  specPath: string,
  largeBytes: number,
  env = process.env,
): string | undefined {
  if (process.platform !== 'linux' || env[TUNABLES_ENV] !== undefined) return undefined;
  // Under a debugger the release stays where it is attached (a child could not take its port).
  if (process.execArgv.some((a) => a.startsWith('--inspect'))) return undefined;
  if (specPath.startsWith('s3://')) return undefined;
  try {
    const { input } = loadSpec(specPath);
    if (input.startsWith('s3://')) return undefined;
    const bytes = inputSize(input); // a missing input throws
    return bytes >= largeBytes ? tunablesFor(bytes) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The child's V8 heap: its collector first runs a full collection once the old generation holds
 * this many MiB, where it would start at a few MiB. A release allocates its arrays by the
 * gigabyte while its heap of objects stays at a few tens of MiB, so V8 otherwise marks that
 * small heap again and again (about 90 full collections in a release of 3·10⁶ rows, a seventh
 * of its CPU time; docs/performance.md). Worker threads' heaps are sized by the same flag.
 */
export const INITIAL_HEAP_MB = 128;

/** V8's flags for the child: none when the user sized the heap (node's own flags or NODE_OPTIONS). */
export function heapFlags(execArgv: readonly string[], nodeOptions = ''): string[] {
  const set = nodeFlagSet(['initial-heap-size', 'initial-old-space-size'], execArgv, nodeOptions);
  return set ? [] : [`--initial-heap-size=${INITIAL_HEAP_MB}`];
}

/** What the command says when it starts itself again. */
export const TUNED_RERUN_NOTE = `a large input: running the release in a child process with glibc's allocator tuned for it (${TUNABLES_ENV}; set that variable yourself to choose otherwise) and V8's heap sized for it`;

/**
 * Runs this command again in a child process with the tuned allocator (and V8's heap sized,
 * heapFlags) and the same arguments, input and output; forwards SIGINT, SIGTERM and SIGHUP to
 * it (it removes its own temporary files) and exits with its exit code as soon as it is gone.
 */
export function rerunWithTunedAllocator(tunables: string): Promise<never> {
  const v8 = heapFlags(process.execArgv, process.env.NODE_OPTIONS);
  const child = spawn(process.execPath, [...v8, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, [TUNABLES_ENV]: tunables },
  });
  // Kept to the end: a signal that comes after the child is gone must not end this process
  // with the signal instead of the child's exit code.
  for (const signal of Object.keys(SIGNALS)) process.on(signal, () => child.kill(signal as NodeJS.Signals));
  return new Promise((_, fail) => {
    child.on('error', fail);
    // At once: a signal sent on (a second Ctrl-C) while this process wound down would end it
    // with the signal rather than the child's code.
    child.on('close', (code, signal) => process.exit(code ?? SIGNALS[signal as keyof typeof SIGNALS] ?? 1));
  });
}
