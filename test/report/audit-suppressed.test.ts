/**
 * The release audit leaves the rows generalization suppressed and masked (`*` in every
 * quasi-identifier) out of its classes, as the privacy figures do, and names them as the
 * suppressed rows when they give something away: 200 rows, k = 4 with distinct l = 3 on
 * disease, income sensitive but unmodelled, one row suppressed. The audit once counted that row
 * as a class of 1 row (20 classes against the report's 19, "in a class of 1 row" against its
 * k = 5). A sensitive value a model bounds in the classes is measured among the suppressed rows
 * like an unmodelled one: no model bounds it there. One task and over shards, the same audit.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ReleaseReport } from '../../src/contracts/report.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { releaseTo } from '../helpers/release.ts';

const INPUT = new URL('../fixtures/audit/masked-class.csv', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'ppdp-audit-suppressed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeSpec(name: string, method: Record<string, unknown>): string {
  const path = join(dir, `${name}.json`);
  const spec = {
    input: INPUT,
    attributes: {
      age: { type: 'quasi-identifying', hierarchy: { intervals: [5, 10, 20] } },
      sex: { type: 'quasi-identifying', hierarchy: { groups: [{ M: '*', F: '*' }] } },
      zip: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
      disease: { type: 'sensitive' },
      income: { type: 'sensitive' },
    },
    privacy: [
      { model: 'k-anonymity', k: 4 },
      { model: 'distinct-l-diversity', attribute: 'disease', l: 3 },
    ],
    method: { name: 'generalization', ...method },
    seed: 1,
  };
  writeFileSync(path, JSON.stringify(spec, null, 2));
  return path;
}

const release = async (name: string, method: Record<string, unknown>, shards = false) =>
  shards
    ? (
        await executeRelease({
          spec: writeSpec(name, method),
          out: join(dir, name),
          rowsPerShard: 50,
          rowsPerPart: 60,
        })
      ).report
    : (await releaseTo(writeSpec(name, method), join(dir, name))).report;

/** The audit's class figures against the report's own. */
function expectClassesOfReport(report: ReleaseReport): void {
  expect(report.verification.verified).toBe(true);
  expect(report.audit!.classes).toBe(report.privacy.classes);
  for (const c of report.audit!.cautions) {
    if (c.cause === 'sensitive-revealed' && !c.message.includes('suppressed'))
      expect(c.rows).toBeGreaterThanOrEqual(report.privacy.k as number);
  }
}

describe('the audit of a release with suppressed rows masked', () => {
  let masked: ReleaseReport;

  it('counts the masked rows in no class, and names them as the suppressed rows', async () => {
    masked = await release('masked', { maxSuppression: 0.05 });
    expect(masked.rows).toEqual({ input: 200, released: 200, suppressed: 1 });
    expect(masked.privacy.k).toBe(5);
    expect(masked.privacy.classes).toBe(19);
    expectClassesOfReport(masked);
    const audit = masked.audit!;
    // No caution speaks of a class smaller than k.
    expect(masked.verdict!.causes.join('\n')).not.toMatch(/a class of 1 row/);
    // Over the 199 rows of the classes: income makes 32 unique with their class.
    expect(audit.linkage).toEqual({
      columns: ['income'],
      uniqueRows: 32,
      share: 32 / 199,
      contributions: { income: 32 },
    });
    const ofClasses = audit.cautions.filter((c) => !c.message.includes('suppressed row'));
    expect(ofClasses).toEqual([
      {
        cause: 'unique-with-unchanged-column',
        column: 'income',
        value: 32 / 199,
        rows: 32,
        message:
          'income is released unchanged and makes 32 of 199 rows not suppressed (16.08%) unique together with the quasi-identifiers',
      },
    ]);
    // The one suppressed row: whoever can tell who was suppressed reads its income, and its
    // disease too: l-diversity bounds disease in the released classes, and that row is in none.
    const ofSuppressed = audit.cautions.filter((c) => c.message.includes('suppressed row'));
    expect(ofSuppressed.map((c) => [c.cause, c.column, c.rows, c.value])).toEqual([
      ['sensitive-revealed', 'disease', 1, 1],
      ['unique-with-unchanged-column', 'income', 1, 1],
      ['sensitive-revealed', 'income', 1, 1],
    ]);
    expect(ofSuppressed[0]!.message).toBe(
      'disease is sensitive and distinct-l-diversity bounds it in the released classes only: among the 1 suppressed row (every quasi-identifier masked) one value has a share of 100% (≥ 90%), which whoever can tell who was suppressed learns',
    );
    expect(ofSuppressed[2]!.message).toBe(
      'income is sensitive and no privacy model bounds it: among the 1 suppressed row (every quasi-identifier masked) one value has a share of 100% (≥ 90%), which whoever can tell who was suppressed learns',
    );
    expect(masked.verdict!.causes).toEqual([...audit.cautions.map((c) => c.message)]);
  });

  it('gives the same audit over shards and parts', async () => {
    const sharded = await release('masked-shards', { maxSuppression: 0.05 }, true);
    expect(sharded.rows).toEqual(masked.rows);
    expect(sharded.privacy.classes).toBe(19);
    expectClassesOfReport(sharded);
    expect(sharded.audit).toEqual(masked.audit);
    expect(sharded.verdict).toEqual(masked.verdict);
  });

  it('measures the classes as the release that removes its suppressed rows does', async () => {
    const removed = await release('removed', { maxSuppression: 0.05, suppressed: 'remove' });
    expect(removed.rows).toEqual({ input: 200, released: 199, suppressed: 1 });
    expectClassesOfReport(removed);
    expect(removed.audit!.classes).toBe(masked.audit!.classes);
    expect(removed.audit!.linkage).toEqual(masked.audit!.linkage);
    expect(removed.audit!.cautions).toEqual(
      masked
        .audit!.cautions.filter((c) => !c.message.includes('suppressed row'))
        .map((c) => ({
          ...c,
          message: c.message.replace(' not suppressed', ''),
        })),
    );
  });

  it('leaves a release without suppression as it was', async () => {
    for (const shards of [false, true]) {
      const none = await release(`none-${shards}`, { maxSuppression: 0 }, shards);
      expect(none.rows.suppressed).toBe(0);
      expectClassesOfReport(none);
      expect(none.audit!.classes).toBe(12);
      expect(none.audit!.cautions.map((c) => c.message)).toEqual([
        'income is released unchanged and makes 13 of 200 rows (6.5%) unique together with the quasi-identifiers',
      ]);
    }
  });
});
