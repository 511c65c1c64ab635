/**
 * From a spec and a table to Mondrian's partitioning problem: one dimension per QI (numeric
 * ranks, ordinal ranks or nominal codes, with hierarchy level tables for categorical QIs),
 * the sensitive attributes' codes, and the privacy models.
 *
 * Which QIs are numeric: `"scale": "numeric"`, or a QI with no hierarchy whose values are all
 * numbers. A QI with a hierarchy and no scale (or `"nominal"`) is split along its hierarchy
 * even when its values are numbers — the hierarchy says how the user wants it generalized.
 * `"scale": "ordinal"` needs a hierarchy: it is split at the median of its value order (the
 * numbers' order when every value is a number, else the order of the hierarchy file's rows
 * or of a groups builder's first mapping, else lexicographic; the missing value last) and
 * released as the lowest common ancestor.
 */
import { basename } from 'node:path';
import { DISTINCT_L_DIVERSITY, ENTROPY_L_DIVERSITY } from '../../catalogue/l-diversity.ts';
import { checkNumbers, inputRows } from '../../data/checks.ts';
import {
  codeCounts,
  type EncodedColumn,
  type EncodedTable,
  isMissing,
  presentCodes,
  type RowNames,
} from '../../data/table.ts';
import { NoSolutionError, SpecError } from '../../errors.ts';
import { buildHierarchy, hierarchyRows } from '../../hierarchy/hierarchy.ts';
import { buildModels, type SensitiveAttribute, sensitiveAttributes } from '../../models/index.ts';
import { dominance, entropyOf, LEAST_PROTECTIVE_L, noDiversityHint } from '../../models/l-diversity.ts';
import type { PrivacyModel } from '../../models/model.ts';
import type { AttributeSpec, MondrianMethodSpec, ReleaseSpec } from '../../release-spec/spec.ts';
import { isNumber } from '../../util/numbers.ts';
import type { DimKind, MondrianDim, PartitionProblem, SensitiveCodes } from './partition.ts';

/** The label of the root Mondrian adds when a hierarchy's top level has several labels. */
export const ROOT_LABEL = '*';

export interface PreparedMondrian {
  readonly spec: ReleaseSpec;
  readonly method: MondrianMethodSpec;
  readonly table: EncodedTable;
  readonly qis: AttributeSpec[];
  readonly problem: PartitionProblem;
}

export function mondrianSpec(spec: ReleaseSpec): MondrianMethodSpec {
  if (spec.method.name !== 'mondrian') throw new Error(`not a Mondrian spec: ${spec.method.name}`);
  return spec.method;
}

export function prepareMondrian(spec: ReleaseSpec, table: EncodedTable): PreparedMondrian {
  const method = mondrianSpec(spec);
  const where = basename(spec.file);
  const qis = spec.attributes.filter((a) => a.type === 'quasi-identifying');
  const names = new Set(table.columns.map((c) => c.name));
  const rows = inputRows(spec, table);
  const dims = qis.map((a) => {
    const column = table.columns.find((c) => c.name === a.name)!;
    const kind = kindOf(a, column, where);
    if (kind === 'numeric') {
      for (const suffix of ['_lo', '_hi']) {
        if (names.has(a.name + suffix)) {
          throw new SpecError(
            'E_SPEC_COLUMN',
            `${where}: attributes.${a.name} is released as a range with a '${a.name}${suffix}' column, but the input already has a column of that name`,
            'rename the input column',
          );
        }
      }
      checkNumbers(column, rows, 'fix the value, or give the attribute a hierarchy and "scale": "nominal"');
      return numericDim(a, column);
    }
    return categoricalDim(a, column, kind, rows);
  });
  const sensitive = sensitiveAttributes(spec, table);
  const models = buildModels(spec.privacy, table.rowCount, where, sensitive);
  const saCodes: SensitiveCodes[] = sensitive.map((s) => ({
    name: s.name,
    codes: s.column.codes,
    width: s.column.dictionary.length,
  }));
  checkRoot(models, sensitive, table.rowCount);
  return {
    spec,
    method,
    table,
    qis,
    problem: { rows: table.rowCount, dims, models, sensitive: saCodes, mode: method.mode },
  };
}

