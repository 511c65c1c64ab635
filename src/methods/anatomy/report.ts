/**
 * Anatomy's part of the report, one builder per part: the buckets' SA histograms and the
 * diversity they reach, the accuracy baseline (the input's own classes), the measures of what
 * an analyst recovers, the buckets section a person reads, and the details.
 */

import type { ReportSection } from '../../contracts/report.ts';
import { codeCounts, countCodes, type EncodedColumn } from '../../data/table.ts';
import { distributionMeasures, measureFigures } from '../../metrics/contingency.ts';
import { disclosureMeasures, sensitiveDistribution } from '../../metrics/disclosure.ts';
import { classSizeHistogram, reidentificationRisk } from '../../metrics/privacy.ts';
import {
  bucketDiversity,
  type DiversityRequirement,
  distinctNeeded,
  diversityModelReport,
  sizeFacts,
  tupleIds,
} from '../bucket-common.ts';
import { bucketEstimator } from '../bucket-estimator.ts';
import type { BuiltRelease, MethodContext } from '../method.ts';
import type { AnatomyLayout } from './layout.ts';

type MethodReport = BuiltRelease['report'];

/** Each bucket's SA histogram, the largest share of one value in a bucket, the diversity reached. */
interface Buckets {
  readonly width: number;
  readonly hist: Int32Array;
  readonly maxPosterior: number;
  readonly achievedL: number;
  readonly satisfied: boolean;
}

export function anatomyReport(
  ctx: MethodContext,
  req: DiversityRequirement,
  layout: AnatomyLayout,
  releasedColumns: EncodedColumn[],
): MethodReport {
  const { table, kernel, spec } = ctx;
  const { bucketization } = layout;
  const buckets = bucketsOf(req, layout, table.rowCount);
  // The original classes (distinct tuples over the other released columns) for the accuracy baseline.
  const others = releasedColumns.filter((c) => c.name !== req.attribute);
  const original = tupleIds(
    kernel,
    others.map((c) => c.codes),
    others.map((c) => c.dictionary.length),
    table.rowCount,
  );
  const originalHist = new Int32Array(original.count * buckets.width);
  for (let r = 0; r < table.rowCount; r++)
    originalHist[original.ids[r]! * buckets.width + req.column.codes[r]!]!++;
  const distribution = Float64Array.from(codeCounts(req.column), (c) => c / table.rowCount);
  const bucketGroups = {
    groups: bucketization.buckets,
    width: buckets.width,
    counts: buckets.hist,
    keep: () => true,
  };
  const disclosure = disclosureMeasures(
    req.attribute,
    bucketGroups,
    { groups: original.count, width: buckets.width, counts: originalHist, keep: () => true },
    distribution,
  );
  const measures = recoveredMeasures(req, layout, releasedColumns);
  // Every released column but the SA is published exactly: rows alike on them are what a linkage finds.
  const alike = Array.from(countCodes(original.ids, original.count));
  const sensitive = sensitiveDistribution(req.attribute, bucketGroups, distribution);
  return {
    rows: { input: table.rowCount, released: table.rowCount, suppressed: 0 },
    privacy: {
      satisfied: buckets.satisfied,
      models: [
        diversityModelReport(req, buckets.satisfied, { l: buckets.achievedL }, req.diversity.monotonic),
      ],
      classes: bucketization.buckets,
      ecSizeHistogram: classSizeHistogram(Array.from(bucketization.sizes)),
      reidentification: reidentificationRisk(
        alike,
        spec.report.riskThreshold,
        `the exact values of ${others.map((c) => c.name).join(', ')}, released unchanged`,
      ),
      ...(sensitive ? { sensitive: [sensitive] } : {}),
      disclosure: { [req.attribute]: disclosure },
    },
    utility: {
      metric: 'kl-divergence',
      value: measures.kl,
      ...measureFigures(measures),
    },
    sections: [bucketsSection(req, layout, buckets)],
    details: {
      anatomy: {
        sensitive: req.attribute,
        model: req.model,
        l: req.l,
        distinctPerBucket: distinctNeeded(req),
        buckets: bucketization.buckets,
        residualRows: bucketization.residual,
        bucketSizes: sizeFacts(bucketization.sizes),
        maxPosterior: buckets.maxPosterior,
        seed: spec.seed,
        uncertainty: measures.uncertainty,
      },
    },
  };
}

function bucketsOf(req: DiversityRequirement, { bucketization }: AnatomyLayout, rows: number): Buckets {
  const { buckets, sizes, bucketOf } = bucketization;
  const width = req.column.dictionary.length;
  const hist = new Int32Array(buckets * width);
  for (let r = 0; r < rows; r++) hist[bucketOf[r]! * width + req.column.codes[r]!]!++;
  let maxPosterior = 0;
  for (let b = 0; b < buckets; b++) {
    for (let s = 0; s < width; s++) maxPosterior = Math.max(maxPosterior, hist[b * width + s]! / sizes[b]!);
  }
  const { achievedL, satisfied } = bucketDiversity(req, hist, sizes, width);
  return { width, hist, maxPosterior, achievedL, satisfied };
}

/** KL, χ², query errors and uncertainty when an analyst spreads each row over its bucket's SA values. */
function recoveredMeasures(
  req: DiversityRequirement,
  layout: AnatomyLayout,
  releasedColumns: EncodedColumn[],
) {
  const { buckets, bucketOf } = layout.bucketization;
  const saIndex = releasedColumns.findIndex((c) => c.name === req.attribute);
  // Rows by bucket (the released order groups them by bucket id).
  const start = new Int32Array(buckets + 1);
  for (const b of bucketOf) start[layout.ids[b]!]!++;
  for (let id = 0; id < buckets; id++) start[id + 1]! += start[id]!;
  return distributionMeasures(
    releasedColumns,
    bucketEstimator(
      { rows: layout.order, start },
      releasedColumns.map((c) => c.codes),
      releasedColumns.map((c) => c.dictionary.length),
      releasedColumns.map((_, i) => (i === saIndex ? 1 : 0)),
    ),
  );
}

function bucketsSection(
  req: DiversityRequirement,
  { bucketization }: AnatomyLayout,
  buckets: Buckets,
): ReportSection {
  const facts = sizeFacts(bucketization.sizes);
  return {
    title: 'Anatomy buckets',
    facts: [
      ['sensitive attribute', req.attribute],
      ['model', `${req.model}, l = ${req.l}`],
      ['distinct values per bucket (group creation)', distinctNeeded(req)],
      ['buckets', bucketization.buckets],
      ['bucket size min / mean / max', `${facts.min} / ${facts.mean.toFixed(2)} / ${facts.max}`],
      ['rows placed by residue assignment', bucketization.residual],
      ['achieved l (worst bucket)', Number(buckets.achievedL.toFixed(4))],
      ['largest share of one SA value in a bucket', Number(buckets.maxPosterior.toFixed(4))],
      ['files', 'qit.csv/.arrow (QIs + bucket), st.csv/.arrow (bucket, SA, count), data.csv/.arrow'],
    ],
    note:
      'Quasi-identifiers are released unchanged; the link between them and the sensitive attribute ' +
      'is only the bucket. Utility: an analyst spreads each row over its bucket’s SA values.',
  };
}
