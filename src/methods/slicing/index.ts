/**
 * Slicing (Li, Li, Zhang, Molloy; docs/definitions.md §4) as a release method:
 * 1. attribute partitioning — φ² between released attributes, PAM into c columns, the SA in
 *    the column it correlates with best (correlation.ts, columns.ts);
 * 2. column generalization — not implemented (optional in the paper; see docs/methods/slicing.md);
 * 3. tuple partitioning with the l-diverse check (partition.ts);
 * 4. per-bucket random permutation of each column's values;
 * 5. membership measures and utility (measures.ts).
 * Release: `data.arrow`/`data.csv` with one column per slicing column, named by its attributes
 * joined with `+`, each value the attributes' values joined with `|`, plus `bucket`.
 * Verified by src/verify/slicing.ts.
 */
import { basename } from 'node:path';
import { encodeArrow } from '../../data/arrow.ts';
import { encodeCsv } from '../../data/csv.ts';
import {
  codeCounts,
  compactDictionary,
  countCodes,
  type EncodedColumn,
  type EncodedTable,
  type OutputColumn,
} from '../../data/table.ts';
import { NoSolutionError, SpecError } from '../../errors.ts';
import { buildHierarchy, type Hierarchy } from '../../hierarchy/hierarchy.ts';
import { distributionMeasures, measureFigures } from '../../metrics/contingency.ts';
import { sensitiveDistribution } from '../../metrics/disclosure.ts';
import { classSizeHistogram, reidentificationRisk } from '../../metrics/privacy.ts';
import { posteriorHolds } from '../../models/l-diversity.ts';
import type { AttributeSpec, ReleaseSpec, SlicingMethodSpec } from '../../spec/spec.ts';
import { thousands } from '../../util/format.ts';
import type { SlicingClaimsOfMethod } from '../../verify/index.ts';
import {
  checkEligibility,
  type DiversityRequirement,
  diversityModelReport,
  diversityRequirement,
  releasedAttributes,
  sizeFacts,
  tupleIds,
} from '../bucket-common.ts';
import { bucketEstimator } from '../bucket-estimator.ts';
import type { BuiltRelease, MethodContext, ReleaseMethod, StagedFile } from '../method.ts';
import { type ColumnPlan, planColumns } from './columns.ts';
import { discretize, isNumericColumn, phiSquared } from './correlation.ts';
import { type MembershipMeasures, membershipMeasures } from './measures.ts';
import {
  InitialNotDiverse,
  partitionTuples,
  type SlicingProblem,
  type SplitAttribute,
  type TuplePartition,
} from './partition.ts';

/** Everything up to the release files, shared by the method, the tests and benchmarks. */
export interface SlicedRelease {
  readonly req: DiversityRequirement;
  readonly attributes: AttributeSpec[];
  readonly columns: EncodedColumn[];
  readonly phi: number[][];
  readonly discretization: string[];
  readonly plan: ColumnPlan;
  readonly problem: SlicingProblem;
  readonly partition: TuplePartition;
  /** Per slicing column: row → code of its full value, and the value strings. */
  readonly valueCodes: Int32Array[];
  readonly valueStrings: string[][];
  /** Final bucket (partition order) → released id. */
  readonly ids: Int32Array;
  readonly output: OutputColumn[];
  /** Input row → released bucket id. */
  readonly bucketOfRow: Int32Array;
}

export function slicingSpec(spec: ReleaseSpec): SlicingMethodSpec {
  if (spec.method.name !== 'slicing') throw new Error(`not a slicing spec: ${spec.method.name}`);
  return spec.method;
}

