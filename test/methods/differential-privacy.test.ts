/**
 * (ε, δ)-differential privacy by sampling and generalization: β and k against ARX 3.9.2 live
 * (test/arx/DpRun.java, its ParameterCalculation, both JVMs at once) and against recorded β bits,
 * k and binomial-tail interval ends, the split of ε with a private search, the
 * exponential mechanism's draw, the release on Adult at a node fixed in advance and at a node
 * the private search draws (sampled from the secret generator, classes under k removed) passing
 * the independent verifier, and the verifier failing a release whose claims state another β,
 * whose sample was drawn with another β, which holds a class under k, or whose search spent
 * more than the spec gives it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dpSplit } from '../../src/catalogue/differential-privacy.ts';
import {
  binomialTail,
  binomialTailReference,
  derive,
  deriveSummingEvery,
  dpBudget,
  dpParameters,
  nextAfter,
  nextUpByBits,
  tailAbove,
} from '../../src/catalogue/dp-parameters.ts';
import type { ClaimsOf } from '../../src/claims/index.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { NoSolutionError, SpecError } from '../../src/errors.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { dpSearch, exponentialMechanism } from '../../src/methods/generalization/dp-search.ts';
import {
  buildGeneralization,
  openSearch,
  prepareGeneralization,
} from '../../src/methods/generalization/index.ts';
import {
  SecretDraws,
  sampledRowIndices,
  sampledTable,
  sampleRows,
  uniform,
} from '../../src/models/differential-privacy.ts';
import { readInput, streams } from '../../src/pipeline/release.ts';
import type { ReleaseSpec } from '../../src/release-spec/spec.ts';
import { Random } from '../../src/util/random.ts';
import { verifierFor } from '../../src/verify/index.ts';
import { ADULT_DP_LEVELS, adultDpSpec } from '../helpers/adult-dp.ts';
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

type ArxPairs = Map<string, { bits: string; beta: number; k: number }>;

/** ARX's (β bits, k) per `ε:δ`, with extra JVM flags: one JVM for the whole grid, not waited on. */
function arx(classes: string, flags: string[]): Promise<ArxPairs> {
  const jvm = spawn('java', [...flags, '-cp', `${ARX_LIB}/*:${classes}`, 'DpRun', ...PAIRS]);
  let stdout = '';
  let stderr = '';
  jvm.stdout.on('data', (d) => (stdout += d));
  jvm.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    jvm.on('error', reject);
    jvm.on('close', (status) => {
      if (status !== 0) return reject(new Error(`ARX failed: ${stderr}`));
      resolve(
        new Map(
          stdout
            .trim()
            .split('\n')
            .map((line) => line.split('\t'))
            .map((f) => [`${f[0]}:${f[1]}`, { bits: f[2]!, beta: Number(f[3]), k: Number(f[4]) }]),
        ),
      );
    });
  });
}

