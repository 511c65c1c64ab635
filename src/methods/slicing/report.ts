/**
 * Slicing's part of the report, one builder per part: the privacy figures (the posterior
 * bound, linkage through a released column, the SA per bucket), the utility, the sections a
 * person reads (columns, buckets, membership disclosure) and the machine-readable details.
 */

import type { ReportSection } from '../../contracts/report.ts';
import { codeCounts, countCodes, type EncodedTable } from '../../data/table.ts';
import { distributionMeasures, measureFigures } from '../../metrics/contingency.ts';
import { sensitiveDistribution } from '../../metrics/disclosure.ts';
import { classSizeHistogram, reidentificationRisk } from '../../metrics/privacy.ts';
import { posteriorHolds } from '../../models/l-diversity.ts';
import type { ReleaseSpec } from '../../release-spec/spec.ts';
import { diversityModelReport, sizeFacts, tupleIds } from '../bucket-common.ts';
import { bucketEstimator } from '../bucket-estimator.ts';
import type { BuiltRelease, MethodContext } from '../method.ts';
import { type MembershipMeasures, membershipMeasures } from './measures.ts';
import type { SlicedRelease } from './sliced.ts';

type MethodReport = BuiltRelease['report'];

export function slicingMeasures(
  kernel: MethodContext['kernel'],
  sliced: SlicedRelease,
  random: MethodContext['random'],
): { membership: MembershipMeasures; kl: number } {
  const { partition, valueCodes, plan } = sliced;
  const n = partition.rows.length;
  const tuples = tupleIds(
    kernel,
    valueCodes,
    plan.columns.map((_, j) => sliced.valueStrings[j]!.length),
    n,
  );
  const counts = new Int32Array(tuples.count);
  for (const t of tuples.ids) counts[t]!++;
  // A separate stream for the sample, so the release's bytes do not depend on it.
  return membershipMeasures(
    partition,
    { codes: valueCodes, domains: sliced.valueStrings.map((s) => s.length) },
    { keys: tuples.keys, counts },
    random('slicing-membership'),
  );
}

export function slicingReport(
  spec: ReleaseSpec,
  table: EncodedTable,
  ctx: MethodContext,
  sliced: SlicedRelease,
): MethodReport {
  const { partition } = sliced;
  const sizes = partition.buckets.map((b) => b.end - b.start);
  const { membership, kl } = slicingMeasures(ctx.kernel, sliced, ctx.random);
  const measures = bucketMeasures(sliced);
  const minDistinct = fewestDistinctSa(sliced);
  return {
    rows: { input: table.rowCount, released: table.rowCount, suppressed: 0 },
    privacy: privacyOf(spec, table, sliced, sizes, minDistinct),
    utility: {
      metric: 'kl-divergence',
      value: measures.kl,
      ...measureFigures(measures),
      klFullJoint: kl,
    },
    sections: [
      columnsSection(sliced),
      bucketsSection(sliced, sizes, minDistinct),
      membershipSection(membership),
    ],
    details: { slicing: detailsOf(spec, sliced, sizes, membership, measures.uncertainty) },
  };
}

const round = (x: number, digits = 4) => Number(x.toFixed(digits));
const nameOf = (sliced: SlicedRelease) => (i: number) => sliced.attributes[i]!.name;
const describe = (sliced: SlicedRelease, g: number[]) => g.map(nameOf(sliced)).join('+');

/** KL, χ², query errors and uncertainty of what an analyst recovers from the buckets. */
function bucketMeasures(sliced: SlicedRelease) {
  const { plan, partition, attributes, columns } = sliced;
  const columnOf = attributes.map((_, a) => plan.columns.findIndex((g) => g.includes(a)));
  return distributionMeasures(
    columns,
    bucketEstimator(
      {
        rows: partition.rows,
        start: Int32Array.from([0, ...partition.buckets.map((b) => b.end).sort((x, y) => x - y)]),
      },
      columns.map((c) => c.codes),
      columns.map((c) => c.dictionary.length),
      columnOf,
    ),
  );
}

