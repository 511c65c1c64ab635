/**
 * One `ppdp release <spec> --out <folder> --quiet` through the built CLI (bin/ppdp.mjs, needs
 * `npm run build`), a fresh node process timed from spawn to exit, as bench/arx.ts and
 * bench/hierarchies.ts run it: its wall time and its report.json, the folder removed after.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

const CLI = resolve(new URL('../bin/ppdp.mjs', import.meta.url).pathname);

/** The CLI's release of `specFile` into `out`: ms from spawn to exit, and the report it wrote. */
export function timedRelease(
  specFile: string,
  out: string,
): { ms: number; report: { timings: Record<string, number>; [field: string]: unknown } } {
  const t = performance.now();
  const r = spawnSync(process.execPath, [CLI, 'release', specFile, '--out', out, '--quiet'], {
    encoding: 'utf8',
  });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`ppdp release failed: ${r.stderr}`);
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  rmSync(out, { recursive: true, force: true });
  return { ms, report };
}