function kindOf(a: AttributeSpec, column: EncodedColumn, where: string): DimKind {
  if (a.scale === 'numeric') return 'numeric';
  if (a.scale === 'ordinal') {
    if (a.hierarchy) return 'ordinal';
    throw new SpecError(
      'E_SPEC_HIERARCHY',
      `${where}: attributes.${a.name} is ordinal but has no hierarchy, which Mondrian releases its lowest common ancestors from`,
      'add "hierarchy" (its rows listed in the value order), or use "scale": "numeric" for numbers',
    );
  }
  if (a.hierarchy) return 'nominal';
  const present = presentCodes(column);
  // Missing values allowed, unlike `allNumbers`: Mondrian releases them as missing, never in a range.
  if (column.dictionary.every((v, c) => !present[c] || isNumber(v) || isMissing(v))) return 'numeric';
  throw new SpecError(
    'E_SPEC_HIERARCHY',
    `${where}: attributes.${a.name} is a categorical quasi-identifier without a hierarchy`,
    'add "hierarchy" (a CSV file or a builder), or "scale": "numeric" if its values are numbers',
  );
}

/**
 * A numeric dimension: keys are the ranks of the values. The missing value (an empty cell,
 * with `emptyCells: "value"`) gets the key after the largest number: the driver first cuts it
 * off as a part of its own, released as missing; a part that must keep both is released as
 * `*` — a range never stands for a missing value.
 */
function numericDim(a: AttributeSpec, column: EncodedColumn): MondrianDim {
  const present = presentCodes(column);
  const numbers = column.dictionary.map((v) => (isNumber(v) ? Number(v) : Number.NaN));
  const missing = column.dictionary.map((v, c) => present[c] === 1 && isMissing(v));
  const values = Float64Array.from(
    new Set(numbers.filter((x, c) => present[c] === 1 && !Number.isNaN(x))),
  ).sort();
  const rank = new Map<number, number>();
  values.forEach((v, i) => {
    rank.set(v, i);
  });
  const keyOf = Int32Array.from(numbers, (x, c) => (missing[c] ? values.length : (rank.get(x) ?? 0)));
  return {
    name: a.name,
    kind: 'numeric',
    keys: Int32Array.from(column.codes, (c) => keyOf[c]!),
    domain: Math.max(1, values.length + (missing.includes(true) ? 1 : 0)),
    values,
    levels: null,
    labels: null,
    leaves: null,
    distinct: values.length,
  };
}

function categoricalDim(
  a: AttributeSpec,
  column: EncodedColumn,
  kind: 'ordinal' | 'nominal',
  rows: RowNames,
): MondrianDim {
  const h = buildHierarchy(column, a.hierarchy!, rows);
  const present = presentCodes(column);
  const dict = column.dictionary;
  // Keys: ranks of the present values — in hierarchy order (subtree by subtree, so key order
  // keeps siblings together) for nominal QIs, in value order for ordinal ones.
  const codes = dict.map((_, c) => c).filter((c) => present[c] === 1);
  if (kind === 'nominal') {
    codes.sort((x, y) => {
      for (let l = h.height; l >= 1; l--) {
        const d = h.levelTables[l]![x]! - h.levelTables[l]![y]!;
        if (d !== 0) return d;
      }
      return x - y;
    });
  } else {
    if (codes.every((c) => isNumber(dict[c]!) || isMissing(dict[c]!))) {
      const at = (c: number) => (isMissing(dict[c]!) ? Number.POSITIVE_INFINITY : Number(dict[c]));
      codes.sort((x, y) => at(x) - at(y) || 0); // two missing values (∞ − ∞) tie
    } else if (a.hierarchy!.kind === 'file' || a.hierarchy!.kind === 'groups') {
      // The order the user listed the values in: the file's rows, or the first mapping's keys.
      const listed =
        a.hierarchy!.kind === 'groups'
          ? Object.keys(a.hierarchy!.levels[0]!)
          : hierarchyRows(column, a.hierarchy!).map((row) => row[0]!);
      const position = new Map(listed.map((v, i) => [v, i]));
      // The missing value (not listed by a groups builder) comes last.
      const at = (code: number) => position.get(dict[code]!) ?? listed.length;
      codes.sort((x, y) => at(x) - at(y));
    } else codes.sort((x, y) => (dict[x]! < dict[y]! ? -1 : dict[x]! > dict[y]! ? 1 : 0));
  }
  const codeOfKey = Int32Array.from(codes);
  const keyOfCode = new Int32Array(dict.length);
  codeOfKey.forEach((code, key) => {
    keyOfCode[code] = key;
  });
  const domain = Math.max(1, codeOfKey.length);
  const levels: Int32Array[] = [Int32Array.from({ length: domain }, (_, key) => key)];
  const labels: string[][] = [Array.from(codeOfKey, (code) => dict[code]!)];
  const leaves: Int32Array[] = [new Int32Array(domain).fill(1)];
  for (let l = 1; l <= h.height; l++) {
    levels.push(Int32Array.from(codeOfKey, (code) => h.levelTables[l]![code]!));
    labels.push(h.labels[l]!);
    leaves.push(h.leaves[l]!);
  }
  // A single root on top: the kernels stop climbing there.
  const top = levels[levels.length - 1]!;
  const roots = new Set<number>();
  codeOfKey.forEach((code, key) => {
    if (present[code]) roots.add(top[key]!);
  });
  if (roots.size > 1) {
    levels.push(new Int32Array(domain));
    labels.push([ROOT_LABEL]);
    leaves.push(Int32Array.of(h.domain));
  }
  return {
    name: a.name,
    kind,
    keys: Int32Array.from(column.codes, (c) => keyOfCode[c]!),
    domain,
    values: null,
    levels,
    labels,
    leaves,
    distinct: h.domain,
  };
}