peer.describe('β and k against ARX 3.9.2, live', () => {
  let classes: string;
  let fdlibm: Promise<ArxPairs>;
  let hotspot: Promise<ArxPairs>;
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
    // ARX's derivation takes most of a minute per JVM: both JVMs run at once, one per core.
    fdlibm = arx(classes, ['-XX:+UnlockDiagnosticVMOptions', '-XX:-UseLibmIntrinsic']);
    hotspot = arx(classes, []);
    // Settled here so that a failure is the test's, not an unhandled rejection.
    fdlibm.catch(() => {});
    hotspot.catch(() => {});
  }, 120_000);

  // HotSpot's Math.exp/log/pow intrinsics are not fdlibm's: ARX's β may then lie one ulp off
  // V8's (ε = 1 on x86-64: Math.exp(−1) one ulp below the correctly rounded value). Without
  // them (fdlibm, as V8), ARX's β is ppdp's to the bit.
  it('ε ∈ {0.5, 1, 2, 3} × δ ∈ {1e-4, 1e-5, 1e-6}: k equal, β bit-equal under fdlibm', async () => {
    const theirs = await fdlibm;
    for (const pair of PAIRS) {
      const [e, d] = pair.split(':').map(Number) as [number, number];
      const ours = dpParameters(e, d);
      expect({ pair, bits: bitsOf(ours.beta), k: ours.k }).toEqual({
        pair,
        bits: theirs.get(pair)!.bits,
        k: theirs.get(pair)!.k,
      });
    }
  }, 600_000);

  it('ARX with its default JVM: k equal, β within one ulp', async () => {
    const pairs = await hotspot;
    for (const pair of PAIRS) {
      const [e, d] = pair.split(':').map(Number) as [number, number];
      const ours = dpParameters(e, d);
      const theirs = pairs.get(pair)!;
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

  // Recorded from the object-per-step interval derivation the live test above held to ARX's:
  // the derivation on bare doubles must give the same β to the bit and the same k, with and
  // without the remembered Stirling terms (the first call of a larger n grows their tables).
  it('gives the β bits and k recorded for pairs the live grid does not cover', () => {
    const recorded: [string, string, number][] = [
      ['0.1:0.001', '3fb85c933156a61f', 27],
      ['0.5:1e-8', '3fd92e9a0720d3e9', 88],
      ['0.9:0.00001', '3fe2fd619ffbc8ef', 59],
      ['1.8:0.000001', '3feab5df1b20bd72', 118],
      ['2:0.001', '3febab5557101f8b', 65],
      ['1.7999999999999998:0.00001', '3feab5df1b20bd71', 92],
    ];
    for (const [pair, bits, k] of [...recorded, ...recorded.slice().reverse()]) {
      const [e, d] = pair.split(':').map(Number) as [number, number];
      const p = derive(e, d);
      expect({ pair, bits: bitsOf(p.beta), k: p.k }).toEqual({ pair, bits, k });
    }
  });

  // The sums a(n), on bare doubles, against ends recorded from the object-per-step interval
  // arithmetic: every one of their steps rounds as before (k = 0 and k = n included).
  it('sums the binomial tail to the same interval ends as recorded', () => {
    const doubleOf = (hex: string) => new Float64Array(new BigUint64Array([BigInt(`0x${hex}`)]).buffer)[0]!;
    const recorded: [number, number, string, string, string, string][] = [
      [2, 1, '3fe43a54e4e98863', '3fe43a54e4e98867', '3feba8f74f6ba163', '3febb543316aca87'],
      [97, 70, '3fe43a54e4e98863', '3fe43a54e4e98867', '3fa4b28e65f00df1', '3fa4b28e65fded8c'],
      [150, 40, '3fd92e9a0720d3e9', '3fd92e9a0720d3f1', '3feffc9c80d19960', '3feffc9c80d20a71'],
      [300, 0, '3febab5557101f8b', '3febab5557101f8f', '3feffffffffff55f', '3ff0000000016eb3'],
      [301, 280, '3febab5557101f8b', '3febab5557101f8f', '3f2f0f48b76f1ffa', '3f2f0f48b7b21419'],
    ];
    for (const [n, from, pLo, pHi, lo, hi] of recorded) {
      const sum = binomialTail(n, { lo: doubleOf(pLo), hi: doubleOf(pHi) }, from);
      expect({ n, from, lo: bitsOf(sum.lo), hi: bitsOf(sum.hi) }).toEqual({ n, from, lo, hi });
    }
  });

  // derive passes over each a(n) whose bound from its first term lies below the running maximum:
  // the bound must hold for every sum, or a passed-over a(n) could have changed the maximum.
  it('bounds each binomial tail from its first term, above the tail as summed', () => {
    const wrong: string[] = [];
    let bounded = 0;
    for (const beta of [0.05, 0.3934693402873664, 0.6321205588285576, 0.8646647167633871, 0.97]) {
      const p = { lo: beta, hi: nextAfter.up(nextAfter.up(beta)) };
      for (let n = 1; n <= 400; n += n < 60 ? 1 : 3) {
        for (let from = 0; from <= n + 1; from += Math.max(1, Math.floor(n / 40))) {
          const bound = tailAbove(n, p, from);
          if (bound === Number.POSITIVE_INFINITY) continue;
          bounded++;
          const tail = binomialTail(n, p, from).hi;
          if (!(tail <= bound)) wrong.push(`${beta} ${n} ${from}: ${tail} > ${bound}`);
          // Tight enough to pass over anything: within a factor 2 past the mean.
          if (from > 1.2 * n * beta + 2 && !(bound < 2 * tail)) wrong.push(`${beta} ${n} ${from}: loose`);
        }
      }
    }
    expect(bounded).toBeGreaterThan(5000);
    expect(wrong).toEqual([]);
  });

  // Passing over the a(n) the bound rules out changes neither β, nor k, nor an error.
  it('derives the same β and k (and fails alike) as summing every a(n) it visits', () => {
    const pairs: [number, number][] = [[1, 0.6321205588285576]];
    for (const e of [0.1, 0.5, 1, 1.8, 2]) for (const d of [0.5, 1e-3, 1e-5, 1e-8]) pairs.push([e, d]);
    const outcome = (f: () => unknown) => {
      try {
        return f();
      } catch (e) {
        return (e as Error).message;
      }
    };
    for (const [e, d] of pairs) {
      expect({ e, d, p: outcome(() => derive(e, d)) }).toEqual({
        e,
        d,
        p: outcome(() => deriveSummingEvery(e, d)),
      });
    }
    expect(outcome(() => derive(1, 0.6321205588285576))).toBe('undecidable comparison');
  });

  it('sampling keeps each row with probability β', () => {
    const kept = sampleRows(200_000, 0.3, new Random(5));
    const n = kept.reduce((s, v) => s + v, 0);
    expect(Math.abs(n / 200_000 - 0.3)).toBeLessThan(0.01);
  });

  // The fast neighbours (v ± |v|·PHI) against stepping the representation: every binade's
  // edges, both signs, the subnormals, 0, ±∞, NaN and random bit patterns.
  it('steps to the next double above and below exactly as the representation does', () => {
    const down = (v: number) => -nextUpByBits(-v);
    const words = new BigUint64Array(1);
    const asDouble = new Float64Array(words.buffer);
    const random = new Random(11);
    const values = [
      0,
      -0,
      Number.NaN,
      Infinity,
      -Infinity,
      Number.MAX_VALUE,
      Number.MIN_VALUE,
      2 ** -960,
      2 ** 1023,
    ];
    for (let e = -1074; e <= 1023; e += 1)
      for (const m of [1, 1 + 2 ** -52, 2 - 2 ** -52, 1.7]) values.push(m * 2 ** e, -m * 2 ** e);
    for (let i = 0; i < 20_000; i++) {
      words[0] = (BigInt(random.nextU32()) << 32n) | BigInt(random.nextU32());
      values.push(asDouble[0]!);
    }
    const wrong = values.filter(
      (v) => !Object.is(nextAfter.up(v), nextUpByBits(v)) || !Object.is(nextAfter.down(v), down(v)),
    );
    expect(wrong).toEqual([]);
  });

  // The fast loop of a(n) against the step-by-step reference: the same ends to the bit, for the
  // β of several ε, n to 300 and sums from below 0, 0, 1, inside and at n; and p = 1e-300,
  // whose terms underflow, taken back to the reference.
  it('sums the binomial tail in its fast loop to the reference’s ends, bit for bit', () => {
    const wrong: string[] = [];
    const ps = [0.05, 0.3934693402873664, 0.6321205588285576, 0.8646647167633871, 0.999, 1e-300].map((v) => ({
      lo: v,
      hi: nextAfter.up(nextAfter.up(v)),
    }));
    for (const p of ps) {
      for (let n = 1; n <= 300; n += n < 40 ? 1 : 7) {
        for (const from of [-2, 0, 1, Math.floor(n * 0.4), Math.floor(n * 0.9), n]) {
          const fast = binomialTail(n, p, from);
          const reference = binomialTailReference(n, p, from);
          if (bitsOf(fast.lo) !== bitsOf(reference.lo) || bitsOf(fast.hi) !== bitsOf(reference.hi))
            wrong.push(`${p.lo} ${n} ${from}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  // The sample as row indices: the same draws and decisions as a flag per row drawn with
  // uniform() < β, and the sampled table the same rows whichever form it is given.
  it('samples row indices with the same decisions as uniform() < β', () => {
    for (const beta of [0.3, 0.6321205588285576, 0.5 + 2 ** -53, 1 - 2 ** -53]) {
      const a = new Random(9);
      const flags = Array.from({ length: 5000 }, () => (uniform(a) < beta ? 1 : 0));
      const indices = sampledRowIndices(5000, beta, new Random(9));
      expect([...indices]).toEqual(flags.flatMap((f, r) => (f ? [r] : [])));
      expect([...sampleRows(5000, beta, new Random(9))]).toEqual(flags);
    }
    const table = readInput(
      adultSpec([{ model: 'differential-privacy', epsilon: 1, delta: 1e-5, levels: LEVELS }]),
    );
    const byIndex = sampledTable(table, sampledRowIndices(table.rowCount, 0.5, new Random(3)));
    const byFlag = sampledTable(table, sampleRows(table.rowCount, 0.5, new Random(3)));
    expect(byIndex.rowCount).toBe(byFlag.rowCount);
    expect(byIndex.columns.map((c) => [...c.codes])).toEqual(byFlag.columns.map((c) => [...c.codes]));
  });
});

describe('the split of ε with a private search (as ARX splits it)', () => {
  it('ε_search = share · ε, each step the lower end of ε_search / steps, the sampling the lower end of ε − ε_search', () => {
    const b = dpBudget(1, { searchBudget: 0.1, steps: 7 });
    expect(b.epsilonSearch).toBe(0.1);
    expect(b.steps).toBe(7);
    // One ulp below the rounded quotient and difference (interval arithmetic's lower end).
    expect(b.stepEpsilon).toBeLessThan(0.1 / 7);
    expect(b.stepEpsilon).toBeGreaterThan(0.1 / 7 - 1e-17);
    expect(b.epsilonAnon).toBeLessThan(1 - 0.1);
    expect(b.epsilonAnon).toBeGreaterThan(0.9 - 1e-15);
    expect(b.stepEpsilon * 7).toBeLessThanOrEqual(b.epsilonSearch);
    // Without a search all of ε goes to the sampling.
    expect(dpBudget(1)).toEqual({ epsilonAnon: 1, epsilonSearch: 0, stepEpsilon: 0, steps: 0 });
    // k and β then come from the smaller ε: β smaller, k no larger than with all of ε.
    const searched = dpParameters(b.epsilonAnon, 1e-5);
    expect(searched.beta).toBeLessThan(dpParameters(1, 1e-5).beta);
    expect(dpSplit({ epsilon: 1, searchBudget: 0.1, steps: 7 })).toEqual(b);
  });
});

describe('the exponential mechanism and the secret generator', () => {
  it('draws each candidate with probability ∝ exp(ε·score/2)', () => {
    // ε = 2, scores 0 and −ln 3: weights 1 and 1/3, so the first is drawn 3 times in 4.
    const random = new Random(7);
    const n = 100_000;
    let first = 0;
    for (let i = 0; i < n; i++)
      if (exponentialMechanism([0, -Math.log(3)], 2, uniform(random)) === 0) first++;
    expect(Math.abs(first / n - 0.75)).toBeLessThan(0.01);
    // Scores far apart (huge exponents) stay finite: the best one is drawn.
    expect(exponentialMechanism([-1e6, 0, -2e6], 1, 0.999999)).toBe(1);
  });

  it('the secret generator gives uniform words that no seed reproduces', () => {
    const a = new SecretDraws();
    const b = new SecretDraws();
    const wa = Array.from({ length: 8 }, () => a.nextU32());
    const wb = Array.from({ length: 8 }, () => b.nextU32());
    expect(wa).not.toEqual(wb);
    const kept = sampleRows(100_000, 0.5, a);
    expect(Math.abs(kept.reduce((s, v) => s + v, 0) / 100_000 - 0.5)).toBeLessThan(0.01);
  });
});

const LEVELS = ADULT_DP_LEVELS;

function adultSpec(privacy: unknown[], method: Record<string, unknown> = {}): ReleaseSpec {
  return adultDpSpec(dir, privacy, method);
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
      'Class size threshold k (derived from ε and δ)': k,
      // The class achieved, apart from the threshold (it was reported under k's name).
      'Smallest released class (rows)': claims.minClassSize,
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

  it('a level past the hierarchy is named as the spec writes it, privacy[0].levels.<column>, with its range', () => {
    const error = (() => {
      try {
        build(adultSpec([{ ...DP, levels: { ...LEVELS, age: 9 } }]), table);
      } catch (e) {
        return e as SpecError;
      }
    })();
    expect(error).toBeInstanceOf(SpecError);
    expect(error!.message).toMatch(
      /^release\.json: privacy\[0\]\.levels\.age must be a level of the hierarchy of age, from 0 to 4, but found 9$/,
    );
    expect(error!.describe()).not.toMatch(/saved node|apply/);
  });

  it('levels leaving no class of k sampled rows: an empty release, with what helps under (ε, δ)', () => {
    // Adult's most frequent row of quasi-identifiers is in 137 rows: at the bottom node no class
    // can hold k = 285 sampled rows, whatever the sample.
    const strict = {
      ...DP,
      delta: 1e-12,
      levels: Object.fromEntries(Object.keys(LEVELS).map((q) => [q, 0])),
    };
    expect(dpParameters(2, 1e-12).k).toBeGreaterThan(137);
    const error = (() => {
      try {
        build(adultSpec([strict]), table);
      } catch (e) {
        return e as NoSolutionError;
      }
    })();
    expect(error).toBeInstanceOf(NoSolutionError);
    expect(error!.message).toMatch(
      /^release\.json: privacy\[0\]: \(ε, δ\)-differential privacy releases only the classes of at least k = 285 sampled rows, and at its levels \{.*\} every class of the sample .* holds fewer: the release would be empty$/,
    );
    expect(error!.hint).toMatch(/^raise the levels .* let a private search choose them .* or raise delta/);
    expect(error!.describe()).not.toMatch(/saved node|maxSuppression|ppdp release/);
    // A table of fewer rows than k: no levels help.
    const few = sampledTable(
      table,
      Int32Array.from({ length: 100 }, (_, i) => i),
    );
    const tooFew = (() => {
      try {
        build(spec, few);
      } catch (e) {
        return e as NoSolutionError;
      }
    })();
    expect(tooFew!.hint).toMatch(/^the sample holds fewer than k rows, so no generalization can help/);
  });
});

describe('a differentially private release of Adult with a private search', () => {
  const DP = { model: 'differential-privacy', epsilon: 2, delta: 1e-5, searchBudget: 0.1, steps: 20 };
  const spec = adultSpec([DP], { metric: 'loss' });
  const table = readInput(spec);
  const built = build(spec, table);
  const staged = stage(built);
  const claims = built.claims as ClaimsOf<'generalization'>;
  const verify = (c: unknown, s = spec, st = staged) =>
    verifierFor('generalization').verify({ spec: s, table, claims: c, staged: st });
  const split = dpBudget(2, { searchBudget: 0.1, steps: 20 });
  const { beta, k } = dpParameters(split.epsilonAnon, 1e-5);

  // Forty rows, every class under k at every node (the top too): every node scores as the top
  // does, and ARX's optimum, of equal scores the lower node, is the lowest pivot drawn, below
  // the top (each step's candidates lie at most one level below the pivots before).
  it('of equal scores keeps the lower node, as ARX does', () => {
    const few = sampledTable(
      table,
      Int32Array.from({ length: 40 }, (_, r) => r),
    );
    const prepared = prepareGeneralization(spec, few, wasmGroupingKernel);
    const evaluator = openSearch(prepared, wasmGroupingKernel);
    const { lattice } = prepared.problem;
    const settings = { stepEpsilon: split.stepEpsilon, steps: 5, k, inputRows: few.rowCount };
    const searched = dpSearch(prepared, evaluator, settings, new Random(4), uniform);
    evaluator.dispose();
    const levels = prepared.qis.map((q) => searched.node[q.name]!);
    expect(searched.stepsTaken).toBe(5);
    const below = lattice.levelSum(lattice.top) - lattice.levelSum(lattice.index(levels));
    expect(below).toBeGreaterThanOrEqual(1);
    expect(below).toBeLessThanOrEqual(5);
  });

  it('samples with β and k from the ε left after the search, searches within its share, and verifies', () => {
    expect(claims.dp).toMatchObject({ beta, k });
    expect(claims.dp!.search).toEqual({
      epsilon: split.epsilonSearch,
      stepEpsilon: split.stepEpsilon,
      stepsTaken: claims.dp!.search!.stepsTaken,
    });
    // Adult's lattice is 27 levels deep from top to bottom: 20 steps never reach the bottom.
    expect(claims.dp!.search!.stepsTaken).toBe(20);
    expect(claims.minClassSize).toBeGreaterThanOrEqual(k);
    const checks = verify(claims);
    expect(checks.every((c) => c.passed)).toBe(true);
    expect(checks.map((c) => c.name)).toEqual(
      expect.arrayContaining(['dp-accounting', 'dp-search-budget', 'differential-privacy']),
    );
    const section = built.report.sections!.find((s) => s.title === '(ε, δ)-differential privacy')!;
    expect(Object.fromEntries(section.facts)).toMatchObject({
      ε: 2,
      'ε spent on the search (ε_search)': split.epsilonSearch,
      'ε per search step': split.stepEpsilon,
      'Search steps allowed': 20,
      'Search steps taken': 20,
      'ε left for sampling and suppression': split.epsilonAnon,
      'Sampling probability β': beta,
      'Class size threshold k (derived from ε and δ)': k,
      'Generalization (chosen by the private search)': JSON.stringify(claims.node),
    });
  });

  it('a search that spent more than its share fails the verifier', () => {
    const search = claims.dp!.search!;
    const tampered = (s: Partial<typeof search>) => ({
      ...claims,
      dp: { ...claims.dp!, search: { ...search, ...s } },
    });
    expect(failedChecks(() => verify(tampered({ stepsTaken: 21 })))).toContain('dp-search-budget');
    expect(failedChecks(() => verify(tampered({ stepEpsilon: 2 * search.stepEpsilon })))).toContain(
      'dp-search-budget',
    );
    expect(failedChecks(() => verify(tampered({ epsilon: 0.4 })))).toContain('dp-search-budget');
    expect(failedChecks(() => verify({ ...claims, dp: { ...claims.dp!, search: undefined } }))).toContain(
      'dp-search-budget',
    );
    // A spec giving the search a smaller share (ε_search = 0.1): the same release overspent it.
    const smaller = adultSpec([{ ...DP, searchBudget: 0.05 }], { metric: 'loss' });
    expect(failedChecks(() => verify(claims, smaller))).toContain('dp-search-budget');
  });

  it('a release whose sample was drawn with a larger β fails the verifier', () => {
    // Released at ε = 3 (β ≈ 0.95), verified against the spec at ε = 2 (β ≈ 0.86) with the
    // claims rewritten to that spec's β and k: the sample is far too large for its β.
    const fixed = { model: 'differential-privacy', epsilon: 2, delta: 1e-5, levels: LEVELS };
    const strict = adultSpec([fixed]);
    const other = build(adultSpec([{ ...fixed, epsilon: 3 }]), table);
    const otherClaims = other.claims as ClaimsOf<'generalization'>;
    const p = dpParameters(2, 1e-5);
    expect(otherClaims.dp!.sampledRows).toBeGreaterThan(p.beta * table.rowCount + 1000);
    const rewritten = { ...otherClaims, dp: { ...otherClaims.dp!, beta: p.beta, k: p.k } };
    expect(failedChecks(() => verify(rewritten, strict, stage(other)))).toEqual(['dp-accounting']);
  });

  it('claims of a search for a spec that fixes the node fail the verifier', () => {
    const fixed = adultSpec(
      [{ model: 'differential-privacy', epsilon: 2, delta: 1e-5, levels: claims.node }],
      {
        metric: 'loss',
      },
    );
    expect(failedChecks(() => verify(claims, fixed))).toContain('dp-search-budget');
  });

  it('refuses a search that would score by another metric, and a spec giving both a node and a search', () => {
    expect(() => build(adultSpec([DP], { metric: 'ncp' }), table)).toThrow(/scores nodes by the Loss metric/);
    expect(() => adultSpec([{ ...DP, levels: LEVELS }], { metric: 'loss' })).toThrow(/not both/);
    expect(() => adultSpec([{ ...DP, searchBudget: 1 }], { metric: 'loss' })).toThrow(
      /strictly between 0 and 1/,
    );
    expect(() =>
      adultSpec([{ model: 'differential-privacy', epsilon: 2, delta: 1e-5, steps: 3 }], { metric: 'loss' }),
    ).toThrow(/searchBudget/);
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
    expect(facts).toMatchObject({
      'Sampling probability β': beta,
      'Class size threshold k (derived from ε and δ)': k,
    });
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('differential privacy');
  }, 300_000);

  it('with a private search: verifies, and the report gives the split of ε and the steps', async () => {
    const model = { model: 'differential-privacy', epsilon: 1, delta: 1e-5, searchBudget: 0.2, steps: 5 };
    const spec = adultSpec([model], { metric: 'loss' });
    const out = join(dir, 'pipeline-search-out');
    const { report } = await releaseTo(spec.file, out);
    expect(report.verification.verified).toBe(true);
    const split = dpBudget(1, { searchBudget: 0.2, steps: 5 });
    const facts = Object.fromEntries(
      report.sections!.find((x) => x.title === '(ε, δ)-differential privacy')!.facts,
    );
    expect(facts).toMatchObject({
      'ε spent on the search (ε_search)': split.epsilonSearch,
      'ε per search step': split.stepEpsilon,
      'Search steps taken': 5,
      'Sampling probability β': dpParameters(split.epsilonAnon, 1e-5).beta,
    });
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('ε spent on the search');
    expect(html).toContain('private search');
  }, 300_000);
});
