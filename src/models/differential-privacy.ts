/**
 * (ε, δ)-differential privacy by sampling and generalization (SafePub, ARX's
 * EDDifferentialPrivacy): β and k from the catalogue's derivation, over the ε left once the
 * private search (if any) has its share; a class of the sample passes when it holds at least k
 * sampled rows (docs/definitions.md). The secret generator both the sampling and the search
 * draw from.
 */
import { randomFillSync } from 'node:crypto';
import type { SpecNamed } from '../catalogue/catalogue.ts';
import { DIFFERENTIAL_PRIVACY, dpSplit } from '../catalogue/differential-privacy.ts';
import { type DpBudget, type DpParameters, dpParameters } from '../catalogue/dp-parameters.ts';
import { gatherRaw } from '../data/raw.ts';
import type { EncodedTable } from '../data/table.ts';
import { SpecError } from '../errors.ts';
import type { PrivacyModelSpec } from '../release-spec/spec.ts';
import { gather } from '../util/gather.ts';
import { UniformDraws } from '../util/random.ts';
import { describeSpec } from './describe.ts';
import type { PrivacyModel } from './model.ts';

export type DifferentialPrivacySpec = SpecNamed<'differential-privacy'>;

/**
 * The split of ε, and β and k for the sampling's share of it and δ, as a SpecError when the
 * arithmetic cannot decide them.
 */
export function dpSettings(spec: DifferentialPrivacySpec, where: string): DpParameters & DpBudget {
  try {
    const budget = dpSplit(spec);
    return { ...budget, ...dpParameters(budget.epsilonAnon, spec.delta) };
  } catch {
    throw new SpecError(
      'E_SPEC_RANGE',
      `${where}: (ε, δ) = (${spec.epsilon}, ${spec.delta})` +
        ('steps' in spec ? ` with a search share of ${spec.searchBudget} over ${spec.steps} steps` : '') +
        ' gives no sampling probability and class size the interval arithmetic can decide',
      'use an ε between 0.01 and 10, a δ between 1e-12 and 0.1 and a searchBudget well below 1',
    );
  }
}

export function differentialPrivacy(spec: DifferentialPrivacySpec, where: string): PrivacyModel {
  const { k } = dpSettings(spec, where);
  return {
    spec,
    describe: (format) => describeSpec(spec, format),
    attribute: null,
    monotonic: true,
    monotonicWithoutSuppression: true,
    minClassSize: k,
    holds: (cls) => cls.size >= k,
    measure: (cls) => cls.size,
    higherIsBetter: true,
    measureName: 'k',
  };
}

/**
 * The rows kept by sampling each of `rows` with probability β, by default from the secret
 * generator: deliberately not reproducible from the spec's seed, since a published seed would
 * let anyone redo the sample and lose the privacy the sampling buys.
 */
export function sampleRows(rows: number, beta: number, random: UniformDraws = new SecretDraws()): Uint8Array {
  const kept = new Uint8Array(rows);
  for (const r of sampledRowIndices(rows, beta, random)) kept[r] = 1;
  return kept;
}

/**
 * sampleRows as the kept rows' indices, ascending: the same draws and the same decisions (a
 * row is kept when `uniform(random) < β`, compared here on the 53-bit integer before its
 * exact division by 2^53), without a flag per row to scan again.
 */
export function sampledRowIndices(
  rows: number,
  beta: number,
  random: UniformDraws = new SecretDraws(),
): Int32Array {
  const threshold = beta * 9007199254740992;
  // The 53-bit draw (a >>> 5)·2^26 + (b >>> 6) against the threshold: decided by its high 27
  // bits alone unless they equal the threshold's (then by its low 26), without a branch per row
  // on a decision that is a coin toss (h − high is negative, its sign bit 1, when h is below).
  const high = Math.floor(threshold / 67108864);
  const low = threshold - high * 67108864;
  const kept = new Int32Array(rows);
  let count = 0;
  // Two words a row, drawn a block at a time (a call per word costs more than the test).
  const words = new Uint32Array(2 * Math.min(rows, 8192));
  for (let start = 0; start < rows; start += words.length / 2) {
    const end = Math.min(rows, start + words.length / 2);
    const block = words.subarray(0, 2 * (end - start));
    drawWords(random, block);
    for (let r = start, w = 0; r < end; r++, w += 2) {
      const h = block[w]! >>> 5;
      kept[count] = r;
      count += ((h - high) >>> 31) | (h === high && block[w + 1]! >>> 6 < low ? 1 : 0);
    }
  }
  return kept.subarray(0, count);
}

