/**
 * Regenerates test/golden/adult-privacy.json and test/golden/adult-k-minimal.json by
 * exhaustive evaluation of all 4,320 nodes of the Adult lattice.
 * Run: npx tsx test/golden/generate-privacy.ts
 */
import { writeFileSync } from 'node:fs';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { openSearch, prepareGeneralization } from '../../src/methods/generalization/index.ts';
import { exhaustiveSearch } from '../../src/methods/generalization/search.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec, type PrivacyModelSpec, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import {
  ADULT_SPEC,
  K_MINIMAL_KS,
  K_MINIMAL_SUPPRESSIONS,
  type KMinimalGoldenRow,
  PRIVACY_CONFIGS,
  type PrivacyGoldenRow,
} from './adult-configs.ts';

const base = loadSpec(ADULT_SPEC);
const table = readInput(base);
const withConfig = (privacy: PrivacyModelSpec[], maxSuppression: number): ReleaseSpec =>
  ({ ...base, privacy, method: { ...base.method, maxSuppression } }) as ReleaseSpec;

const privacyRows: PrivacyGoldenRow[] = [];
for (const c of PRIVACY_CONFIGS) {
  const spec = withConfig([{ model: 'k-anonymity', k: 5 }, c.model as PrivacyModelSpec], c.maxSuppression);
  const prepared = prepareGeneralization(spec, table, wasmGroupingKernel);
  const { best } = exhaustiveSearch(openSearch(prepared, wasmGroupingKernel));
  const node = Object.fromEntries(prepared.qis.map((col, i) => [col.name, best.levels[i]!]));
  privacyRows.push({
    name: c.name,
    maxSuppression: c.maxSuppression,
    node,
    value: best.value,
    suppressedRows: best.suppressedRows,
  });
  process.stderr.write(`${c.name} ${c.maxSuppression}: ${JSON.stringify(node)} ${best.value}\n`);
}
writeFileSync(new URL('./adult-privacy.json', import.meta.url), `${JSON.stringify(privacyRows, null, 1)}\n`);

const kMinimalRows: KMinimalGoldenRow[] = [];
for (const k of K_MINIMAL_KS) {
  for (const maxSuppression of K_MINIMAL_SUPPRESSIONS) {
    const prepared = prepareGeneralization(
      withConfig([{ model: 'k-anonymity', k }], maxSuppression),
      table,
      wasmGroupingKernel,
    );
    const evaluator = openSearch(prepared, wasmGroupingKernel);
    const { lattice } = prepared.problem;
    const feasible = Array.from({ length: lattice.size }, (_, id) => evaluator.evaluate(id).feasible);
    const kMinimal: number[][] = [];
    for (let id = 0; id < lattice.size; id++) {
      if (feasible[id] && lattice.predecessors(id).every((p) => !feasible[p]))
        kMinimal.push(lattice.levels(id));
    }
    kMinimalRows.push({ k, maxSuppression, kMinimal });
    process.stderr.write(`k-minimal k=${k} ${maxSuppression}: ${kMinimal.length} nodes\n`);
  }
}
writeFileSync(new URL('./adult-k-minimal.json', import.meta.url), `${JSON.stringify(kMinimalRows)}\n`);
