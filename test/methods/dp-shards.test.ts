/**
 * (ε, δ)-differential privacy over shards: each shard holds the secret sample its scan drew, the
 * shards' counts are merged and searched once, each shard suppresses the classes under k, and
 * the verifier in pieces matches the released rows to the sample's, counts the sample and weighs
 * it against the input's rows. The slices here are built with the shard steps the pipeline runs
 * (a seeded sample stands in for the secret one, so that each tamper is the only change), then
 * the whole run through the local engine over four shards.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dpBudget, dpParameters } from '../../src/catalogue/dp-parameters.ts';
import type { ClaimsOf } from '../../src/claims/index.ts';
import { encodeArrow } from '../../src/data/arrow.ts';
import { encodeCsv } from '../../src/data/csv.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { generalizationShards } from '../../src/methods/generalization/shards.ts';
import type { ShardTuples } from '../../src/methods/method.ts';
import { sampledTable, sampleRows } from '../../src/models/differential-privacy.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { readInput } from '../../src/pipeline/release.ts';
import type { ReleaseSpec } from '../../src/release-spec/spec.ts';
import { Random } from '../../src/util/random.ts';
import { pieces } from '../../src/verify/index.ts';
import { ADULT_DP_LEVELS, adultDpSpec } from '../helpers/adult-dp.ts';
import { failedChecks } from '../helpers/verify.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-dp-shards-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LEVELS = ADULT_DP_LEVELS;
const FIXED = { model: 'differential-privacy', epsilon: 2, delta: 1e-5, levels: LEVELS };
const SEARCHED = { model: 'differential-privacy', epsilon: 2, delta: 1e-5, searchBudget: 0.1, steps: 20 };
const SHARDS = 4;

function adultSpec(privacy: unknown[], method: Record<string, unknown> = {}): ReleaseSpec {
  return adultDpSpec(dir, privacy, method);
}

const table = readInput(adultSpec([FIXED]));
const n = table.rowCount;

/** The input cut in SHARDS runs of rows, each sampled with probability `beta` (seeded). */
function sampledShards(beta: number, seed: number): EncodedTable[] {
  const kept = sampleRows(n, beta, new Random(seed));
  const per = Math.ceil(n / SHARDS);
  return Array.from({ length: SHARDS }, (_, s) =>
    sampledTable(
      table,
      kept.map((k, r) => (r >= s * per && r < (s + 1) * per ? k : 0)),
    ),
  );
}

/** A release over `shards` as the pipeline's states build it: count, one search, apply; one part per shard. */
async function releaseShards(
  spec: ReleaseSpec,
  shards: readonly EncodedTable[],
  tamperFlags?: (flags: Uint8Array[]) => void,
) {
  const steps = generalizationShards;
  const counts: ShardTuples[] = shards.map((s) => steps.count(spec, s, wasmGroupingKernel));
  const found = await steps.search(
    { spec, table, kernel: wasmGroupingKernel, time: (_, work) => work(), say: () => {} },
    { shards: shards.length, read: async (s) => counts[s]!, inputRows: n },
  );
  tamperFlags?.(found.flags);
  const at = join(dir, `parts-${Math.random().toString(36).slice(2)}`);
  mkdirSync(at);
  const parts = shards.map((shard, s) => {
    const flags = found.flags[s]!;
    const rowToTuple = counts[s]!.rowToTuple;
    const suppressedRow = Uint8Array.from(rowToTuple, (t) => flags[t]!);
    const columns = steps.apply(spec, shard, found.node, suppressedRow);
    const files = { arrow: join(at, `part-${s}.arrow`), csv: join(at, `part-${s}.csv`) };
    writeFileSync(files.arrow, encodeArrow(columns));
    writeFileSync(files.csv, encodeCsv(columns, table.delimiter, spec.format));
    return files;
  });
  const claims = found.claims as ClaimsOf<'generalization'>;
  const verify = (c: unknown = claims, against = spec, inputRows: number | null = n) =>
    pieces.check(
      against,
      table,
      c,
      shards.map((shard) => pieces.expectShard(against, c, shard, table)),
      parts.map((files) => pieces.summarizePart(against, table.delimiter, files)),
      inputRows ?? undefined,
    );
  return { claims, report: found.report, verify };
}

