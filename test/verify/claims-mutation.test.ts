/**
 * Every method's verifier takes the requirements from the spec, never from the claims: for each
 * method a real release is built, then each requirement the claims state is made looser than
 * the spec's (k smaller, l smaller, a weaker l model, τ or ρ2 larger, more suppression, another
 * sensitive attribute) and verification must fail, naming both values. Releases built under a
 * looser spec (the staged files as such a method would stage them) must fail under the strict
 * spec too, with the claims as built and with the claims rewritten to state the strict
 * requirement. The honest release passes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Claims } from '../../src/claims/index.ts';
import { readCsv } from '../../src/data/csv.ts';
import { VerificationError } from '../../src/errors.ts';
import { tsGroupingKernel } from '../../src/kernels/groupby/reference.ts';
import type { MethodReport } from '../../src/methods/method.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { parseSpec, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import { decodeTable } from '../../src/verify/common.ts';
import { pieces, verifierFor } from '../../src/verify/index.ts';
import { buildInMemory, stageBuilt } from '../helpers/release.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-claims-mutation-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A small table: three QIs, two attributes either of which a spec may call sensitive.
const DIAGNOSES = ['flu', 'asthma', 'cancer', 'diabetes', 'migraine', 'burn', 'sprain', 'ulcer'];
const JOBS = ['clerk', 'nurse', 'driver', 'cook', 'teacher', 'welder'];
const ROWS = 600;
{
  let x = 7;
  const next = (n: number) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return (x >>> 8) % n;
  };
  const lines = ['zip,age,sex,diagnosis,job,note'];
  for (let i = 0; i < ROWS; i++) {
    const d = next(10) === 0 ? 0 : next(DIAGNOSES.length);
    lines.push(
      [
        `4790${next(8)}`,
        18 + next(60),
        next(2) ? 'female' : 'male',
        DIAGNOSES[d],
        JOBS[next(6)],
        `n${i % 3}`,
      ].join(','),
    );
  }
  writeFileSync(join(dir, 'table.csv'), `${lines.join('\n')}\n`);
}

type Json = Record<string, unknown>;
const QI = {
  zip: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
  age: { type: 'quasi-identifying', hierarchy: { intervals: [10, 20, 40] }, scale: 'numeric' },
  sex: { type: 'quasi-identifying', hierarchy: { groups: [{ female: '*', male: '*' }] } },
};
/** The attributes with `sa` sensitive and the other candidate insensitive. */
const attributes = (sa: 'diagnosis' | 'job' = 'diagnosis') => ({
  ...QI,
  diagnosis: { type: sa === 'diagnosis' ? 'sensitive' : 'insensitive' },
  job: { type: sa === 'job' ? 'sensitive' : 'insensitive' },
  note: { type: 'insensitive' },
});

let specs = 0;
function spec(json: Json): ReleaseSpec {
  const file = join(dir, `release-${specs++}.json`);
  const full = { input: 'table.csv', attributes: attributes(), seed: 5, ...json };
  writeFileSync(file, JSON.stringify(full));
  return parseSpec(full, file);
}

interface Built {
  readonly spec: ReleaseSpec;
  readonly claims: Claims;
  readonly report: MethodReport;
  readonly at: string;
}

/** The method's release under `s`, staged in a folder of its own. */
function build(s: ReleaseSpec): Built {
  const built = buildInMemory(s, readInput(s), tsGroupingKernel);
  const at = join(dir, `staged-${specs++}`);
  stageBuilt(built, at);
  return { spec: s, claims: built.claims, report: built.report, at };
}

/** `r`'s staged files verified against `against` (the spec it was built for by default). */
function verify(r: Built, against = r.spec, claims: unknown = r.claims) {
  return verifierFor(against.method.name).verify({
    spec: against,
    table: readInput(against),
    claims,
    staged: (name) => join(r.at, name),
  });
}

/** `claims` with the field at `path` set to `value`. */
function withClaim(claims: Claims, path: string, value: unknown): Claims {
  const copy = structuredClone(claims) as unknown as Json;
  const keys = path.split('.');
  let at = copy;
  for (const k of keys.slice(0, -1)) at = at[k] as Json;
  at[keys.at(-1)!] = value;
  return copy as unknown as Claims;
}

