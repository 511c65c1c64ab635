/** `ppdp release` run in a child process of its own, for tests that signal, kill or watch it. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;

export interface Run {
  readonly child: ChildProcess;
  /** The child's TMPDIR: what it leaves there is what a test looks for. */
  readonly tmp: string;
  readonly out: string;
  stderr: string;
  readonly exit: Promise<number | null>;
}

let runs = 0;

/** `ppdp release <spec>` in a child with a fresh TMPDIR and --out, both under `root`. */
export function startRelease(root: string, spec: string, extra: string[] = []): Run {
  const n = runs++;
  const tmp = join(root, `tmp-${n}`);
  const out = join(root, `out-${n}`);
  mkdirSync(tmp, { recursive: true });
  const child = spawn(process.execPath, [CLI, 'release', spec, '--out', out, ...extra], {
    env: { ...process.env, TMPDIR: tmp },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const run: Run = {
    child,
    tmp,
    out,
    stderr: '',
    exit: new Promise((done) => child.on('exit', (code) => done(code))),
  };
  child.stderr!.on('data', (d) => {
    run.stderr += String(d);
  });
  return run;
}

/** The --out the next `startRelease` under `root` will give its child (to make it beforehand). */
export function nextOut(root: string): string {
  return join(root, `out-${runs}`);
}

/** The TMPDIR the next `startRelease` under `root` will give its child. */
export function nextTmp(root: string): string {
  return join(root, `tmp-${runs}`);
}

/** Resolves once `ready` holds (checked every 50 ms); fails after `ms`. */
export async function until(ready: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}
