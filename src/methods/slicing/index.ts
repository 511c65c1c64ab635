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
import { DISTINCT_L_DIVERSITY } from '../../catalogue/l-diversity.ts';
import { claimsOf, type SlicingClaims } from '../../claims/index.ts';
import { encodeArrow } from '../../data/arrow.ts';
import { inputRows } from '../../data/checks.ts';
import { type CsvWriteOptions, encodeCsv } from '../../data/csv.ts';
import {
  compactDictionary,
  type EncodedColumn,
  isMissing,
  type OutputColumn,
  type RowNames,
} from '../../data/table.ts';
import { NoSolutionError, SpecError } from '../../errors.ts';
import { buildHierarchy, type Hierarchy } from '../../hierarchy/hierarchy.ts';
import { LEAST_PROTECTIVE_L, posteriorHolds } from '../../models/l-diversity.ts';
import type { AttributeSpec, ReleaseSpec, SlicingMethodSpec } from '../../release-spec/spec.ts';
import { thousands } from '../../util/format.ts';
import {
  checkEligibility,
  checkNumericScales,
  diversityRequirement,
  releasedAttributes,
  tupleIds,
} from '../bucket-common.ts';
import type { BuiltRelease, MethodContext, ReleaseMethod, StagedFile } from '../method.ts';
import { planColumns } from './columns.ts';
import { discretize, isNumericColumn, numberOrLast, numberOrNaN, phiSquared } from './correlation.ts';
import {
  InitialNotDiverse,
  partitionTuples,
  type SlicingProblem,
  type SplitAttribute,
  type TuplePartition,
} from './partition.ts';
import { slicingReport } from './report.ts';
import type { SlicedRelease } from './sliced.ts';

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
  const req = diversityRequirement(spec, table, 'slicing', [DISTINCT_L_DIVERSITY.name]);
  checkEligibility(req, table.rowCount, 'slicing');
  checkNumericScales(spec, table);
  const attributes = releasedAttributes(spec, table);
  const columns = attributes.map((a) => table.columns.find((c) => c.name === a.name)!);
  checkSeparators(attributes, columns, where, inputRows(spec, table));
  const sa = attributes.findIndex((a) => a.name === req.attribute);
  const n = table.rowCount;

  // 1. Attribute partitioning.
  const hierarchies = new Map<string, Hierarchy>();
  const hierarchyOf = (i: number) => {
    const a = attributes[i]!;
    if (!a.hierarchy) return undefined;
    if (!hierarchies.has(a.name)) {
      hierarchies.set(a.name, buildHierarchy(columns[i]!, a.hierarchy, inputRows(spec, table)));
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
      `put ${req.attribute} in a column with fewer or less predictive attributes (or alone)${req.l > LEAST_PROTECTIVE_L ? ',' : ' or'} use ` +
        `"columns" instead of "columnGroups"${lowerL(req.l)}`,
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
      `put the sensitive attribute in a column of its own${lowerL(req.l)}`,
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

/** ", or lower l" where a lower l still protects (never below LEAST_PROTECTIVE_L). */
function lowerL(l: number): string {
  return l > LEAST_PROTECTIVE_L ? `, or lower l (to no less than ${LEAST_PROTECTIVE_L})` : '';
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
    // The missing value sorts after every number (as in Mondrian); Number('') would read it as 0.
    const at = numberOrLast(column);
    codes.sort((x, y) => at(x) - at(y) || x - y); // two missing values (∞ − ∞) tie by code
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
    numeric: numeric ? Float64Array.from(codes, (c) => numberOrNaN(column.dictionary[c]!)) : null,
    numbers: numeric ? codes.filter((c) => !isMissing(column.dictionary[c]!)).length : d,
  };
}

/** `|` joins values and `+` joins names in the release: neither may occur inside them. */
function checkSeparators(
  attributes: AttributeSpec[],
  columns: EncodedColumn[],
  where: string,
  rows: RowNames,
): void {
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
    const piped = c.dictionary.map((v) => v.includes('|'));
    if (!piped.includes(true)) return;
    // Named by its first row, like the input's other refusals (never by its value).
    const row = c.codes.findIndex((code) => piped[code]);
    if (row < 0) return; // only in values no row holds
    throw new SpecError(
      'E_SLICING_SEPARATOR',
      `${where}: ${rows(c.name, [row])}, column '${c.name}': a value contains '|', which slicing uses to join a column's values`,
      'replace the character in that column of the input (the row named is the first such; there may be others)',
    );
  });
}

/** The staged files of a sliced table. */
export function slicingFiles(
  sliced: SlicedRelease,
  delimiter: string,
  options: CsvWriteOptions = {},
): StagedFile[] {
  return [
    { name: 'data.arrow', content: encodeArrow(sliced.output) },
    { name: 'data.csv', content: encodeCsv(sliced.output, delimiter, options) },
  ];
}

/** What a sliced table claims: the requirement it enforced, its columns and each row's bucket. */
export function slicingClaims(sliced: SlicedRelease): SlicingClaims {
  const { plan, partition, attributes } = sliced;
  return claimsOf('slicing', {
    enforced: { sensitive: sliced.req.attribute, l: sliced.req.l },
    buckets: partition.buckets.length,
    bucketOfRow: Array.from(sliced.bucketOfRow),
    columns: plan.columns.map((g) => g.map((i) => attributes[i]!.name)),
  });
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
    const files = time('write', () => slicingFiles(sliced, table.delimiter, spec.format));
    const report = time('measure', () => slicingReport(spec, table, ctx, sliced));
    return { files, report, claims: slicingClaims(sliced) };
  },
};
