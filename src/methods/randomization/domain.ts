/**
 * The categorical attributes randomization works on (docs/definitions.md §5): each QI and the SA become a
 * list of categories and a row → category code. Numeric attributes (scale `numeric`) are
 * discretized first: by a hierarchy level (`"discretize": { "age": { "level": 1 } }`) or into
 * equal-width bins (`{ "bins": 8 }`); without an explicit choice, level 1 of their hierarchy
 * or, with no hierarchy, 10 bins. Any attribute may be discretized by a level.
 */
import { basename } from 'node:path';
import { inputRows } from '../../data/checks.ts';
import { formatNumber } from '../../data/csv.ts';
import { type EncodedColumn, type EncodedTable, isMissing } from '../../data/table.ts';
import { InputError, SpecError } from '../../errors.ts';
import { buildHierarchy } from '../../hierarchy/hierarchy.ts';
import type { AttributeSpec, RandomizationMethodSpec, ReleaseSpec } from '../../release-spec/spec.ts';
import { allNumbers, isNumber } from '../../util/numbers.ts';

export type Discretization =
  | { readonly kind: 'values' }
  | { readonly kind: 'level'; readonly level: number }
  | { readonly kind: 'bins'; readonly bins: number; readonly edges: number[] };

export interface CategoricalAttribute {
  readonly name: string;
  readonly role: 'quasi-identifying' | 'sensitive';
  /** Category labels, index = category code. Only categories some input row has. */
  readonly categories: string[];
  /** Row → category code. */
  readonly codes: Int32Array;
  readonly discretization: Discretization;
}

export const DEFAULT_BINS = 10;

/**
 * A saved release's categories (its matrices.json), which `ppdp apply` reuses: each attribute
 * is discretized as it was (the same bin edges, not the new table's own), and a randomized one
 * keeps the saved category list (`categories`), so that its saved matrix applies as it is.
 */
export interface SavedDomains {
  /** The matrices.json they come from, named in errors. */
  readonly file: string;
  readonly attributes: Readonly<
    Record<string, { readonly categories?: readonly string[]; readonly discretization: Discretization }>
  >;
}

/** The QIs (spec order) then the sensitive attribute: the contingency table's modes, in Kronecker order. */
export function buildDomains(
  spec: ReleaseSpec,
  table: EncodedTable,
  method: RandomizationMethodSpec,
  sensitive: string,
  saved?: SavedDomains,
): CategoricalAttribute[] {
  const attrs = [
    ...spec.attributes.filter((a) => a.type === 'quasi-identifying'),
    spec.attributes.find((a) => a.name === sensitive)!,
  ];
  return attrs.map((a) => {
    const was = saved?.attributes[a.name];
    return was ? savedCategorical(spec, table, a, was, saved!.file) : categorical(spec, table, method, a);
  });
}

type Choice = { level: number } | { bins: number; edges?: readonly number[] } | undefined;

function categorical(
  spec: ReleaseSpec,
  table: EncodedTable,
  method: RandomizationMethodSpec,
  a: AttributeSpec,
  saved?: Choice | 'values',
): CategoricalAttribute {
  const where = basename(spec.file);
  const column = table.columns.find((c) => c.name === a.name)!;
  const role = a.type === 'sensitive' ? 'sensitive' : 'quasi-identifying';
  let choice: Choice = saved === 'values' ? undefined : (saved ?? method.discretize?.[a.name]);
  if (!choice && !saved && a.scale === 'numeric') {
    choice = a.hierarchy ? { level: 1 } : { bins: DEFAULT_BINS };
  }
  if (!choice) return byValues(a.name, role, column);
  if ('level' in choice) {
    if (!a.hierarchy) {
      throw new SpecError(
        'E_SPEC_HIERARCHY',
        `${where}: method.discretize.${a.name} asks for a hierarchy level, but attributes.${a.name} has no hierarchy`,
        'add a hierarchy to the attribute, or discretize it with { "bins": n }',
      );
    }
    const h = buildHierarchy(column, a.hierarchy, inputRows(spec, table));
    if (choice.level > h.height) {
      throw new SpecError(
        'E_SPEC_RANGE',
        `${where}: method.discretize.${a.name}.level is ${choice.level}, but the hierarchy has levels 0..${h.height}`,
        `choose a level between 0 and ${h.height}`,
      );
    }
    const levelTable = h.levelTables[choice.level]!;
    const labels = h.labels[choice.level]!;
    return compact(
      a.name,
      role,
      labels,
      Int32Array.from(column.codes, (c) => levelTable[c]!),
      { kind: 'level', level: choice.level },
    );
  }
  return byBins(a.name, role, column, choice.bins, where, 'edges' in choice ? choice.edges : undefined);
}

/**
 * An attribute discretized as the saved release did; a randomized one over the saved categories
 * (in their order, some perhaps held by no row now). A row outside the saved bins, or whose
 * category a saved matrix does not have, is refused, naming the first such row and the column
 * (never its value).
 */
