/**
 * An input shard's verification slice as its classes grow (a script, not a test): one shard of
 * 10^6 rows whose two quasi-identifiers make from 10^3 to 10^6 classes at the node (every row
 * its own class at the end, as on near-unique data at a fine node), each run in a fresh node;
 * peak RSS (process.resourceUsage().maxRSS) after the input is built and after `expectShard`.
 * A slice's memory should follow its rows, not its classes. Writes the runs under `--label`
 * into bench/results/verify-slice-classes.json (runs of other labels are kept, so a change's
 * before and after stand side by side: `--module` names the code measured).
 *
 * Run: `npx tsx bench/verify-slice-classes.ts [--module src/verify/generalization-parts.ts] [--label after]`
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { helpIfAsked } from './help.ts';
import { machineInfo } from './scale.ts';
import { ROOT } from './synth.ts';

helpIfAsked(import.meta.url);

const { values } = parseArgs({
  options: {
    module: { type: 'string', default: 'src/verify/generalization-parts.ts' },
    child: { type: 'string' },
    label: { type: 'string', default: 'current' },
  },
});
const ROWS = 1_000_000;

if (values.child) {
  // One run: a shard whose QIs make `classes` classes, its expectation summed.
  const classes = Number(values.child);
  const { expectShard } = await import(pathToFileURL(resolve(values.module)).href);
  const values1 = Array.from({ length: 1000 }, (_, i) => `a${i}`);
  const values2 = Array.from({ length: classes / 1000 }, (_, i) => `b${i}`);
  const shard = {
    source: 'input.csv',
    delimiter: ',',
    rowCount: ROWS,
    columns: [
      { name: 'q1', dictionary: values1, codes: Int32Array.from({ length: ROWS }, (_, r) => r % 1000) },
      {
        name: 'q2',
        dictionary: values2,
        codes: Int32Array.from({ length: ROWS }, (_, r) => Math.floor(r / 1000) % values2.length),
      },
      {
        name: 's',
        dictionary: Array.from({ length: 10 }, (_, i) => `s${i}`),
        codes: Int32Array.from({ length: ROWS }, (_, r) => (r * 7) % 10),
      },
    ],
  };
  const base = process.resourceUsage().maxRSS;
  const t0 = performance.now();
  expectShard({
    shard,
    attributes: [
      { name: 'q1', type: 'quasi-identifying' },
      { name: 'q2', type: 'quasi-identifying' },
      { name: 's', type: 'sensitive' },
    ],
    hierarchyRows: new Map([
      ['q1', values1.map((v) => [v, '*'])],
      ['q2', values2.map((v) => [v, '*'])],
    ]),
    node: { q1: 0, q2: 0 },
    sensitive: ['s'],
    partitions: 1,
  });
  const ms = Math.round(performance.now() - t0);
  console.log(
    JSON.stringify({ classes, baseMiB: base >> 10, peakMiB: process.resourceUsage().maxRSS >> 10, ms }),
  );
} else {
  const runs: unknown[] = [];
  for (const classes of [1e3, 1e4, 1e5, 1e6]) {
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        new URL(import.meta.url).pathname,
        '--module',
        values.module,
        '--child',
        String(classes),
      ],
      { encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(r.stderr);
    console.log(r.stdout.trim());
    runs.push({ label: values.label, ...JSON.parse(r.stdout) });
  }
  const machine = machineInfo();
  const path = join(ROOT, 'bench/results/verify-slice-classes.json');
  const old = existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : { settings: {}, runs: [] };
  const output = {
    benchmark: 'verify-slice-classes',
    settings: { ...old.settings, script: 'bench/verify-slice-classes.ts', rows: ROWS },
    runs: [
      ...old.runs.filter((r: { label: string }) => r.label !== values.label),
      ...runs.map((r) => ({ ...(r as object), module: values.module, machine })),
    ],
  };
  writeFileSync(path, `${JSON.stringify(output, null, 2)}\n`);
  console.log(`wrote ${path}`);
}
