/**
 * What preparing hierarchies costs (a script, not a test): on Adult and on the registry-shaped
 * table (bench/registry-sample.ts), in process, the median time of building each QI's
 * hierarchy and of setting up the utility metrics over the distinct tuples; then whole
 * releases with the built CLI (`hierarchies` of report.json and the wall time).
 * Records the figures under a label in bench/results/hierarchies.json (`--label before`, then
 * `--label after` on the changed code), keeping the other labels.
 *
 * Run: `npx tsx bench/hierarchies.ts --label after [--registry 100000,1000000] [--runs 5] [--cli 1]`
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildHierarchy } from '../src/hierarchy/hierarchy.ts';
import { wasmGroupingKernel } from '../src/kernels/groupby/wasm.ts';
import { prepareGeneralization } from '../src/methods/generalization/index.ts';
import { GeneralizationMetrics } from '../src/metrics/generalization.ts';
import { readInput } from '../src/pipeline/release.ts';
import { loadSpec } from '../src/release-spec/spec.ts';
import { ADULT_SPEC } from '../test/golden/adult-configs.ts';
import { timedRelease } from './cli-release.ts';
import { helpIfAsked } from './help.ts';
import { registrySample } from './registry-sample.ts';
import { machineInfo, median } from './scale.ts';

helpIfAsked(import.meta.url);

const { values } = parseArgs({
  options: {
    label: { type: 'string', default: 'current' },
    registry: { type: 'string', default: '100000,1000000' },
    runs: { type: 'string', default: '5' },
    cli: { type: 'string', default: '1' },
  },
});
const RUNS = Math.max(1, Number(values.runs));
const CLI_RUNS = Math.max(0, Number(values.cli));
const round = (x: number) => Math.round(x * 10) / 10;
const say = (line: string) => process.stdout.write(`${line}\n`);

async function measure(name: string, specFile: string) {
  const spec = loadSpec(specFile);
  const input = readInput(spec);
  const qis = spec.attributes.filter((a) => a.type === 'quasi-identifying');
  const columns: Record<string, { distinct: number; buildMs: number }> = {};
  for (const a of qis) {
    const column = input.columns.find((c) => c.name === a.name)!;
    const times = Array.from({ length: RUNS + 1 }, () => {
      const t = performance.now();
      buildHierarchy(column, a.hierarchy!);
      return performance.now() - t;
    }).slice(1);
    columns[a.name] = { distinct: column.dictionary.length, buildMs: round(median(times)) };
  }
  const prepared = prepareGeneralization(spec, input, wasmGroupingKernel);
  const { hierarchies, tuples } = prepared;
  const metricsMs = Array.from({ length: RUNS }, () => {
    const t = performance.now();
    new GeneralizationMetrics(hierarchies, tuples.columns, tuples.counts, input.rowCount, 5);
    return performance.now() - t;
  });
  const cli: { wallMs: number; hierarchiesMs: number; totalMs: number }[] = [];
  const tmp = mkdtempSync(join(os.tmpdir(), 'ppdp-hierarchies-'));
  try {
    for (let i = 0; i < CLI_RUNS; i++) {
      const { ms, report } = timedRelease(specFile, join(tmp, `run-${i}`));
      const { timings } = report;
      cli.push({ wallMs: round(ms), hierarchiesMs: timings.hierarchies!, totalMs: timings.total! });
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const result = {
    dataset: name,
    rows: input.rowCount,
    buildMs: round(Object.values(columns).reduce((s, c) => s + c.buildMs, 0)),
    columns,
    metricsSetupMs: round(median(metricsMs)),
    cli,
  };
  say(JSON.stringify(result));
  return result;
}

const scratch: string[] = [];
const results = [];
try {
  results.push(await measure('adult', ADULT_SPEC));
  for (const rows of values.registry
    .split(',')
    .map(Number)
    .filter((n) => n > 0)) {
    const { dir, spec } = await registrySample(rows);
    scratch.push(dir);
    results.push(await measure(`registry ${rows}`, spec));
  }
} finally {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
}

const file = new URL('./results/hierarchies.json', import.meta.url);
const previous = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
previous[values.label] = { date: new Date().toISOString(), machine: machineInfo(), runs: RUNS, results };
writeFileSync(file, `${JSON.stringify(previous, null, 2)}\n`);
say(`written ${file.pathname} (${values.label})`);
