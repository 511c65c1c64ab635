/**
 * explore.html as an attacker reads it: everything the page embeds (its
 * data JSON) is parsed, every preview cell of every choice and every label an embedded row
 * carries is joined by the row identity the page exposes (its row ids, or the position in the
 * preview), and each reconstructed row is matched against the input. No reconstructed row may
 * be finer than the rows of one feasible choice: it must match at least as many input rows as
 * the smallest class of the feasible choices, and what it shows per quasi-identifier must be
 * no finer than some feasible node's levels.
 */
import { describe, expect, it } from 'vitest';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { prepareGeneralization } from '../../src/methods/generalization/index.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec, withColumnDefaults } from '../../src/release-spec/spec.ts';
import { embeddedData, exploreGrid, type Json, observations } from '../helpers/explore-page.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

describe('explore.html on Adult, read by an attacker', () => {
  it('embeds no row finer than the rows of one feasible choice', async () => {
    const ws = adultWorkspace(); // the whole table: its 4,320-node lattice, every node evaluated
    const data = embeddedData((await exploreGrid(ws)).html);
    const qis: string[] = data.lattice.qis;

    const spec = loadSpec(ws.spec);
    const table = readInput(spec);
    const prepared = prepareGeneralization(withColumnDefaults(spec, table), table, wasmGroupingKernel);
    const label = (qi: number, level: number, row: number) => {
      const h = prepared.hierarchies[qi]!;
      return h.labels[level]![h.levelTables[level]![prepared.qis[qi]!.codes[row]!]!]!;
    };

    // Joined by identity: per row, every label known per quasi-identifier and level.
    const rows = new Map<string, Map<string, string>>();
    for (const o of observations(data)) {
      const known = rows.get(o.identity) ?? new Map<string, string>();
      known.set(`${qis.indexOf(o.column)}/${o.level}`, o.label);
      rows.set(o.identity, known);
    }
    expect(rows.size, 'the page shows some released rows').toBeGreaterThan(0);

    const feasible = (data.choices as Json[]).filter((c) => c.feasible);
    const smallest = Math.min(...feasible.map((c) => c.k as number));
    const nodes = feasible.filter((c) => c.levels).map((c) => c.levels as number[]);
    const finer: string[] = [];
    for (const [identity, known] of rows) {
      const facts = [...known].map(([key, text]) => {
        const [qi, level] = key.split('/').map(Number) as [number, number];
        return { qi, level, text };
      });
      // Input rows that hold every label the page shows for this row.
      let matches = 0;
      for (let r = 0; r < table.rowCount; r++)
        if (facts.every((f) => label(f.qi, f.level, r) === f.text)) matches++;
      // The finest level known per quasi-identifier, against every feasible node.
      const finest = qis.map((_, qi) =>
        Math.min(prepared.hierarchies[qi]!.height, ...facts.filter((f) => f.qi === qi).map((f) => f.level)),
      );
      const covered = nodes.some((n) => n.every((l, qi) => l <= finest[qi]!));
      if (matches < smallest || !covered)
        finer.push(`${identity}: ${matches} matching input rows, levels ${finest.join(',')}`);
    }
    expect(
      finer,
      `${finer.length} of ${rows.size} reconstructed rows are finer than any feasible choice's (smallest class ${smallest})`,
    ).toEqual([]);
  }, 300_000);
});