/** Distinct SA values in the bucket with fewest (the bucket-level l, for comparison with Anatomy). */
function fewestDistinctSa({ req, partition, attributes, columns }: SlicedRelease): number {
  const saCodes = columns[attributes.findIndex((a) => a.name === req.attribute)]!.codes;
  let minDistinct = Number.POSITIVE_INFINITY;
  for (const b of partition.buckets) {
    const seen = new Set<number>();
    for (let i = b.start; i < b.end; i++) seen.add(saCodes[partition.rows[i]!]!);
    minDistinct = Math.min(minDistinct, seen.size);
  }
  return minDistinct;
}

/** The posterior bound, linkage through an unchanged column, the SA per bucket. */
function privacyOf(
  spec: ReleaseSpec,
  table: EncodedTable,
  sliced: SlicedRelease,
  sizes: number[],
  minDistinct: number,
): MethodReport['privacy'] {
  const { req, plan, partition, attributes, columns } = sliced;
  const achievedL = partition.maxP > 0 ? 1 / partition.maxP : Number.POSITIVE_INFINITY;
  const satisfied = posteriorHolds(partition.maxP, req.l);
  // Linkage: a column other than the sensitive one is released with its values intact (only
  // permuted within buckets), so rows alike on it are what an attacker can tell apart. Report the
  // column that re-identifies most.
  const linkage = plan.columns
    .map((g, j) => ({ g, j }))
    .filter(({ j }) => j !== plan.saColumn)
    .map(({ g, j }) =>
      reidentificationRisk(
        Array.from(countCodes(sliced.valueCodes[j]!, sliced.valueStrings[j]!.length)).filter((c) => c > 0),
        spec.report.riskThreshold,
        `the exact values of column ${j + 1} (${describe(sliced, g)}), released unchanged`,
      ),
    )
    .sort((a, b) => b.prosecutor.mean - a.prosecutor.mean)[0];
  const saCodes = columns[attributes.findIndex((a) => a.name === req.attribute)]!.codes;
  const saColumn = table.columns.find((c) => c.name === req.attribute)!;
  const saWidth = saColumn.dictionary.length;
  const bucketHist = new Int32Array(partition.buckets.length * saWidth);
  partition.buckets.forEach((b, i) => {
    for (let r = b.start; r < b.end; r++) bucketHist[i * saWidth + saCodes[partition.rows[r]!]!]!++;
  });
  const sensitive = sensitiveDistribution(
    req.attribute,
    { groups: partition.buckets.length, width: saWidth, counts: bucketHist, keep: () => true },
    Array.from(codeCounts(saColumn), (c) => c / table.rowCount),
  );
  return {
    satisfied,
    models: [
      diversityModelReport(
        req,
        satisfied,
        // 12 significant digits: p(t,s) = 1/l exactly shows as such, not as 0.5000000000000001.
        { l: precise(achievedL), maxP: precise(partition.maxP), bucketDistinctL: minDistinct },
        false,
      ),
    ],
    classes: partition.buckets.length,
    ecSizeHistogram: classSizeHistogram(sizes),
    ...(linkage ? { reidentification: linkage } : {}),
    ...(sensitive ? { sensitive: [sensitive] } : {}),
  };
}

/** The columns, how they were chosen, and how strongly the attributes in each correlate. */
function columnsSection(sliced: SlicedRelease): ReportSection {
  const { plan, phi } = sliced;
  const within = (g: number[]) => {
    const pairs: number[] = [];
    for (let x = 0; x < g.length; x++) for (let y = x + 1; y < g.length; y++) pairs.push(phi[g[x]!]![g[y]!]!);
    return pairs.length ? pairs.reduce((s, v) => s + v, 0) / pairs.length : null;
  };
  return {
    title: 'Slicing columns',
    facts: [
      ['columns', plan.columns.length],
      ['chosen by', plan.source === 'given' ? 'columnGroups in the spec' : 'PAM on 1 − φ²'],
      ...plan.columns.map((g, j): [string, string] => [
        `column ${j + 1}${j === plan.saColumn ? ' (sensitive)' : ''}`,
        `${describe(sliced, g)}${g.length > 1 ? ` — mean φ² within ${round(within(g)!)}` : ''}`,
      ]),
      ...(plan.moved.length > 0
        ? [
            [
              'moved out of the sensitive column',
              `${plan.moved.map(nameOf(sliced)).join(', ')} (so the single-bucket table is l-diverse)`,
            ] as [string, string],
          ]
        : []),
      ['p(t,s) max with one bucket', round(plan.initialMaxP)],
    ],
    note:
      'φ² is the mean-square contingency coefficient between two attributes (numeric ones discretized); ' +
      'attributes that correlate strongly share a column, so their association is kept.',
  };
}

