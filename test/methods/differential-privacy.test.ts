/**
 * (ε, δ)-differential privacy by sampling and generalization (issue 37): β and k against ARX
 * 3.9.2 live (test/arx/DpRun.java, its ParameterCalculation), the release on Adult at a node
 * fixed in advance (sampled from a secret stream, classes under k removed) passing the
 * independent verifier, and the verifier failing a release whose claims state another β or
 * which holds a class under k.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dpParameters } from '../../src/catalogue/dp-parameters.ts';
import type { ClaimsOf } from '../../src/claims/index.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { buildGeneralization } from '../../src/methods/generalization/index.ts';
import { sampleRows } from '../../src/models/differential-privacy.ts';
import { readInput, streams } from '../../src/pipeline/release.ts';
import { loadSpec, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import { Random } from '../../src/util/random.ts';
import { verifierFor } from '../../src/verify/index.ts';
import { releaseTo } from '../helpers/release.ts';
import { ARX_LIB, requires } from '../helpers/requires.ts';
import { failedChecks } from '../helpers/verify.ts';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);
const peer = requires('arx');
const dir = mkdtempSync(join(tmpdir(), 'ppdp-dp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const EPSILONS = [0.5, 1, 2, 3];
const DELTAS = ['1e-4', '1e-5', '1e-6'];
const PAIRS = EPSILONS.flatMap((e) => DELTAS.map((d) => `${e}:${d}`));

function bitsOf(v: number): string {
  const b = new Float64Array([v]);
  return new BigUint64Array(b.buffer)[0]!.toString(16);
}

/** ARX's (β bits, k) per `ε:δ`, with extra JVM flags. */
function arx(classes: string, flags: string[]): Map<string, { bits: string; beta: number; k: number }> {
  const run = spawnSync('java', [...flags, '-cp', `${ARX_LIB}/*:${classes}`, 'DpRun', ...PAIRS], {
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`ARX failed: ${run.stderr}`);
  return new Map(
    run.stdout
      .trim()
      .split('\n')
      .map((line) => line.split('\t'))
      .map((f) => [`${f[0]}:${f[1]}`, { bits: f[2]!, beta: Number(f[3]), k: Number(f[4]) }]),
  );
}

peer.describe('β and k against ARX 3.9.2, live', () => {
  let classes: string;
  beforeAll(() => {
    classes = join(dir, 'classes');
    const javac = spawnSync(
      'javac',
      ['-cp', `${ARX_LIB}/*`, '-d', classes, join(ROOT, 'test/arx/DpRun.java')],
      {
        encoding: 'utf8',
      },
    );
    if (javac.status !== 0) throw new Error(`javac failed: ${javac.stderr}`);
  }, 120_000);

  // HotSpot's Math.exp/log/pow intrinsics are not fdlibm's: ARX's β may then lie one ulp off
  // V8's (ε = 1 on x86-64: Math.exp(−1) one ulp below the correctly rounded value). Without
  // them (fdlibm, as V8), ARX's β is ppdp's to the bit.
  it('ε ∈ {0.5, 1, 2, 3} × δ ∈ {1e-4, 1e-5, 1e-6}: k equal, β bit-equal under fdlibm', () => {
    const fdlibm = arx(classes, ['-XX:+UnlockDiagnosticVMOptions', '-XX:-UseLibmIntrinsic']);
    for (const pair of PAIRS) {
      const [e, d] = pair.split(':').map(Number) as [number, number];
      const ours = dpParameters(e, d);
      expect({ pair, bits: bitsOf(ours.beta), k: ours.k }).toEqual({
        pair,
        bits: fdlibm.get(pair)!.bits,
        k: fdlibm.get(pair)!.k,
      });
    }
  }, 600_000);

  it('ARX with its default JVM: k equal, β within one ulp', () => {
    const hotspot = arx(classes, []);
    for (const pair of PAIRS) {
      const [e, d] = pair.split(':').map(Number) as [number, number];
      const ours = dpParameters(e, d);
      const theirs = hotspot.get(pair)!;
      expect({ pair, k: ours.k }).toEqual({ pair, k: theirs.k });
      const ulps = Number(BigInt(`0x${bitsOf(ours.beta)}`) - BigInt(`0x${theirs.bits}`));
      expect(Math.abs(ulps)).toBeLessThanOrEqual(1);
    }
  }, 600_000);
});

describe('the derivation', () => {
  it('β = 1 − e^(−ε) from below, k grows as δ shrinks and as ε grows', () => {
    const p = dpParameters(1, 1e-5);
    expect(p.beta).toBeLessThanOrEqual(1 - Math.exp(-1));
    expect(p.beta).toBeGreaterThan(1 - Math.exp(-1) - 1e-15);
    expect(dpParameters(1, 1e-6).k).toBeGreaterThan(p.k);
    expect(dpParameters(2, 1e-5).k).toBeGreaterThan(p.k);
  });

  it('sampling keeps each row with probability β', () => {
    const kept = sampleRows(200_000, 0.3, new Random(5));
    const n = kept.reduce((s, v) => s + v, 0);
    expect(Math.abs(n / 200_000 - 0.3)).toBeLessThan(0.01);
  });
});

const LEVELS = {
  sex: 0,
  age: 2,
  race: 1,
  'marital-status': 1,
  education: 2,
  'native-country': 2,
  workclass: 1,
  'salary-class': 0,
};

function adultSpec(privacy: unknown[], method: Record<string, unknown> = {}): ReleaseSpec {
  const spec = JSON.parse(readFileSync(join(ROOT, 'examples/adult/release.json'), 'utf8'));
  spec.privacy = privacy;
  spec.method = { name: 'generalization', metric: 'ncp', maxSuppression: 1, suppressed: 'remove', ...method };
  const at = join(dir, `spec-${Math.random().toString(36).slice(2)}`);
  mkdirSync(at);
  for (const f of ['adult.csv', ...Object.keys(spec.attributes).map((a) => `adult_hierarchy_${a}.csv`)])
    writeFileSync(join(at, f), readFileSync(join(ROOT, 'examples/adult', f)));
  writeFileSync(join(at, 'release.json'), JSON.stringify(spec));
  return loadSpec(join(at, 'release.json'));
}

function build(spec: ReleaseSpec, table: EncodedTable) {
  return buildGeneralization({
    spec,
    table,
    kernel: wasmGroupingKernel,
    time: (_, work) => work(),
    say: () => {},
    random: streams(spec, table),
  });
}

function stage(built: ReturnType<typeof build>): (name: string) => string {
  const folder = join(dir, `s${Math.random().toString(36).slice(2)}`);
  mkdirSync(folder);
  for (const f of built.files) writeFileSync(join(folder, f.name), f.content);
  return (name) => join(folder, name);
}

describe('a differentially private release of Adult', () => {
  const DP = { model: 'differential-privacy', epsilon: 2, delta: 1e-5, levels: LEVELS };
  const spec = adultSpec([DP]);
  const table = readInput(spec);
  const built = build(spec, table);
  const staged = stage(built);
  const claims = built.claims as ClaimsOf<'generalization'>;
  const verify = (c: unknown, s = spec) =>
    verifierFor('generalization').verify({ spec: s, table, claims: c, staged });

  it('samples with ARX’s β, releases the node fixed in advance, removes every class under k, and verifies', () => {
    const { beta, k } = dpParameters(2, 1e-5);
    expect(claims.dp).toMatchObject({ beta, k });
    expect(claims.node).toEqual(LEVELS);
    const sampled = claims.dp!.sampledRows;
    // 30162 rows, β ≈ 0.865: the sample within 6 standard deviations of its mean.
    expect(Math.abs(sampled - beta * table.rowCount)).toBeLessThan(
      6 * Math.sqrt(table.rowCount * beta * (1 - beta)),
    );
    expect(claims.minClassSize).toBeGreaterThanOrEqual(k);
    const checks = verify(claims);
    expect(checks.every((c) => c.passed)).toBe(true);
    expect(checks.map((c) => c.name)).toEqual(
      expect.arrayContaining(['dp-accounting', 'differential-privacy']),
    );
    const section = built.report.sections!.find((s) => s.title === '(ε, δ)-differential privacy')!;
    expect(Object.fromEntries(section.facts)).toMatchObject({
      ε: 2,
      δ: 1e-5,
      'Sampling probability β': beta,
      'Smallest released class k': k,
      'Rows sampled': sampled,
      'Sampled rows suppressed (classes under k)': claims.suppressedRows,
    });
  });

  it('is not reproducible from the spec’s seed: two runs draw different samples', () => {
    const again = build(spec, table).claims as ClaimsOf<'generalization'>;
    // Two independent samples of 30162 rows agree in size with probability ≈ 1/(√(2π)·59) < 1 %;
    // the released rows then differ too.
    const a = built.files.find((f) => f.name === 'data.csv')!.content;
    const b = build(spec, table).files.find((f) => f.name === 'data.csv')!.content;
    expect(
      again.dp!.sampledRows !== claims.dp!.sampledRows ||
        Buffer.compare(Buffer.from(a), Buffer.from(b)) !== 0,
    ).toBe(true);
  });

  it('claims stating another β, another k or another sample fail the verifier', () => {
    const other = { ...claims, dp: { ...claims.dp!, beta: dpParameters(1, 1e-5).beta } };
    expect(failedChecks(() => verify(other))).toContain('dp-accounting');
    const otherK = { ...claims, dp: { ...claims.dp!, k: claims.dp!.k - 1 } };
    expect(failedChecks(() => verify(otherK))).toContain('dp-accounting');
    const moreSampled = { ...claims, dp: { ...claims.dp!, sampledRows: claims.dp!.sampledRows + 1 } };
    expect(failedChecks(() => verify(moreSampled))).toContain('dp-accounting');
    const noDp = { ...claims, dp: undefined };
    expect(failedChecks(() => verify(noDp))).toContain('dp-accounting');
  });

  it('a spec with a smaller δ (a larger k) fails the release made for the looser one', () => {
    // The verifier reads (ε, δ) from the spec: k for δ = 1e-12 exceeds the released classes'.
    const strict = adultSpec([{ ...DP, delta: 1e-12 }]);
    expect(dpParameters(2, 1e-12).k).toBeGreaterThan(claims.minClassSize);
    const failed = failedChecks(() => verify(claims, strict));
    expect(failed).toContain('differential-privacy');
    expect(failed).toContain('dp-accounting');
  });

  it('a release with a class under k fails the verifier', () => {
    // The same sample's node under k-anonymity k = 2 (the method's own path): classes under the
    // DP k are then released, and the DP spec's verifier finds them.
    const loose = adultSpec([{ model: 'k-anonymity', k: 2 }]);
    const lax = buildGeneralization(
      {
        spec: loose,
        table,
        kernel: wasmGroupingKernel,
        time: (_, w) => w(),
        say: () => {},
        random: streams(loose, table),
      },
      LEVELS,
    );
    const laxClaims = lax.claims as ClaimsOf<'generalization'>;
    expect(laxClaims.minClassSize).toBeLessThan(dpParameters(2, 1e-5).k);
    const s = stage(lax);
    const failed = failedChecks(() =>
      verifierFor('generalization').verify({
        spec,
        table,
        claims: {
          ...laxClaims,
          enforced: claims.enforced,
          dp: { ...claims.dp!, sampledRows: table.rowCount },
        },
        staged: s,
      }),
    );
    expect(failed).toContain('differential-privacy');
  });

  it('refuses a spec that would keep suppressed rows or search the node from the data', () => {
    expect(() => build(adultSpec([DP], { maxSuppression: 0.5 }), table)).toThrow(
      /suppresses every class under k/,
    );
    expect(() => build(adultSpec([DP], { suppressed: 'mask' }), table)).toThrow(
      /suppresses every class under k/,
    );
    const partial = { ...DP, levels: { age: 1 } };
    expect(() => build(adultSpec([partial]), table)).toThrow(/levels/);
  });
});

describe('through the release pipeline', () => {
  it('runs as one task (never over shards), verifies, and reports ε, δ, β, k and the rows', async () => {
    const spec = adultSpec([{ model: 'differential-privacy', epsilon: 1, delta: 1e-6, levels: LEVELS }]);
    const out = join(dir, 'pipeline-out');
    const { report } = await releaseTo(spec.file, out);
    expect(report.verification.verified).toBe(true);
    const { beta, k } = dpParameters(1, 1e-6);
    const facts = Object.fromEntries(
      report.sections!.find((x) => x.title === '(ε, δ)-differential privacy')!.facts,
    );
    expect(facts).toMatchObject({ 'Sampling probability β': beta, 'Smallest released class k': k });
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('differential privacy');
  }, 300_000);
});