/** Verification throws VerificationError whose message matches every pattern. */
function rejects(run: () => unknown, ...patterns: RegExp[]): void {
  let error: unknown;
  try {
    run();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(VerificationError);
  for (const p of patterns) expect((error as Error).message).toMatch(p);
}

/** Each requirement the claims state (`enforced.<field>`), set looser than the spec's, fails naming both. */
function rejectsLooserClaims(r: Built, cases: readonly (readonly [string, unknown, unknown])[]): void {
  for (const [field, value, required] of cases) {
    rejects(
      () => verify(r, r.spec, withClaim(r.claims, `enforced.${field}`, value)),
      NAMES_BOTH(field, value, required),
    );
  }
}

/** The report's achieved value of the spec's model `model`. */
const achieved = (r: Built, model: string, measure: string) =>
  r.report.privacy.models.find((m) => m.model === model)!.achieved[measure]!;

const NAMES_BOTH = (field: string, claimed: unknown, required: unknown) =>
  new RegExp(
    `requirements-as-spec \\(.*the claims state ${field} = ${literal(JSON.stringify(claimed))}, the spec requires ${field} = ${literal(JSON.stringify(required))}`,
  );
const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('generalization', () => {
  const strict = spec({
    privacy: [
      { model: 'k-anonymity', k: 4 },
      { model: 'distinct-l-diversity', attribute: 'diagnosis', l: 2 },
    ],
    method: { name: 'generalization', maxSuppression: 0.02 },
  });
  const honest = build(strict);
  const limit = Math.floor(0.02 * ROWS);

  it('the honest release passes, as a whole and in pieces', () => {
    expect(verify(honest).every((c) => c.passed)).toBe(true);
    expect(inPieces(honest).every((c) => c.passed)).toBe(true);
  });

  it('claims of a smaller k or a larger suppression limit fail, as a whole and in pieces', () => {
    for (const [field, value, required] of [
      ['k', 3, 4],
      ['maxSuppressedRows', limit + 5, limit],
    ] as const) {
      const claims = withClaim(honest.claims, `enforced.${field}`, value);
      rejects(() => verify(honest, strict, claims), NAMES_BOTH(field, value, required));
      rejects(() => inPieces(honest, strict, claims), NAMES_BOTH(field, value, required));
    }
  });

  it('a release that suppressed more than the spec allows fails, whatever limit its claims state', () => {
    const loose = build(
      spec({
        privacy: [{ model: 'k-anonymity', k: 6 }],
        method: { name: 'generalization', maxSuppression: 0.3 },
      }),
    );
    const suppressed = loose.report.rows.suppressed;
    expect(suppressed).toBeGreaterThan(0);
    const none = spec({
      privacy: [{ model: 'k-anonymity', k: 6 }],
      method: { name: 'generalization', maxSuppression: 0 },
    });
    rejects(() => verify(loose, none), NAMES_BOTH('maxSuppressedRows', Math.floor(0.3 * ROWS), 0));
    rejects(() => inPieces(loose, none), /requirements-as-spec/);
    // Claims rewritten to the spec's limit: the staged rows still show the suppression.
    const stated = withClaim(loose.claims, 'enforced.maxSuppressedRows', 0);
    rejects(() => verify(loose, none, stated), new RegExp(`suppression \\(${suppressed} rows suppressed`));
    rejects(() => inPieces(loose, none, stated), /suppression/);
  });

  it('releases built for a smaller k, a smaller l, a larger t or a larger δ fail the spec', () => {
    const cases: [Json, (r: Built) => Json, RegExp][] = [
      [
        { model: 'k-anonymity', k: 2 },
        (r) => ({ model: 'k-anonymity', k: achieved(r, 'k-anonymity', 'k') + 1 }),
        /k-anonymity \(/,
      ],
      [
        { model: 'distinct-l-diversity', attribute: 'diagnosis', l: 2 },
        (r) => ({
          model: 'distinct-l-diversity',
          attribute: 'diagnosis',
          l: achieved(r, 'distinct-l-diversity', 'l') + 1,
        }),
        /distinct-l-diversity \(/,
      ],
      [
        { model: 't-closeness', attribute: 'diagnosis', t: 0.5, distance: 'equal' },
        (r) => ({
          model: 't-closeness',
          attribute: 'diagnosis',
          t: achieved(r, 't-closeness', 't') / 2,
          distance: 'equal',
        }),
        /t-closeness \(/,
      ],
      [
        { model: 'delta-disclosure', attribute: 'diagnosis', delta: 4 },
        (r) => ({
          model: 'delta-disclosure',
          attribute: 'diagnosis',
          delta: achieved(r, 'delta-disclosure', 'delta') / 2,
        }),
        /delta-disclosure \(/,
      ],
    ];
    for (const [loose, stricter, failing] of cases) {
      const method = { name: 'generalization', maxSuppression: 0 };
      const r = build(spec({ privacy: [loose], method }));
      const model = stricter(r);
      const against = spec({ privacy: [model], method });
      // The claims as built (a k that differs fails as such), and restated as the spec's.
      rejects(() => verify(r, against));
      const stated = withClaim(r.claims, 'enforced.k', model.model === 'k-anonymity' ? model.k : 1);
      rejects(() => verify(r, against, stated), failing);
      rejects(() => inPieces(r, against, stated), failing);
    }
  });

  it('a release protecting another sensitive attribute fails the spec', () => {
    const method = { name: 'generalization', maxSuppression: 0 };
    const r = build(
      spec({
        attributes: attributes('job'),
        privacy: [{ model: 'distinct-l-diversity', attribute: 'job', l: 2 }],
        method,
      }),
    );
    // The spec wants diagnosis more diverse than any class of this release is.
    const worst = worstDistinct(r, 'diagnosis');
    const against = spec({
      privacy: [{ model: 'distinct-l-diversity', attribute: 'diagnosis', l: worst + 1 }],
      method,
    });
    rejects(() => verify(r, against), /distinct-l-diversity \(.*\(diagnosis\)/);
  });
});

describe('mondrian', () => {
  const strict = spec({
    privacy: [
      { model: 'k-anonymity', k: 5 },
      { model: 'distinct-l-diversity', attribute: 'diagnosis', l: 2 },
    ],
    method: { name: 'mondrian' },
  });
  const honest = build(strict);

  it('the honest release passes; its claims hold observations only, checked against the files', () => {
    expect(verify(honest).every((c) => c.passed)).toBe(true);
    // A requirement the contract has no field for is refused, not read.
    rejects(() => verify(honest, strict, withClaim(honest.claims, 'k', 1)), /unknown field 'k'/);
    rejects(
      () =>
        verify(
          honest,
          strict,
          withClaim(honest.claims, 'classes', (honest.claims as { classes: number }).classes + 1),
        ),
      /reported-classes/,
    );
  });

  it('releases built for a smaller k or a smaller l fail the spec', () => {
    const loose = build(
      spec({
        privacy: [
          { model: 'k-anonymity', k: 2 },
          { model: 'distinct-l-diversity', attribute: 'diagnosis', l: 2 },
        ],
        method: { name: 'mondrian' },
      }),
    );
    const k = achieved(loose, 'k-anonymity', 'k');
    const l = achieved(loose, 'distinct-l-diversity', 'l');
    for (const [privacy, failing] of [
      [[{ model: 'k-anonymity', k: k + 1 }], /k-anonymity/],
      [[{ model: 'distinct-l-diversity', attribute: 'diagnosis', l: l + 1 }], /distinct-l-diversity/],
    ] as const) {
      rejects(() => verify(loose, spec({ privacy, method: { name: 'mondrian' } })), failing);
    }
  });
});

describe('anatomy', () => {
  const l3 = (sa: 'diagnosis' | 'job', l: number, model = 'distinct-l-diversity') =>
    spec({ attributes: attributes(sa), privacy: [{ model, attribute: sa, l }], method: { name: 'anatomy' } });
  const strict = l3('diagnosis', 3, 'entropy-l-diversity');
  const honest = build(strict);

  it('the honest release passes', () => {
    expect(verify(honest).every((c) => c.passed)).toBe(true);
  });

  it('claims of a smaller l, a weaker model or another sensitive attribute fail', () => {
    rejectsLooserClaims(honest, [
      ['l', 2, 3],
      ['model', 'distinct-l-diversity', 'entropy-l-diversity'],
      ['sensitive', 'job', 'diagnosis'],
    ]);
  });

  it('a release built for a smaller l fails, whatever l its claims state', () => {
    const loose = build(l3('diagnosis', 2));
    const against = l3('diagnosis', 4);
    rejects(() => verify(loose, against), NAMES_BOTH('l', 2, 4));
    rejects(
      () => verify(loose, against, withClaim(loose.claims, 'enforced.l', 4)),
      /l-diversity \(.*l = 4\)/,
    );
  });

  it('a release protecting another sensitive attribute fails, whatever attribute its claims state', () => {
    const other = build(l3('job', 3));
    const against = l3('diagnosis', 3);
    rejects(() => verify(other, against), NAMES_BOTH('sensitive', 'job', 'diagnosis'));
    rejects(
      () => verify(other, against, withClaim(other.claims, 'enforced.sensitive', 'diagnosis')),
      /columns/,
    );
  });
});

describe('slicing', () => {
  const sliced = (sa: 'diagnosis' | 'job', l: number) =>
    spec({
      attributes: attributes(sa),
      privacy: [{ model: 'distinct-l-diversity', attribute: sa, l }],
      method: { name: 'slicing', columns: 2 },
    });
  const strict = sliced('diagnosis', 2);
  const honest = build(strict);

  it('the honest release passes', () => {
    expect(verify(honest).every((c) => c.passed)).toBe(true);
  });

  it('claims of a smaller l or another sensitive attribute fail', () => {
    rejectsLooserClaims(honest, [
      ['l', 1.5, 2],
      ['sensitive', 'job', 'diagnosis'],
    ]);
  });

  it('a release built for a smaller l fails, whatever l its claims state', () => {
    const maxP = achieved(honest, 'distinct-l-diversity', 'maxP');
    const l = Math.ceil(1 / maxP) + 1;
    const against = sliced('diagnosis', l);
    rejects(() => verify(honest, against), NAMES_BOTH('l', 2, l));
    rejects(() => verify(honest, against, withClaim(honest.claims, 'enforced.l', l)), /l-diverse \(/);
  });

  it('a release protecting another sensitive attribute fails the spec', () => {
    const other = build(sliced('job', 2));
    rejects(() => verify(other, strict), NAMES_BOTH('sensitive', 'job', 'diagnosis'));
  });
});

describe('randomization', () => {
  const tau = (value: number, sa: 'diagnosis' | 'job' = 'diagnosis') =>
    spec({
      attributes: attributes(sa),
      privacy: [{ model: 'attribute-disclosure', attribute: sa, tau: value }],
      method: { name: 'randomization', scenario: 'rr-both' },
    });
  const rho = (rho2: number) =>
    spec({
      privacy: [{ model: 'rho-privacy', attribute: 'diagnosis', rho1: 0.2, rho2 }],
      method: { name: 'randomization', scenario: 'rr-s' },
    });
  const strict = tau(0.5);
  const honest = build(strict);
  const honestRho = build(rho(0.5));

  it('the honest releases pass', () => {
    expect(verify(honest).every((c) => c.passed)).toBe(true);
    expect(verify(honestRho).every((c) => c.passed)).toBe(true);
  });

  it('claims of a larger τ, a larger ρ2, no ρ or another sensitive attribute fail', () => {
    rejectsLooserClaims(honest, [
      ['tau', 0.9, 0.5],
      ['sensitive', 'job', 'diagnosis'],
    ]);
    rejectsLooserClaims(honestRho, [
      ['rho', { rho1: 0.2, rho2: 0.9 }, { rho1: 0.2, rho2: 0.5 }],
      ['rho', null, { rho1: 0.2, rho2: 0.5 }],
    ]);
  });

  it('a release built for a larger τ fails, whatever τ its claims state', () => {
    const loose = build(tau(0.9));
    const maxRisk = (loose.claims as { maxRisk: number }).maxRisk;
    const against = tau(maxRisk / 2);
    rejects(() => verify(loose, against), NAMES_BOTH('tau', 0.9, maxRisk / 2));
    rejects(
      () => verify(loose, against, withClaim(loose.claims, 'enforced.tau', maxRisk / 2)),
      /max risk ≤ τ/,
    );
  });

  it('a release built for a larger ρ2 fails, whatever (ρ1, ρ2) its claims state', () => {
    const loose = build(rho(0.9));
    const against = rho(0.3);
    rejects(
      () => verify(loose, against),
      NAMES_BOTH('rho', { rho1: 0.2, rho2: 0.9 }, { rho1: 0.2, rho2: 0.3 }),
    );
    rejects(
      () => verify(loose, against, withClaim(loose.claims, 'enforced.rho', { rho1: 0.2, rho2: 0.3 })),
      /γ-amplification|posteriors within/,
    );
  });

  it('a release protecting another sensitive attribute fails, whatever attribute its claims state', () => {
    const other = build(tau(0.5, 'job'));
    rejects(() => verify(other, strict), NAMES_BOTH('sensitive', 'job', 'diagnosis'));
    rejects(
      () => verify(other, strict, withClaim(other.claims, 'enforced.sensitive', 'diagnosis')),
      /matrices.json attribute order/,
    );
  });
});

/** A generalization release verified as the sharded path does: one input shard, one output part. */
function inPieces(r: Built, against = r.spec, claims: unknown = r.claims) {
  const table = readInput(against);
  const expected = pieces.expectShard(against, claims, table, table);
  const summary = pieces.summarizePart(against, table.delimiter, {
    arrow: join(r.at, 'data.arrow'),
    csv: join(r.at, 'data.csv'),
  });
  return pieces.check(against, table, claims, [expected], [summary]);
}

/** The fewest distinct values of `attribute` in a class of a generalization release without suppression. */
function worstDistinct(r: Built, attribute: string): number {
  const released = decodeTable(readCsv(join(r.at, 'data.csv'), { delimiter: ',' }));
  const column = (name: string) => released.columns[released.names.indexOf(name)]!;
  const qis = ['zip', 'age', 'sex'].map(column);
  const sa = column(attribute);
  const values = new Map<string, Set<string>>();
  sa.forEach((value, row) => {
    const key = qis.map((q) => q[row]).join('\u0000');
    values.set(key, (values.get(key) ?? new Set()).add(value));
  });
  return Math.min(...[...values.values()].map((s) => s.size));
}