describe('a differentially private release over shards, the node fixed', async () => {
  const spec = adultSpec([FIXED]);
  const { beta, k } = dpParameters(2, 1e-5);
  const shards = sampledShards(beta, 7);
  const sampled = shards.reduce((m, s) => m + s.rowCount, 0);
  const built = await releaseShards(spec, shards);

  it('searches the shards’ sample, suppresses its classes under k, and verifies in pieces', () => {
    expect(built.claims.node).toEqual(LEVELS);
    expect(built.claims.dp).toEqual({ beta, k, sampledRows: sampled });
    expect(built.claims.minClassSize).toBeGreaterThanOrEqual(k);
    expect(built.claims.suppressedRows).toBeGreaterThan(0);
    const checks = built.verify();
    expect(checks.every((c) => c.passed)).toBe(true);
    expect(checks.map((c) => c.name)).toEqual(
      expect.arrayContaining(['dp-accounting', 'dp-search-budget', 'differential-privacy', 'suppression']),
    );
    const section = built.report.sections!.find((s) => s.title === '(ε, δ)-differential privacy')!;
    expect(Object.fromEntries(section.facts)).toMatchObject({
      'Input rows': n,
      'Rows sampled': sampled,
      'Sampled rows suppressed (classes under k)': built.claims.suppressedRows,
      'Sampling probability β': beta,
      'Class size threshold k (derived from ε and δ)': k,
    });
  });

  it('fails when the input’s rows are not given: the sample would stand for the whole input', () => {
    // The claims' suppression limit is the input's rows, the sample's would be smaller.
    expect(failedChecks(() => built.verify(built.claims, spec, null))).toContain('requirements-as-spec');
  });

  it('fails claims of another sample size than the shards hold', () => {
    const more = { ...built.claims, dp: { ...built.claims.dp!, sampledRows: sampled + 1 } };
    expect(failedChecks(() => built.verify(more))).toContain('dp-accounting');
  });

  it('fails a sample drawn with a larger β', async () => {
    // Drawn at ε = 3's β (≈ 0.95) and released under the ε = 2 spec (β ≈ 0.86): the claims
    // state the spec's β and k, the classes hold k, and only the sample's size gives it away.
    const larger = sampledShards(dpParameters(3, 1e-5).beta, 8);
    expect(larger.reduce((m, s) => m + s.rowCount, 0)).toBeGreaterThan(beta * n + 1000);
    const tampered = await releaseShards(spec, larger);
    expect(failedChecks(() => tampered.verify())).toEqual(['dp-accounting']);
  });

  it('fails a release with a class under k', async () => {
    // The shards suppress nothing: the classes under k are released, and the claims say so.
    const lax = await releaseShards(spec, shards, (flags) => {
      for (const f of flags) f.fill(0);
    });
    const claims = { ...lax.claims, suppressedRows: 0, minClassSize: 1 };
    const failed = failedChecks(() => lax.verify(claims));
    expect(failed).toContain('differential-privacy');
    // As built (their suppression claimed), the rows released disagree with the claims too.
    expect(failedChecks(() => lax.verify())).toEqual(
      expect.arrayContaining(['suppression', 'dp-accounting', 'differential-privacy']),
    );
  });
});

describe('a differentially private release over shards with a private search', async () => {
  const spec = adultSpec([SEARCHED], { metric: 'loss' });
  const split = dpBudget(2, { searchBudget: 0.1, steps: 20 });
  const { beta, k } = dpParameters(split.epsilonAnon, 1e-5);
  const built = await releaseShards(spec, sampledShards(beta, 9));

  it('searches within its share and verifies', () => {
    expect(built.claims.dp).toMatchObject({
      beta,
      k,
      search: { epsilon: split.epsilonSearch, stepEpsilon: split.stepEpsilon, stepsTaken: 20 },
    });
    expect(built.verify().every((c) => c.passed)).toBe(true);
  });

  it('fails a search that spent more than its share', () => {
    const search = built.claims.dp!.search!;
    const over = { ...built.claims, dp: { ...built.claims.dp!, search: { ...search, stepsTaken: 21 } } };
    expect(failedChecks(() => built.verify(over))).toContain('dp-search-budget');
    const dearer = {
      ...built.claims,
      dp: { ...built.claims.dp!, search: { ...search, stepEpsilon: 2 * search.stepEpsilon } },
    };
    expect(failedChecks(() => built.verify(dearer))).toContain('dp-search-budget');
  });
});