/**
 * `into` filled with `random`'s next words in order; from the secret generator, straight from
 * the operating system's (the same source its own words come from, and none of them reused).
 */
function drawWords(random: UniformDraws, into: Uint32Array): void {
  if (random instanceof SecretDraws) randomFillSync(into);
  else for (let i = 0; i < into.length; i++) into[i] = random.nextU32();
}

/**
 * The rows of `table` that `kept` marks (a flag per row, or the kept rows' indices ascending),
 * in order, with every dictionary as it is (the report describes the input's values; a released
 * value is always a sampled row's). The table's origins no longer number its rows, so they
 * are dropped.
 */
export function sampledTable(table: EncodedTable, kept: Uint8Array | Int32Array): EncodedTable {
  const rows = kept instanceof Int32Array ? kept : flaggedRows(kept, table.rowCount);
  const count = rows.length;
  const { origins: _, ...rest } = table;
  return {
    ...rest,
    rowCount: count,
    columns: table.columns.map((c) => {
      // A column carried as its rows' bytes (a sharded release's pass-through one).
      if (c.raw) return { ...c, raw: gatherRaw(c.raw, rows) };
      return { ...c, codes: gather(c.codes, rows) };
    }),
  };
}

/** The rows a flag per row marks, ascending. */
function flaggedRows(kept: Uint8Array, rowCount: number): Int32Array {
  let count = 0;
  for (let r = 0; r < rowCount; r++) count += kept[r]!;
  const rows = new Int32Array(count);
  for (let r = 0, at = 0; r < rowCount; r++) if (kept[r]) rows[at++] = r;
  return rows;
}

/**
 * A shard's sample for a spec that draws one ((ε, δ)-differential privacy), undefined for any
 * other spec: each row kept with probability β from `random`, a secret generator of the shard's
 * own (src/pipeline/states/scan-piece.ts). The spec is checked against the method before any
 * shard is read, so its model's settings are taken as they are here.
 */
export function secretSampler(
  privacy: readonly PrivacyModelSpec[],
  where: string,
): ((shard: EncodedTable) => EncodedTable) | undefined {
  const model = privacy.find((m): m is DifferentialPrivacySpec => m.model === DIFFERENTIAL_PRIVACY.name);
  if (!model) return undefined;
  const { beta } = dpSettings(model, where);
  const random = new SecretDraws();
  return (shard) => sampledTable(shard, sampledRowIndices(shard.rowCount, beta, random));
}

/** A uniform double in [0, 1) from 53 random bits. */
export function uniform(random: UniformDraws): number {
  return ((random.nextU32() >>> 5) * 67108864 + (random.nextU32() >>> 6)) / 9007199254740992;
}

/**
 * Words from the operating system's cryptographic generator (node:crypto), with no seed
 * anyone holds: what a differentially private release draws its sample and its search from.
 * Two runs of the same spec on the same input therefore differ, and nobody (the publisher
 * included) can redo them.
 */
export class SecretDraws extends UniformDraws {
  /** Made on the first word drawn one at a time (a release at a given node draws none so). */
  private words: Uint32Array | undefined;
  private at = 0;

  nextU32(): number {
    if (this.words === undefined || this.at === this.words.length) {
      this.words ??= new Uint32Array(4096);
      randomFillSync(this.words);
      this.at = 0;
    }
    return this.words[this.at++]!;
  }
}