export function sliceTable(
  ctx: Pick<MethodContext, 'spec' | 'table' | 'kernel' | 'time' | 'random'>,
): SlicedRelease {
  const { spec, table, kernel, time, random } = ctx;
  const method = slicingSpec(spec);
  const where = basename(spec.file);
  const req = diversityRequirement(spec, table, 'slicing', ['distinct-l-diversity']);
  checkEligibility(req, table.rowCount, 'slicing');
  const attributes = releasedAttributes(spec, table);
  const columns = attributes.map((a) => table.columns.find((c) => c.name === a.name)!);
  checkSeparators(attributes, columns, where);
  const sa = attributes.findIndex((a) => a.name === req.attribute);
  const n = table.rowCount;

  // 1. Attribute partitioning.
  const hierarchies = new Map<string, Hierarchy>();
  const hierarchyOf = (i: number) => {
    const a = attributes[i]!;
    if (!a.hierarchy) return undefined;
    if (!hierarchies.has(a.name)) {
      hierarchies.set(
        a.name,
        buildHierarchy(columns[i]!, a.hierarchy, a.type === 'quasi-identifying' || a.type === 'insensitive'),
      );
    }
    return hierarchies.get(a.name);
  };
  const numeric = attributes.map((a, i) => isNumericColumn(columns[i]!, a.scale));
  const { phi, discretization } = time('correlation', () => {
    const discrete = attributes.map((_, i) =>
      discretize(columns[i]!, numeric[i]!, numeric[i] ? hierarchyOf(i) : undefined),
    );
    const phi = attributes.map(() => new Array<number>(attributes.length).fill(1));
    for (let i = 0; i < attributes.length; i++) {
      for (let j = i + 1; j < attributes.length; j++) {
        const v = phiSquared(
          discrete[i]!.codes,
          discrete[i]!.domain,
          discrete[j]!.codes,
          discrete[j]!.domain,
        );
        phi[i]![j] = phi[j]![i] = v;
      }
    }
    return { phi, discretization: discrete.map((d) => d.how) };
  });
  const data = {
    names: attributes.map((a) => a.name),
    codes: columns.map((c) => c.codes),
    domains: columns.map((c) => c.dictionary.length),
    sa,
  };
  const plan = time('columns', () => planColumns(data, phi, req.l, method, where));
  const describe = (g: number[]) => g.map((i) => attributes[i]!.name).join('+');
  if (!posteriorHolds(plan.initialMaxP, req.l)) {
    const rest = plan.columns[plan.saColumn]!.filter((i) => i !== sa);
    throw new NoSolutionError(
      'E_NO_SOLUTION',
      `no slicing release with these column groups satisfies l-diversity with l = ${req.l} on ${req.attribute}: ` +
        `with the whole table as one bucket, the attributes sharing its column (${rest.map((i) => attributes[i]!.name).join(', ')}) ` +
        `already give p(t,s) = ${plan.initialMaxP.toFixed(4)} > 1/l = ${(1 / req.l).toFixed(4)} for some tuple, and ` +
        'tuple partitioning starts from that bucket',
      `put ${req.attribute} in a column with fewer or less predictive attributes (or alone), use "columns" instead of ` +
        `"columnGroups", or lower l`,
    );
  }

  // 2. Codes per slicing column: compared values (SA column: without the SA) and full values.
  const ids = (attrs: number[]) =>
    tupleIds(
      kernel,
      attrs.map((i) => columns[i]!.codes),
      attrs.map((i) => columns[i]!.dictionary.length),
      n,
    );
  const match = plan.columns.map((g, j) => ids(j === plan.saColumn ? g.filter((i) => i !== sa) : g));
  const full = plan.columns.map((g) => ids(g));
  const keys = tupleIds(
    kernel,
    match.map((m) => m.ids),
    match.map((m) => m.count),
    n,
  );
  const problem: SlicingProblem = {
    rows: n,
    l: req.l,
    matchCodes: match.map((m) => m.ids),
    matchDomains: match.map((m) => m.count),
    saColumn: plan.saColumn,
    sa: columns[sa]!.codes,
    saDomain: columns[sa]!.dictionary.length,
    keyOf: keys.ids,
    keys: keys.keys,
    keyCount: keys.count,
    split: attributes.flatMap((a, i) =>
      a.type === 'quasi-identifying' ? [splitAttribute(a, columns[i]!, numeric[i]!, hierarchyOf(i))] : [],
    ),
    mode: method.split,
    // Its own stream, apart from the release's permutations below.
    random: random('slicing-partition'),
  };

  // 3. Tuple partitioning.
  let partition: TuplePartition;
  try {
    partition = time('partition', () => partitionTuples(problem));
  } catch (e) {
    if (!(e instanceof InitialNotDiverse)) throw e;
    throw new NoSolutionError(
      'E_NO_SOLUTION',
      `no slicing release satisfies l-diversity with l = ${req.l} on ${req.attribute}: the single-bucket table ` +
        `gives p(t,s) = ${e.maxP.toFixed(4)} > 1/l`,
      'lower l, or put the sensitive attribute in a column of its own',
    );
  }

  // 4. Release: random bucket ids, rows by bucket id, each column permuted within each bucket.
  const releaseStream = random('slicing-release');
  const nb = partition.buckets.length;
  const idOf = Int32Array.from(releaseStream.permutation(nb), (p) => p + 1);
  const byId = new Int32Array(nb);
  for (let b = 0; b < nb; b++) byId[idOf[b]! - 1] = b;
  const bucketOfRow = new Int32Array(n);
  const released = time('apply', () => {
    const codes = plan.columns.map(() => new Int32Array(n));
    const bucketValues = new Float64Array(n);
    let at = 0;
    for (let id = 1; id <= nb; id++) {
      const b = partition.buckets[byId[id - 1]!]!;
      const size = b.end - b.start;
      for (let i = b.start; i < b.end; i++) bucketOfRow[partition.rows[i]!] = id;
      plan.columns.forEach((_, j) => {
        const perm = releaseStream.permutation(size);
        for (let i = 0; i < size; i++) codes[j]![at + i] = full[j]!.ids[partition.rows[b.start + perm[i]!]!]!;
      });
      bucketValues.fill(id, at, at + size);
      at += size;
    }
    const strings = plan.columns.map((g, j) =>
      Array.from({ length: full[j]!.count }, (_, v) =>
        g.map((i, x) => columns[i]!.dictionary[full[j]!.keys[x]![v]!]!).join('|'),
      ),
    );
    const output: OutputColumn[] = [
      ...plan.columns.map((g, j) => compactDictionary(describe(g), strings[j]!, codes[j]!)),
      { name: 'bucket', kind: 'number', values: bucketValues },
    ];
    return { output, strings };
  });

  return {
    req,
    attributes,
    columns,
    phi,
    discretization,
    plan,
    problem,
    partition,
    valueCodes: full.map((f) => f.ids),
    valueStrings: released.strings,
    ids: idOf,
    output: released.output,
    bucketOfRow,
  };
}