describe('through the local engine over four shards', () => {
  it('samples per shard, verifies, and reports ε, δ, β, k and the rows sampled of the input', async () => {
    const spec = adultSpec([{ ...FIXED, epsilon: 1, delta: 1e-6 }]);
    const out = join(dir, 'engine-out');
    const lines: string[] = [];
    const { report, manifest } = await executeRelease(
      { spec: spec.file, out, shards: SHARDS },
      { progress: (line) => lines.push(line) },
    );
    expect(report.verification.verified).toBe(true);
    expect(manifest.verified).toBe(true);
    // Four shards, counted and checked apart: the release ran over shards, not as one task.
    expect(lines.some((l) => l.includes(`${SHARDS} shards`))).toBe(true);
    expect(report.timings['check-shard']).toBeDefined();
    const checks = report.verification.checks.map((c) => c.name);
    expect(checks).toEqual(expect.arrayContaining(['dp-accounting', 'differential-privacy']));
    const { beta, k } = dpParameters(1, 1e-6);
    const facts = Object.fromEntries(
      report.sections!.find((x) => x.title === '(ε, δ)-differential privacy')!.facts,
    ) as Record<string, number>;
    expect(facts).toMatchObject({
      'Input rows': n,
      'Sampling probability β': beta,
      'Class size threshold k (derived from ε and δ)': k,
      'Smallest released class (rows)': report.privacy.k,
    });
    const drawn = facts['Rows sampled']!;
    expect(Math.abs(drawn - beta * n)).toBeLessThanOrEqual(6 * Math.sqrt(n * beta * (1 - beta)) + 1);
    // Released rows: the sample less its suppressed classes, the unsampled rows never stored.
    const released = readFileSync(join(out, 'data.csv'), 'utf8').trim().split('\n').length - 1;
    expect(released).toBe(drawn - facts['Sampled rows suppressed (classes under k)']!);
  }, 300_000);

  it('samples a column that passes through (held as bytes in the shards) with its rows', async () => {
    const spec = adultSpec([FIXED]);
    const json = JSON.parse(readFileSync(spec.file, 'utf8'));
    json.attributes.occupation = { type: 'insensitive' };
    writeFileSync(spec.file, JSON.stringify(json));
    const out = join(dir, 'engine-pass-through');
    const { report } = await executeRelease({ spec: spec.file, out, shards: SHARDS });
    expect(report.verification.verified).toBe(true);
  }, 300_000);

  it('a small input without shards asked for is sampled once, in one task, from every input row', async () => {
    const spec = adultSpec([FIXED]);
    const lines: string[] = [];
    const { report } = await executeRelease(
      { spec: spec.file, out: join(dir, 'engine-one-task') },
      { progress: (line) => lines.push(line) },
    );
    expect(report.verification.verified).toBe(true);
    expect(lines.some((l) => / shards /.test(l))).toBe(false);
    const facts = Object.fromEntries(
      report.sections!.find((x) => x.title === '(ε, δ)-differential privacy')!.facts,
    ) as Record<string, number>;
    // Sampled once: a second draw over the first's rows would leave about β² of them.
    const { beta } = dpParameters(2, 1e-5);
    expect(facts['Input rows']).toBe(n);
    expect(Math.abs(facts['Rows sampled']! - beta * n)).toBeLessThanOrEqual(
      6 * Math.sqrt(n * beta * (1 - beta)) + 1,
    );
  }, 300_000);

  it('refuses a spec whose sampling the method cannot honour before any shard is read', async () => {
    const spec = adultSpec([FIXED], { maxSuppression: 0.5 });
    await expect(
      executeRelease({ spec: spec.file, out: join(dir, 'engine-refused'), shards: SHARDS }),
    ).rejects.toThrow(/suppresses every class under k/);
  });
});
