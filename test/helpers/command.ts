/**
 * A command's function (`hierarchyCommand`, `initCommand`, …) run in this process with stdout
 * and stderr kept: what it printed, and the PpdpError it threw (its code, message and hint), if
 * any — for tests that check what a command says, and that it says no value of the table.
 */
import { PpdpError } from '../../src/errors.ts';

export interface CommandRun {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly error?: PpdpError;
}

export function runCommand(work: () => number): CommandRun {
  const out: string[] = [];
  const err: string[] = [];
  const keep = (into: string[]) =>
    ((chunk: string | Uint8Array) => {
      into.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
  const [stdout, stderr] = [process.stdout.write, process.stderr.write];
  process.stdout.write = keep(out);
  process.stderr.write = keep(err);
  try {
    const status = work();
    return { status, stdout: out.join(''), stderr: err.join('') };
  } catch (e) {
    if (!(e instanceof PpdpError)) throw e;
    return { status: 1, stdout: out.join(''), stderr: err.join(''), error: e };
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
  }
}

/** Everything a run said: the error's message and hint, stdout and stderr. */
export function said(run: CommandRun): string {
  return `${run.error?.describe() ?? ''}\n${run.stdout}\n${run.stderr}`;
}