/** Value order for Mondrian-like splits: numeric order, hierarchy order, or string order. */
function splitAttribute(
  a: AttributeSpec,
  column: EncodedColumn,
  numeric: boolean,
  hierarchy: Hierarchy | undefined,
): SplitAttribute {
  const d = column.dictionary.length;
  const codes = Array.from({ length: d }, (_, i) => i);
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  if (numeric) {
    codes.sort((x, y) => Number(column.dictionary[x]) - Number(column.dictionary[y]) || x - y);
  } else if (hierarchy) {
    // Siblings together: compare the labels from the top level down, then the value.
    const path = (code: number) => {
      const labels: string[] = [];
      for (let lv = hierarchy.height; lv >= 0; lv--)
        labels.push(hierarchy.labels[lv]![hierarchy.levelTables[lv]![code]!]!);
      return labels;
    };
    const paths = codes.map(path);
    codes.sort((x, y) => {
      for (let i = 0; i < paths[x]!.length; i++) {
        const c = cmp(paths[x]![i]!, paths[y]![i]!);
        if (c !== 0) return c;
      }
      return x - y;
    });
  } else {
    codes.sort((x, y) => cmp(column.dictionary[x]!, column.dictionary[y]!) || x - y);
  }
  const rankOf = new Int32Array(d);
  codes.forEach((code, rank) => {
    rankOf[code] = rank;
  });
  return {
    name: a.name,
    ranks: Int32Array.from(column.codes, (c) => rankOf[c]!),
    domain: d,
    numeric: numeric ? Float64Array.from(codes, (c) => Number(column.dictionary[c])) : null,
  };
}

