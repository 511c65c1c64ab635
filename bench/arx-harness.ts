/**
 * ARX's side of the comparisons, as bench/arx.ts and bench/wide.ts launch it: a harness of
 * bench/arx/ (compiled by javac with bench/arx/ArxHarness.java into build/arx-harness) in one
 * long-lived JVM that answers each command line with one line; and the spec's hierarchies
 * written as the files ARX reads (`ppdp hierarchy`'s own export), quietly.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { hierarchyCommand } from '../src/cli/hierarchy.ts';
import { withStdout } from './stdout.ts';

const ROOT = resolve(new URL('..', import.meta.url).pathname);

export interface ArxHarness {
  /** Sends one command; resolves with its answer, rejects on an `error …` answer. */
  readonly ask: (line: string) => Promise<string>;
  readonly stop: () => void;
}

/**
 * Compiles bench/arx/<main>.java and starts it with ARX's jars from `lib` and `-Xmx<heap>`;
 * `options` go to both javac and java (e.g. `--add-exports` of a JDK package the harness reads).
 */
export function startArxHarness(
  lib: string,
  main: string,
  heap: string,
  options: readonly string[] = [],
): ArxHarness {
  if (!lib || !existsSync(lib)) {
    throw new Error(`ARX's jars not found${lib ? ` at ${lib}` : ''}: pass --arx-lib <dir> or set ARX_LIB`);
  }
  const out = join(ROOT, 'build/arx-harness');
  mkdirSync(out, { recursive: true });
  const sources = [`${main}.java`, 'ArxHarness.java'].map((f) => join(ROOT, 'bench/arx', f));
  const javac = spawnSync('javac', [...options, '-cp', `${lib}/*`, '-d', out, ...sources], {
    encoding: 'utf8',
  });
  if (javac.status !== 0) throw new Error(`javac failed: ${javac.stderr}`);
  const jvm: ChildProcessWithoutNullStreams = spawn(
    'java',
    [...options, `-Xmx${heap}`, '-cp', `${lib}/*:${out}`, main],
    {
      stdio: 'pipe',
    },
  );
  jvm.stderr.on('data', (d) => process.stderr.write(`[arx] ${d}`));
  const lines = createInterface({ input: jvm.stdout });
  const waiting: ((line: string) => void)[] = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  return {
    ask: (line) =>
      new Promise((answer, fail) => {
        waiting.push((reply) =>
          reply.startsWith('error') ? fail(new Error(`ARX: ${reply} (after: ${line})`)) : answer(reply),
        );
        jvm.stdin.write(`${line}\n`);
      }),
    stop: () => {
      jvm.stdin.write('quit\n');
      jvm.stdin.end();
    },
  };
}

/**
 * The spec's built hierarchies as ARX files in `dir` (`<column>.csv`, by `ppdp hierarchy`),
 * without its line per file; returns how many it wrote.
 */
export function writeArxHierarchies(specFile: string, dir: string): number {
  const { printed } = withStdout(() => hierarchyCommand([specFile, '--out', dir]));
  return printed.split('\n').filter(Boolean).length;
}