function savedCategorical(
  spec: ReleaseSpec,
  table: EncodedTable,
  a: AttributeSpec,
  saved: SavedDomains['attributes'][string],
  file: string,
): CategoricalAttribute {
  const d = saved.discretization;
  const own = categorical(
    spec,
    table,
    spec.method as RandomizationMethodSpec,
    a,
    d.kind === 'values'
      ? 'values'
      : d.kind === 'level'
        ? { level: d.level }
        : { bins: d.bins, edges: d.edges },
  );
  // Released unrandomized: its own categories (those of the saved bins or level some row holds).
  const categories = saved.categories ?? own.categories;
  const index = new Map(categories.map((c, i) => [c, i]));
  const remap = own.categories.map((c) => index.get(c) ?? -1);
  const codes = Int32Array.from(own.codes, (c) => remap[c]!);
  // binOf puts a value below or above the saved edges in the first or last bin: not its bin.
  const column = table.columns.find((c) => c.name === a.name)!;
  const [low, high] = d.kind === 'bins' ? [d.edges[0]!, d.edges[d.edges.length - 1]!] : [0, 0];
  const outside = column.dictionary.map(
    (v) => d.kind === 'bins' && isNumber(v) && (Number(v) < low || Number(v) > high),
  );
  const row = codes.findIndex((c, r) => c < 0 || outside[column.codes[r]!]);
  if (row >= 0) {
    const bins = d.kind === 'bins';
    throw new InputError(
      bins ? 'E_APPLY_OUTSIDE_BINS' : 'E_APPLY_NEW_CATEGORY',
      `${inputRows(spec, table)(a.name, [row])}, column '${a.name}': the value ${bins ? 'lies outside the saved bins' : 'is none of the saved categories'} of ${a.name} in ${file} (the row named is the first such; there may be others)`,
      `the saved matrices cover only the ${bins ? 'range' : 'categories'} of the release they were saved with: release this table with ppdp release instead, or leave such rows out`,
    );
  }
  return { ...own, categories: [...categories], codes, discretization: d };
}

/** One category per distinct value: numeric order when every value is a number, else code-unit order. */
function byValues(
  name: string,
  role: CategoricalAttribute['role'],
  column: EncodedColumn,
): CategoricalAttribute {
  const dict = column.dictionary;
  const numeric = allNumbers(dict);
  const order = dict.map((_, i) => i);
  order.sort((x, y) =>
    numeric
      ? Number(dict[x]) - Number(dict[y]) || (dict[x]! < dict[y]! ? -1 : 1)
      : dict[x]! < dict[y]!
        ? -1
        : dict[x]! > dict[y]!
          ? 1
          : 0,
  );
  const rank = new Int32Array(dict.length);
  order.forEach((c, i) => {
    rank[c] = i;
  });
  return compact(
    name,
    role,
    order.map((c) => dict[c]!),
    Int32Array.from(column.codes, (c) => rank[c]!),
    { kind: 'values' },
  );
}

/** Equal-width bins over [min, max]: `[lo,hi)`, the last one closed `[lo,hi]`. */
export function binEdges(min: number, max: number, bins: number): number[] {
  if (max === min) return [min, max];
  // max − min overflows past ±8.9e307: then each edge is a weighted mean of min and max.
  const edge = Number.isFinite(max - min)
    ? (i: number) => min + ((max - min) * i) / bins
    : (i: number) => min * ((bins - i) / bins) + max * (i / bins);
  return Array.from({ length: bins + 1 }, (_, i) => (i === bins ? max : edge(i)));
}

export function binOf(x: number, edges: readonly number[]): number {
  const bins = edges.length - 1;
  let lo = 0;
  let hi = bins - 1;
  // last bin whose lower edge ≤ x
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (edges[mid]! <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export function binLabel(edges: readonly number[], b: number): string {
  const last = b === edges.length - 2;
  return `[${formatNumber(edges[b]!)},${formatNumber(edges[b + 1]!)}${last ? ']' : ')'}`;
}

function byBins(
  name: string,
  role: CategoricalAttribute['role'],
  column: EncodedColumn,
  bins: number,
  where: string,
  savedEdges?: readonly number[],
): CategoricalAttribute {
  const values = column.dictionary.map(Number);
  // The missing value is a category of its own after the bins, released as it is (empty).
  const missing = column.dictionary.map(isMissing);
  const bad = column.dictionary.findIndex((v, c) => !isNumber(v) && !missing[c]);
  if (bad >= 0) {
    throw new SpecError(
      'E_SPEC_DISCRETIZE',
      `${where}: attributes.${name} is binned, but some of its values are not numbers`,
      'bin only numeric columns, or discretize it by a hierarchy level ({ "level": n })',
    );
  }
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  values.forEach((v, c) => {
    if (missing[c]) return;
    min = Math.min(min, v);
    max = Math.max(max, v);
  });
  if (min > max) min = max = 0; // no numbers at all: one bin, never used
  const edges = savedEdges ? [...savedEdges] : binEdges(min, max, bins);
  const binOfCode = values.map((v, c) => (missing[c] ? edges.length - 1 : binOf(v, edges)));
  const labels = [...edges.slice(0, -1).map((_, b) => binLabel(edges, b)), ''];
  return compact(
    name,
    role,
    labels,
    Int32Array.from(column.codes, (c) => binOfCode[c]!),
    {
      kind: 'bins',
      bins: edges.length - 1,
      edges,
    },
  );
}

/** Keeps the labels some row uses, in the labels' order. */
function compact(
  name: string,
  role: CategoricalAttribute['role'],
  labels: readonly string[],
  codes: Int32Array,
  discretization: Discretization,
): CategoricalAttribute {
  const used = new Uint8Array(labels.length);
  for (let r = 0; r < codes.length; r++) used[codes[r]!] = 1;
  const remap = new Int32Array(labels.length).fill(-1);
  const categories: string[] = [];
  labels.forEach((l, i) => {
    if (used[i]) remap[i] = categories.push(l) - 1;
  });
  return { name, role, categories, codes: Int32Array.from(codes, (c) => remap[c]!), discretization };
}
