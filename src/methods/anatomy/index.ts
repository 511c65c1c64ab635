/**
 * Anatomy (Xiao & Tao 2006) as a release method: l-diverse buckets by the group-creation and
 * residue-assignment steps (bucketize.ts); QIs released unchanged, linked to the SA only
 * through the bucket. Files:
 * - `qit.arrow`/`qit.csv`: every released column but the SA, unchanged, plus `bucket`;
 * - `st.arrow`/`st.csv`: `bucket`, the SA, `count` (one row per SA value present in a bucket);
 * - `data.arrow`/`data.csv`: the single-table form (Li et al.'s slicing paper, Table 1(c)): the QIT's rows in the
 *   same order with the SA column back in its input position, its values permuted within each
 *   bucket.
 * Insensitive columns ride in the QIT with the QIs. Verified by src/verify/anatomy.ts.
 */
import { DISTINCT_L_DIVERSITY, ENTROPY_L_DIVERSITY } from '../../catalogue/l-diversity.ts';
import { type AnatomyClaims, claimsOf } from '../../claims/index.ts';
import { encodeArrow } from '../../data/arrow.ts';
import { encodeCsv } from '../../data/csv.ts';
import { compactDictionary, type EncodedColumn, type OutputColumn } from '../../data/table.ts';
import { thousands } from '../../util/format.ts';
import type { Random } from '../../util/random.ts';
import {
  checkEligibility,
  checkNumericScales,
  type DiversityRequirement,
  distinctNeeded,
  diversityRequirement,
  releasedAttributes,
} from '../bucket-common.ts';
import type { BuiltRelease, MethodContext, ReleaseMethod, StagedFile } from '../method.ts';
import { anatomize, type Bucketization } from './bucketize.ts';
import type { AnatomyLayout } from './layout.ts';
import { anatomyReport } from './report.ts';

export function layoutAnatomy(sa: EncodedColumn, l: number, random: Random): AnatomyLayout {
  const bucketization = anatomize(sa.codes, sa.dictionary.length, l, random);
  const { bucketOf, buckets, sizes } = bucketization;
  const perm = random.permutation(buckets);
  const ids = Int32Array.from(perm, (p) => p + 1);
  // Rows by bucket id (counting sort of a random row order).
  const n = bucketOf.length;
  const startOfId = new Int32Array(buckets + 2);
  for (let b = 0; b < buckets; b++) startOfId[ids[b]! + 1] = sizes[b]!;
  for (let i = 1; i < startOfId.length; i++) startOfId[i]! += startOfId[i - 1]!;
  const fill = startOfId.slice();
  const order = new Int32Array(n);
  for (const r of random.permutation(n)) order[fill[ids[bucketOf[r]!]!]!++] = r;
  const permutedSa = new Int32Array(n);
  for (let id = 1; id <= buckets; id++) {
    const from = startOfId[id]!;
    const size = startOfId[id + 1]! - from;
    const p = random.permutation(size);
    for (let i = 0; i < size; i++) permutedSa[from + i] = sa.codes[order[from + p[i]!]!]!;
  }
  return { bucketization, ids, order, permutedSa };
}

/** The release without its report: files and their claims (for the method, tests, benchmarks). */
export interface AnatomyRelease {
  readonly req: DiversityRequirement;
  readonly layout: AnatomyLayout;
  readonly releasedColumns: EncodedColumn[];
  readonly files: StagedFile[];
  readonly claims: AnatomyClaims;
}