/** The buckets: how many, their sizes, the posterior bound they reach, how they were split. */
function bucketsSection(sliced: SlicedRelease, sizes: number[], minDistinct: number): ReportSection {
  const { req, partition } = sliced;
  const facts = sizeFacts(sizes);
  return {
    title: 'Slicing buckets',
    facts: [
      ['buckets', partition.buckets.length],
      ['bucket size min / mean / max', `${facts.min} / ${facts.mean.toFixed(2)} / ${facts.max}`],
      ['max p(t,s) over original tuples', round(partition.maxP, 6)],
      ['1/l', round(1 / req.l, 6)],
      ['fewest distinct SA values in a bucket', minDistinct],
      ['splits', sliced.problem.mode === 'random' ? 'random halves' : 'Mondrian (median of the widest QI)'],
      ['trial splits / accepted', `${partition.trials} / ${partition.accepted}`],
    ],
  };
}

/** Membership disclosure: how many fake tuples the buckets let through, and how they match. */
function membershipSection(membership: MembershipMeasures): ReportSection {
  const fmtBins = (bins: { label: string; share: number }[]) =>
    bins.map((b) => `${b.label}: ${(100 * b.share).toFixed(1)}%`).join(', ');
  return {
    title: 'Membership disclosure',
    facts: [
      [
        'original tuples (distinct) / records',
        `${membership.originalTuples} / ${membership.originalRecords}`,
      ],
      ['combinations of column values within buckets', membership.combinations],
      [
        `fake tuples (distinct${membership.fakeSampled ? ', estimated from a sample' : ''})`,
        membership.fakeTuples,
      ],
      ['fake bucket–combination pairs', membership.fakeCombinations],
      [
        'matching buckets per original record (mean, median)',
        `${round(membership.matchingBucketsOriginal.mean, 2)}, ${membership.matchingBucketsOriginal.median}`,
      ],
      ['original records by matching buckets', fmtBins(membership.matchingBucketsOriginal.bins)],
      [
        'matching buckets per fake tuple (mean, median)',
        `${round(membership.matchingBucketsFake.mean, 2)}, ${membership.matchingBucketsFake.median}`,
      ],
      ['fake tuples by matching buckets', fmtBins(membership.matchingBucketsFake.bins)],
    ],
    note:
      'A tuple matches a bucket when each of its column values appears there. An attacker who sees a ' +
      'matching bucket cannot tell an original tuple from a fake one unless the numbers of matching buckets differ.',
  };
}

/** The machine-readable details. */
function detailsOf(
  spec: ReleaseSpec,
  sliced: SlicedRelease,
  sizes: number[],
  membership: MembershipMeasures,
  uncertainty: unknown,
) {
  const { req, plan, partition, attributes, phi } = sliced;
  return {
    sensitive: req.attribute,
    l: req.l,
    columns: plan.columns.map((g) => g.map(nameOf(sliced))),
    sensitiveColumn: plan.saColumn,
    columnSource: plan.source,
    moved: plan.moved.map(nameOf(sliced)),
    columnGeneralization: 'not applied',
    discretization: Object.fromEntries(attributes.map((a, i) => [a.name, sliced.discretization[i]!])),
    phiSquared: Object.fromEntries(
      attributes.map((a, i) => [
        a.name,
        Object.fromEntries(attributes.map((b, j) => [b.name, round(phi[i]![j]!, 6)])),
      ]),
    ),
    split: sliced.problem.mode,
    splitAttributes: sliced.problem.mode === 'random' ? [] : sliced.problem.split.map((s) => s.name),
    buckets: partition.buckets.length,
    bucketSizes: sizeFacts(sizes),
    initialMaxP: plan.initialMaxP,
    maxP: partition.maxP,
    trials: partition.trials,
    accepted: partition.accepted,
    keys: sliced.problem.keyCount,
    keysVisited: partition.keysVisited,
    membership,
    uncertainty,
    seed: spec.seed,
  };
}

function precise(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(12)) : x;
}