/** `|` joins values and `+` joins names in the release: neither may occur inside them. */
function checkSeparators(attributes: AttributeSpec[], columns: EncodedColumn[], where: string): void {
  for (const a of attributes) {
    if (a.name.includes('+') || a.name.includes('|')) {
      throw new SpecError(
        'E_SPEC_VALUE',
        `${where}: attribute '${a.name}' has '+' or '|' in its name, which slicing uses to join names and values`,
        'rename the column in the input',
      );
    }
  }
  columns.forEach((c) => {
    if (c.dictionary.some((v) => v.includes('|'))) {
      throw new SpecError(
        'E_SLICING_SEPARATOR',
        `${where}: column '${c.name}' has values containing '|', which slicing uses to join a column's values`,
        'replace the character in that column of the input',
      );
    }
  });
}

/** The staged files of a sliced table. */
export function slicingFiles(sliced: SlicedRelease, delimiter: string): StagedFile[] {
  return [
    { name: 'data.arrow', content: encodeArrow(sliced.output) },
    { name: 'data.csv', content: encodeCsv(sliced.output, delimiter) },
  ];
}

/** What a sliced table claims: the requirement it enforced, its columns and each row's bucket. */
export function slicingClaims(sliced: SlicedRelease): SlicingClaimsOfMethod {
  const { plan, partition, attributes } = sliced;
  return {
    sensitive: sliced.req.attribute,
    l: sliced.req.l,
    buckets: partition.buckets.length,
    bucketOfRow: Array.from(sliced.bucketOfRow),
    columns: plan.columns.map((g) => g.map((i) => attributes[i]!.name)),
  };
}

export const slicingMethod: ReleaseMethod = {
  name: 'slicing',
  build(ctx: MethodContext): BuiltRelease {
    const { spec, table, time, say } = ctx;
    const sliced = sliceTable(ctx);
    const { plan, partition, attributes } = sliced;
    say(
      `${plan.columns.length} columns (${plan.columns.map((g) => g.map((i) => attributes[i]!.name).join('+')).join(', ')}); ` +
        `${thousands(partition.buckets.length)} buckets after ${partition.trials} trial splits`,
    );
    const files = time('write', () => slicingFiles(sliced, table.delimiter));
    const report = time('measure', () => reportOf(spec, table, ctx, sliced));
    return { files, report, claims: slicingClaims(sliced) };
  },
};

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

