/**
 * Regenerates test/golden/adult-generalization.json by exhaustive evaluation of all 4,320
 * nodes of the Adult lattice for every configuration. Run: npx tsx test/golden/generate.ts
 */
import { writeFileSync } from 'node:fs';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { openSearch, prepareGeneralization } from '../../src/methods/generalization/index.ts';
import { exhaustiveSearch } from '../../src/methods/generalization/search.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { ADULT_SPEC, type GoldenRow, KS, METRICS, SUPPRESSIONS } from './adult-configs.ts';

const base = loadSpec(ADULT_SPEC);
const rows: GoldenRow[] = [];
for (const k of KS) {
  for (const maxSuppression of SUPPRESSIONS) {
    for (const metric of METRICS) {
      const spec = {
        ...base,
        privacy: [{ model: 'k-anonymity' as const, k }],
        method: { ...base.method, maxSuppression, metric },
      };
      const prepared = prepareGeneralization(spec, readInput(spec), wasmGroupingKernel);
      const evaluator = openSearch(prepared, wasmGroupingKernel);
      const { best } = exhaustiveSearch(evaluator);
      let feasibleNodes = 0;
      // exhaustiveSearch evaluated every node; count the feasible ones for the record.
      for (let id = 0; id < prepared.problem.lattice.size; id++)
        if (evaluator.evaluate(id).feasible) feasibleNodes++;
      const node = Object.fromEntries(prepared.qis.map((c, i) => [c.name, best.levels[i]!]));
      rows.push({
        k,
        maxSuppression,
        metric,
        node,
        value: best.value,
        suppressedRows: best.suppressedRows,
        feasibleNodes,
      });
      process.stderr.write(`k=${k} sup=${maxSuppression} ${metric}: ${JSON.stringify(node)} ${best.value}\n`);
    }
  }
}
writeFileSync(new URL('./adult-generalization.json', import.meta.url), `${JSON.stringify(rows, null, 1)}\n`);