/**
 * Mondrian only refines the whole table: when the whole table fails a model, no release
 * exists (for k, distinct and entropy l-diversity no partition at all can satisfy it — a
 * class never has more distinct values than the table, and by concavity of entropy some
 * class is at most as diverse as the table).
 */
function checkRoot(
  models: readonly PrivacyModel[],
  sensitive: readonly SensitiveAttribute[],
  rows: number,
): void {
  for (const model of models) {
    const sa = sensitive.find((s) => s.name === model.attribute);
    const histogram = sa ? codeCounts(sa.column) : null;
    if (model.holds({ size: rows, histogram })) continue;
    const spec = model.spec;
    const name = model.attribute ?? '';
    const values = histogram ? dominance(histogram, sa!.column.dictionary) : undefined;
    const { most: top, distinct } = values ?? { most: 0, distinct: 0 };
    const frequency =
      histogram && 'l' in spec
        ? ` Its most frequent value occurs in ${top} of ${rows} rows; a partition where no value makes up more than 1/l of any class needs ${top} ≤ N/l = ${fmt(rows / spec.l)}, i.e. l ≤ ${fmt(rows / top)}.`
        : '';
    let why: string;
    let hint = 'relax the model';
    switch (spec.model) {
      case DISTINCT_L_DIVERSITY.name:
        why = `the whole table has only ${distinct} distinct values of '${name}', and no class can have more than the table`;
        hint =
          distinct >= LEAST_PROTECTIVE_L
            ? `l can be at most ${distinct} for this attribute`
            : noDiversityHint(name, values!);
        break;
      case ENTROPY_L_DIVERSITY.name: {
        const most = Math.exp(entropyOf(histogram!, rows));
        why = `the entropy of '${name}' over the whole table is ln(${fmt(most)}) < ln(${spec.l}), and by concavity of entropy some class of any partition is at most as diverse as the table`;
        hint =
          most >= LEAST_PROTECTIVE_L
            ? `l can be at most ${fmt(most)} for this attribute`
            : noDiversityHint(name, values!);
        break;
      }
      default:
        why = `the whole table fails it (${model.measureName} = ${fmt(model.measure({ size: rows, histogram }))}), and Mondrian only splits the whole table into finer classes`;
    }
    throw new NoSolutionError(
      'E_NO_SOLUTION',
      `no Mondrian release satisfies ${spec.model} (${Object.entries(spec)
        .filter(([key]) => key !== 'model')
        .map(([key, v]) => `${key} = ${v}`)
        .join(', ')}): ${why}.${frequency}`,
      hint,
    );
  }
}

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(2);
}