export function anatomyRelease(
  ctx: Pick<MethodContext, 'spec' | 'table' | 'time' | 'say' | 'random'>,
): AnatomyRelease {
  const { spec, table, time, say } = ctx;
  const req = diversityRequirement(spec, table, 'anatomy', [
    DISTINCT_L_DIVERSITY.name,
    ENTROPY_L_DIVERSITY.name,
  ]);
  checkEligibility(req, table.rowCount, 'anatomy');
  checkNumericScales(spec, table);
  const l = distinctNeeded(req);
  const layout = time('bucketize', () => layoutAnatomy(req.column, l, ctx.random('anatomy')));
  const { bucketization, ids, order, permutedSa } = layout;
  say(
    `${thousands(table.rowCount)} rows into ${thousands(bucketization.buckets)} buckets ` +
      `of ≥ ${l} distinct ${req.attribute} values (${bucketization.residual} residual rows)`,
  );

  const released = releasedAttributes(spec, table);
  const columnOf = (name: string) => table.columns.find((c) => c.name === name)!;
  const bucketColumn: OutputColumn = {
    name: 'bucket',
    kind: 'number',
    values: Float64Array.from(order, (r) => ids[bucketization.bucketOf[r]!]!),
  };
  const reordered = (c: EncodedColumn) =>
    compactDictionary(
      c.name,
      c.dictionary,
      Int32Array.from(order, (r) => c.codes[r]!),
    );
  const { qit, st, data } = time('apply', () => {
    const qitColumns = released
      .filter((a) => a.name !== req.attribute)
      .map((a) => reordered(columnOf(a.name)));
    const dataColumns = released.map((a) =>
      a.name === req.attribute
        ? compactDictionary(a.name, req.column.dictionary, permutedSa)
        : qitColumns.find((c) => c.name === a.name)!,
    );
    return {
      qit: [...qitColumns, bucketColumn],
      st: summaryTable(req, bucketization, ids),
      data: [...dataColumns, bucketColumn],
    };
  });
  const files = time('write', () =>
    (
      [
        ['qit', qit],
        ['st', st],
        ['data', data],
      ] as const
    ).flatMap(([name, columns]) => [
      { name: `${name}.arrow`, content: encodeArrow(columns) },
      { name: `${name}.csv`, content: encodeCsv(columns, table.delimiter, spec.format) },
    ]),
  );
  return {
    req,
    layout,
    releasedColumns: released.map((a) => columnOf(a.name)),
    files,
    claims: claimsOf('anatomy', {
      enforced: { sensitive: req.attribute, model: req.model, l: req.l },
      buckets: bucketization.buckets,
      bucketOfRow: Array.from(bucketization.bucketOf, (b) => ids[b]!),
    }),
  };
}

export const anatomyMethod: ReleaseMethod = {
  name: 'anatomy',
  build(ctx: MethodContext): BuiltRelease {
    const release = anatomyRelease(ctx);
    const report = ctx.time('measure', () =>
      anatomyReport(ctx, release.req, release.layout, release.releasedColumns),
    );
    return { files: release.files, report, claims: release.claims };
  },
};

/** ST: one row per (bucket, SA value) with its count; buckets by id, values in string order. */
function summaryTable(req: DiversityRequirement, bz: Bucketization, ids: Int32Array): OutputColumn[] {
  const { dictionary, codes } = req.column;
  const byId: number[][] = Array.from({ length: bz.buckets + 1 }, () => []);
  for (let r = 0; r < codes.length; r++) byId[ids[bz.bucketOf[r]!]!]!.push(codes[r]!);
  const bucket: number[] = [];
  const value: number[] = [];
  const count: number[] = [];
  for (let id = 1; id <= bz.buckets; id++) {
    const counts = new Map<number, number>();
    for (const s of byId[id]!) counts.set(s, (counts.get(s) ?? 0) + 1);
    const sorted = [...counts.entries()].sort((a, b) =>
      dictionary[a[0]]! < dictionary[b[0]]! ? -1 : dictionary[a[0]]! > dictionary[b[0]]! ? 1 : 0,
    );
    for (const [s, c] of sorted) {
      bucket.push(id);
      value.push(s);
      count.push(c);
    }
  }
  return [
    { name: 'bucket', kind: 'number', values: Float64Array.from(bucket) },
    compactDictionary(req.attribute, dictionary, Int32Array.from(value)),
    { name: 'count', kind: 'number', values: Float64Array.from(count) },
  ];
}