function reportOf(
  spec: ReleaseSpec,
  table: EncodedTable,
  ctx: MethodContext,
  sliced: SlicedRelease,
): BuiltRelease['report'] {
  const { req, plan, partition, attributes, phi, columns } = sliced;
  const name = (i: number) => attributes[i]!.name;
  const describe = (g: number[]) => g.map(name).join('+');
  const sizes = partition.buckets.map((b) => b.end - b.start);
  const facts = sizeFacts(sizes);
  const { membership, kl } = slicingMeasures(ctx.kernel, sliced, ctx.random);
  const columnOf = attributes.map((_, a) => plan.columns.findIndex((g) => g.includes(a)));
  const measures = distributionMeasures(
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
  const achievedL = partition.maxP > 0 ? 1 / partition.maxP : Number.POSITIVE_INFINITY;
  const satisfied = posteriorHolds(partition.maxP, req.l);
  // Distinct SA values per bucket (the bucket-level l, for comparison with Anatomy).
  const saCodes = columns[attributes.findIndex((a) => a.name === req.attribute)]!.codes;
  let minDistinct = Number.POSITIVE_INFINITY;
  for (const b of partition.buckets) {
    const seen = new Set<number>();
    for (let i = b.start; i < b.end; i++) seen.add(saCodes[partition.rows[i]!]!);
    minDistinct = Math.min(minDistinct, seen.size);
  }
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
        `the exact values of column ${j + 1} (${describe(g)}), released unchanged`,
      ),
    )
    .sort((a, b) => b.prosecutor.mean - a.prosecutor.mean)[0];
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
  const within = (g: number[]) => {
    const pairs: number[] = [];
    for (let x = 0; x < g.length; x++) for (let y = x + 1; y < g.length; y++) pairs.push(phi[g[x]!]![g[y]!]!);
    return pairs.length ? pairs.reduce((s, v) => s + v, 0) / pairs.length : null;
  };
  const round = (x: number, digits = 4) => Number(x.toFixed(digits));
  const fmtBins = (bins: { label: string; share: number }[]) =>
    bins.map((b) => `${b.label}: ${(100 * b.share).toFixed(1)}%`).join(', ');

  return {
    rows: { input: table.rowCount, released: table.rowCount, suppressed: 0 },
    privacy: {
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
    },
    utility: {
      metric: 'kl-divergence',
      value: measures.kl,
      ...measureFigures(measures),
      klFullJoint: kl,
    },
    sections: [
      {
        title: 'Slicing columns',
        facts: [
          ['columns', plan.columns.length],
          ['chosen by', plan.source === 'given' ? 'columnGroups in the spec' : 'PAM on 1 − φ²'],
          ...plan.columns.map((g, j): [string, string] => [
            `column ${j + 1}${j === plan.saColumn ? ' (sensitive)' : ''}`,
            `${describe(g)}${g.length > 1 ? ` — mean φ² within ${round(within(g)!)}` : ''}`,
          ]),
          ...(plan.moved.length > 0
            ? [
                [
                  'moved out of the sensitive column',
                  `${plan.moved.map(name).join(', ')} (so the single-bucket table is l-diverse)`,
                ] as [string, string],
              ]
            : []),
          ['p(t,s) max with one bucket', round(plan.initialMaxP)],
        ],
        note:
          'φ² is the mean-square contingency coefficient between two attributes (numeric ones discretized); ' +
          'attributes that correlate strongly share a column, so their association is kept.',
      },
      {
        title: 'Slicing buckets',
        facts: [
          ['buckets', partition.buckets.length],
          ['bucket size min / mean / max', `${facts.min} / ${facts.mean.toFixed(2)} / ${facts.max}`],
          ['max p(t,s) over original tuples', round(partition.maxP, 6)],
          ['1/l', round(1 / req.l, 6)],
          ['fewest distinct SA values in a bucket', minDistinct],
          [
            'splits',
            sliced.problem.mode === 'random' ? 'random halves' : 'Mondrian (median of the widest QI)',
          ],
          ['trial splits / accepted', `${partition.trials} / ${partition.accepted}`],
        ],
      },
      {
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
      },
    ],
    details: {
      slicing: {
        sensitive: req.attribute,
        l: req.l,
        columns: plan.columns.map((g) => g.map(name)),
        sensitiveColumn: plan.saColumn,
        columnSource: plan.source,
        moved: plan.moved.map(name),
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
        bucketSizes: facts,
        initialMaxP: plan.initialMaxP,
        maxP: partition.maxP,
        trials: partition.trials,
        accepted: partition.accepted,
        keys: sliced.problem.keyCount,
        keysVisited: partition.keysVisited,
        membership,
        uncertainty: measures.uncertainty,
        seed: spec.seed,
      },
    },
  };
}

function precise(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(12)) : x;
}
