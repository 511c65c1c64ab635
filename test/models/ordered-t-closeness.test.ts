/**
 * Ordered t-closeness walks the SA's values in one order in the builder and in the verifier:
 * numeric when every value is a number, else alphabetical (docs/release-spec.md), whatever the
 * attribute's scale. A numeric-scale SA with an empty cell was sorted numerically by the
 * builder (the empty cell as 0) and alphabetically by the verifier: the release the builder
 * chose failed verification as a bug of ppdp.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { codeCounts } from '../../src/data/table.ts';
import { sensitiveAttributes } from '../../src/models/index.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { saDomain } from '../../src/verify/models.ts';
import { releaseTo } from '../helpers/release.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-ordered-t-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Two ages, a wage with an empty cell: numerically ('' as 0) each age's class is 1/6 from the
 * table, alphabetically ('', 10, 5) 1/3.
 */
function write(scale: string | undefined): string {
  const rows = [
    ...Array(4).fill('20,'),
    ...Array(2).fill('20,10'),
    ...Array(4).fill('30,5'),
    ...Array(2).fill('30,10'),
  ];
  writeFileSync(join(dir, 'table.csv'), `age,wage\n${rows.join('\n')}\n`);
  const spec = join(dir, `release-${scale ?? 'none'}.json`);
  writeFileSync(
    spec,
    JSON.stringify({
      input: 'table.csv',
      attributes: {
        age: { type: 'quasi-identifying', hierarchy: { intervals: [100] } },
        wage: { type: 'sensitive', ...(scale ? { scale } : {}) },
      },
      privacy: [
        { model: 'k-anonymity', k: 2 },
        { model: 't-closeness', attribute: 'wage', t: 0.2, distance: 'ordered' },
      ],
      method: { name: 'generalization', maxSuppression: 0 },
      seed: 1,
    }),
  );
  return spec;
}

describe('ordered t-closeness on an SA with an empty cell', () => {
  for (const scale of ['numeric', 'ordinal', undefined]) {
    it(`the builder walks the verifier's order (scale ${scale ?? 'unset'})`, () => {
      const spec = loadSpec(write(scale));
      const table = readInput(spec);
      const [sa] = sensitiveAttributes(spec, table);
      const column = table.columns.find((c) => c.name === 'wage')!;
      const rows = codeCounts(column);
      const share = new Map(column.dictionary.map((v, c) => [v, rows[c]! / table.rowCount]));
      const domain = saDomain({ table: share, hierarchy: undefined });
      expect(sa!.order.map((c) => column.dictionary[c])).toEqual(
        [...domain.ordered].map((i) => domain.values[i]),
      );
    });
  }

  it('releases what it verifies (scale numeric)', async () => {
    const { report } = await releaseTo(write('numeric'), join(dir, 'out'));
    const t = report.privacy.models.find((m) => m.model === 't-closeness')!;
    expect(t.satisfied).toBe(true);
    // Alphabetically each age's class is 1/3 from the table: the ages are generalized together.
    expect(report.privacy.classes).toBe(1);
  });
});
