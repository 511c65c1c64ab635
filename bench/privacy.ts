/**
 * Privacy-model benchmark (a script, not a test): the search on Adult for every configuration
 * of the privacy-models issue (k = 5 with one model on occupation) and for Samarati's
 * k-minimal strategy against the optimal search (k ∈ {2,5,10} × maxSuppression ∈ {0, 0.02}).
 * Records search time (median), nodes checked and the chosen node; checks every chosen node
 * against the golden tables. Writes bench/results/adult-privacy.json.
 * Run: `npx tsx bench/privacy.ts [--runs N]`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { wasmGroupingKernel } from '../src/kernels/groupby/wasm.ts';
import { prepareGeneralization, search } from '../src/methods/generalization/index.ts';
import type { Prepared } from '../src/methods/generalization/prepared.ts';
import { prunable } from '../src/methods/generalization/search.ts';
import { readInput } from '../src/pipeline/release.ts';
import { loadSpec, type PrivacyModelSpec, type ReleaseSpec } from '../src/release-spec/spec.ts';
import {
  ADULT_SPEC,
  K_MINIMAL_KS,
  K_MINIMAL_SUPPRESSIONS,
  type KMinimalGoldenRow,
  PRIVACY_CONFIGS,
  type PrivacyGoldenRow,
} from '../test/golden/adult-configs.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '3' }, help: { type: 'boolean', short: 'h', default: false } },
});
if (values.help) {
  process.stdout.write(
    'Usage: npx tsx bench/privacy.ts [--runs N]   (median of N searches per configuration)\n',
  );
  process.exit(0);
}
const runs = Math.max(1, Number(values.runs));
const golden = (name: string) =>
  JSON.parse(readFileSync(new URL(`../test/golden/${name}`, import.meta.url), 'utf8'));
const privacyGolden: PrivacyGoldenRow[] = golden('adult-privacy.json');
const kMinimalGolden: KMinimalGoldenRow[] = golden('adult-k-minimal.json');

const base = loadSpec(ADULT_SPEC);
const table = readInput(base);
const specWith = (privacy: PrivacyModelSpec[], method: Record<string, unknown>): ReleaseSpec =>
  ({ ...base, privacy, method: { ...base.method, ...method } }) as ReleaseSpec;

function measure(spec: ReleaseSpec) {
  const prepared: Prepared = prepareGeneralization(spec, table, wasmGroupingKernel);
  const times: number[] = [];
  let outcome: ReturnType<typeof search> | undefined;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    outcome = search(prepared, wasmGroupingKernel);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const node = Object.fromEntries(prepared.qis.map((c, i) => [c.name, outcome!.best.levels[i]!]));
  return {
    searchMs: Math.round(times[Math.floor(times.length / 2)]! * 10) / 10,
    nodesChecked: outcome!.nodesChecked,
    latticeShare: Math.round((outcome!.nodesChecked / prepared.problem.lattice.size) * 1000) / 1000,
    prunable: prunable(prepared.problem),
    node,
    value: outcome!.best.value,
    kMinimal: outcome!.kMinimal?.length,
  };
}

const results: Record<string, unknown>[] = [];
const say = (line: string) => process.stdout.write(`${line}\n`);
say(`runs per configuration: ${runs}; load average at start: ${os.loadavg()[0]!.toFixed(2)}`);
for (const [i, c] of PRIVACY_CONFIGS.entries()) {
  const r = measure(
    specWith([{ model: 'k-anonymity', k: 5 }, c.model as PrivacyModelSpec], {
      maxSuppression: c.maxSuppression,
    }),
  );
  const matches = JSON.stringify(r.node) === JSON.stringify(privacyGolden[i]!.node);
  results.push({
    configuration: `k=5 + ${c.name}`,
    maxSuppression: c.maxSuppression,
    strategy: 'optimal',
    ...r,
    matchesGolden: matches,
  });
  say(
    `k=5 + ${c.name.padEnd(20)} sup ${String(c.maxSuppression).padEnd(4)} ${String(r.searchMs).padStart(8)} ms ` +
      `${String(r.nodesChecked).padStart(5)} nodes${r.prunable ? '' : ' (non-monotonic: no tagging)'}${matches ? '' : '  MISMATCH'}`,
  );
}
for (const k of K_MINIMAL_KS) {
  for (const maxSuppression of K_MINIMAL_SUPPRESSIONS) {
    for (const strategy of ['optimal', 'k-minimal'] as const) {
      const r = measure(specWith([{ model: 'k-anonymity', k }], { maxSuppression, strategy }));
      const g = kMinimalGolden.find((x) => x.k === k && x.maxSuppression === maxSuppression)!;
      const matches = strategy === 'optimal' || r.kMinimal === g.kMinimal.length;
      results.push({ configuration: `k=${k}`, maxSuppression, strategy, ...r, matchesGolden: matches });
      say(
        `k=${String(k).padEnd(2)} sup ${String(maxSuppression).padEnd(4)} ${strategy.padEnd(9)} ${String(r.searchMs).padStart(8)} ms ` +
          `${String(r.nodesChecked).padStart(5)} nodes${r.kMinimal !== undefined ? `, ${r.kMinimal} k-minimal nodes` : ''}${matches ? '' : '  MISMATCH'}`,
      );
    }
  }
}
const out = new URL('./results/adult-privacy.json', import.meta.url);
writeFileSync(
  out,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      node: process.version,
      cpu: os.cpus()[0]?.model,
      cores: os.cpus().length,
      loadAverageEnd: os.loadavg()[0],
      runs,
      results,
    },
    null,
    2,
  )}\n`,
);
say(`written ${out.pathname}`);
