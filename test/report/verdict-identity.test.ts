/**
 * Issue 36: a release that protects nothing is amber, not green (k = 1 alone on the hospital
 * example), and the audit measures the unchanged columns together, as an attacker links on
 * them, not one at a time (src/report/audit.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readTable } from '../../src/data/read.ts';
import { parseSpec } from '../../src/release-spec/spec.ts';
import {
  auditRelease,
  auditReleaseInPartitions,
  cautionLines,
  identityBoundBy,
} from '../../src/report/audit.ts';
import { releaseTo } from '../helpers/release.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-verdict-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const HOSPITAL = new URL('../../examples/hospital/', import.meta.url).pathname;

function hospitalSpec(privacy: unknown[]): string {
  const json = JSON.parse(readFileSync(join(HOSPITAL, 'release.json'), 'utf8'));
  json.input = join(HOSPITAL, 'hospital.csv');
  json.privacy = privacy;
  const path = join(dir, `hospital-${privacy.length}-${JSON.stringify(privacy).length}.json`);
  writeFileSync(path, JSON.stringify(json));
  return path;
}

describe('no model bounds identity disclosure', () => {
  it('k = 1 on the hospital example is amber, the cause named in report.json, report.html and the CLI', async () => {
    const { report, out } = await releaseTo(hospitalSpec([{ model: 'k-anonymity', k: 1 }]), join(dir, 'k1'));
    expect(report.verification.verified).toBe(true);
    expect(report.verdict?.level).toBe('caution');
    const cause = report.audit!.cautions.find((c) => c.cause === 'identity-unbounded')!;
    expect(cause.message).toMatch(/no privacy model bounds identity disclosure \(k-anonymity with k = 1\)/);
    expect(report.verdict!.causes).toContain(cause.message);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toMatch(/Verified, with cautions[\s\S]*no privacy model bounds identity disclosure/);
    expect(html).not.toMatch(/Verified: every privacy guarantee holds/);
    expect(cautionLines(report)).toMatch(/caution: no privacy model bounds identity disclosure/);
  });

  it('k = 5 (the example as written, with its l-diversity on diagnosis) stays green', async () => {
    const { report } = await releaseTo(
      hospitalSpec([
        { model: 'k-anonymity', k: 5 },
        { model: 'distinct-l-diversity', attribute: 'diagnosis', l: 2 },
      ]),
      join(dir, 'k5'),
    );
    expect(report.audit!.cautions.map((c) => c.cause)).not.toContain('identity-unbounded');
    expect(report.verdict?.level).toBe('verified');
  });
});

describe('which models bound identity disclosure: the catalogue says', () => {
  const bound = (...privacy: Record<string, unknown>[]) =>
    identityBoundBy({ privacy } as unknown as Parameters<typeof identityBoundBy>[0]);

  it('(ε, δ)-differential privacy does: every released class holds at least k ≥ 2 sampled rows', () => {
    expect(bound({ model: 'differential-privacy', epsilon: 1, delta: 1e-5, levels: { age: 1 } })).toBe(
      'differential-privacy',
    );
  });

  it('k or l from 2, average risk below 1 do; k = 1, l = 1, t-closeness and δ-disclosure do not', () => {
    expect(bound({ model: 'k-anonymity', k: 2 })).toBe('k-anonymity');
    expect(bound({ model: 'k-map', k: 2, populationSize: 1000 })).toBe('k-map');
    expect(bound({ model: 'entropy-l-diversity', attribute: 'd', l: 2 })).toBe('entropy-l-diversity');
    expect(bound({ model: 'recursive-cl-diversity', attribute: 'd', c: 3, l: 2 })).toBe(
      'recursive-cl-diversity',
    );
    expect(bound({ model: 'average-risk', threshold: 0.5 })).toBe('average-risk');
    expect(
      bound(
        { model: 'k-anonymity', k: 1 },
        { model: 'distinct-l-diversity', attribute: 'd', l: 1 },
        { model: 't-closeness', attribute: 'd', t: 0.2 },
        { model: 'delta-disclosure', attribute: 'd', delta: 1 },
        { model: 'average-risk', threshold: 1 },
      ),
    ).toBeUndefined();
  });
});

describe('the unchanged columns measured together', () => {
  it('is amber when the columns together make most rows unique, though none alone makes one', async () => {
    // Two groups of 16 rows; within each, a and b take 4 values 4 times each, every (a, b) pair once.
    const lines = ['grp,a,b,d'];
    for (const g of ['A', 'B'])
      for (let i = 0; i < 16; i++) lines.push(`${g},a${i % 4},b${Math.floor(i / 4)},d${i % 2}`);
    writeFileSync(join(dir, 'joint.csv'), `${lines.join('\n')}\n`);
    const spec = join(dir, 'joint.json');
    writeFileSync(
      spec,
      JSON.stringify({
        input: 'joint.csv',
        attributes: {
          grp: { type: 'quasi-identifying', hierarchy: { groups: [{ A: '*', B: '*' }] } },
          a: { type: 'insensitive' },
          b: { type: 'insensitive' },
          d: { type: 'insensitive' },
        },
        privacy: [{ model: 'k-anonymity', k: 2 }],
        method: { name: 'generalization', maxSuppression: 0 },
        seed: 1,
      }),
    );
    const { report, out } = await releaseTo(spec, join(dir, 'joint'));
    expect(report.verification.verified).toBe(true);
    // No column alone makes a row unique (< 5 %): the per-column cause does not fire.
    expect(report.audit!.cautions.filter((c) => c.cause === 'unique-with-unchanged-column')).toEqual([]);
    expect(report.audit!.linkage).toEqual({
      columns: ['a', 'b', 'd'],
      uniqueRows: 32,
      share: 1,
      contributions: { a: 32, b: 32, d: 0 },
    });
    expect(report.verdict?.level).toBe('caution');
    const joint = report.audit!.cautions.find((c) => c.cause === 'unique-with-unchanged-columns')!;
    expect(joint.message).toBe(
      'together, the columns released unchanged (a, b, d) make 32 of 32 rows (100%) unique with the quasi-identifiers; rows that stop being unique when one column alone is left out: a 32, b 32, d 0',
    );
    expect(report.verdict!.causes).toContain(joint.message);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toMatch(
      /Verified, with cautions[\s\S]*together, the columns released unchanged \(a, b, d\)/,
    );
  });

  it('a contribution counts the rows only that column keeps unique: 0 when any two columns suffice', () => {
    // One class of 16 rows; a, b, c a Latin square: any two of them single out every row.
    const lines = ['grp,a,b,c'];
    for (let i = 0; i < 16; i++)
      lines.push(`*,a${i % 4},b${Math.floor(i / 4)},c${(i + Math.floor(i / 4)) % 4}`);
    writeFileSync(join(dir, 'latin.csv'), `${lines.join('\n')}\n`);
    const spec = parseSpec(
      {
        input: 'latin.csv',
        attributes: {
          grp: { type: 'quasi-identifying', hierarchy: { groups: [{ '*': '*' }] } },
          a: { type: 'insensitive' },
          b: { type: 'insensitive' },
          c: { type: 'insensitive' },
        },
        privacy: [{ model: 'k-anonymity', k: 2 }],
        method: { name: 'generalization' },
      },
      join(dir, 'latin.json'),
    );
    const table = readTable(join(dir, 'latin.csv'));
    const audit = auditRelease(spec, table, table.rowCount, table);
    expect(audit.linkage).toEqual({
      columns: ['a', 'b', 'c'],
      uniqueRows: 16,
      share: 1,
      contributions: { a: 0, b: 0, c: 0 },
    });
    // One class, but the input's own (grp has one value, nothing generalized): it does not keep
    // nothing. No column alone makes a row unique.
    expect(audit.cautions.map((c) => c.cause)).toEqual(['unique-with-unchanged-columns']);
  });

  it('a release too large to hold at once is audited partition by partition, with the same figures', async () => {
    const { report, out } = await releaseTo(join(dir, 'joint.json'), join(dir, 'joint-again'));
    const spec = parseSpec(
      JSON.parse(readFileSync(join(dir, 'joint.json'), 'utf8')),
      join(dir, 'joint.json'),
    );
    const input = readTable(join(dir, 'joint.csv'));
    const staged = readTable(join(out, 'data.arrow'));
    // Three "parts" of the staged rows, read once per partition.
    const cut = [0, 7, 20, 32];
    const part = (i: number) => ({
      ...staged,
      rowCount: cut[i + 1]! - cut[i]!,
      columns: staged.columns.map((c) => ({ ...c, codes: c.codes.slice(cut[i]!, cut[i + 1]!) })),
    });
    for (const partitions of [1, 2, 5])
      expect(auditReleaseInPartitions(spec, input, input.rowCount, 3, part, partitions)).toEqual(
        report.audit,
      );
  });
});
