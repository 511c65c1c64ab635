/**
 * A command run in this process with its stdout kept instead of printed: the benchmarks and
 * tests that run `ppdp init` or `ppdp hierarchy` as functions read what it says, or silence it.
 */

/** Runs `work` with stdout captured; returns its result and what it wrote. */
export function withStdout<T>(work: () => T): { result: T; printed: string } {
  const chunks: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  try {
    const result = work();
    return { result, printed: chunks.join('') };
  } finally {
    process.stdout.write = write;
  }
}
