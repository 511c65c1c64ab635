/**
 * The population table of k-map and δ-presence, as the search counts it: its quasi-identifier
 * tuples, distinct with their counts, in the sample's codes (values only the population holds
 * get codes after the sample's), with level tables that generalize them into the sample
 * hierarchies' label codes. A node groups these tuples with the same levels as the sample's,
 * so a sample class and the population records it matches share one generalized tuple.
 *
 * The sample is matched to the population by quasi-identifier values, compared as text: it
 * must be a subset (every input row's QI tuple occurs in the population at least as many
 * times as in the input). Each sample tuple then points to its population tuple, and a sample
 * class's population count is that of its representative's population class.
 */
import { basename } from 'node:path';
import { columnsHint, formatOf, readTable } from '../../data/read.ts';
import type { EncodedColumn } from '../../data/table.ts';
import { HierarchyError, PpdpError, SpecError } from '../../errors.ts';
import { buildHierarchy, type Hierarchy } from '../../hierarchy/hierarchy.ts';
import type { GroupingKernel } from '../../kernels/groupby/kernel.ts';
import { isPopulationModel, missingTexts, type ReleaseSpec } from '../../release-spec/spec.ts';
import { thousands } from '../../util/format.ts';

export interface PopulationTuples {
  /** Per QI: each distinct population tuple's code. */
  readonly columns: Int32Array[];
  /** Records per distinct tuple. */
  readonly counts: Int32Array;
  /** Per QI: its code domain (the sample's dictionary, then the population's own values). */
  readonly domains: number[];
  /** Per QI, per level: code → label code (the sample hierarchy's, then labels only the population reaches). */
  readonly tables: Int32Array[][];
  /** Per distinct sample tuple: its population tuple. */
  readonly tupleOf: Int32Array;
  /** Records in the population table. */
  readonly rows: number;
}

/**
 * The population of the spec's k-map or δ-presence model, or undefined when it names none.
 * `qis` and `hierarchies` are the sample's, `sample` its distinct QI tuples with counts.
 * @throws SpecError naming the setting when the table lacks a QI or the sample is not a subset.
 */
export function preparePopulation(
  spec: ReleaseSpec,
  qis: readonly EncodedColumn[],
  hierarchies: readonly Hierarchy[],
  sample: { readonly columns: readonly Int32Array[]; readonly counts: Int32Array },
  kernel: GroupingKernel,
): PopulationTuples | undefined {
  const at = spec.privacy.findIndex(isPopulationModel);
  if (at < 0) return undefined;
  const path = (spec.privacy[at] as { population: string }).population;
  const where = `${basename(spec.file)}: privacy[${at}].population (${basename(path)})`;
  const table = readTable(path, {
    delimiter: formatOf(path) === 'csv' ? spec.format.delimiter : undefined,
    ...(spec.format.decimal ? { decimal: spec.format.decimal } : {}),
    missing: missingTexts(spec),
  });
  const columns: Int32Array[] = [];
  const domains: number[] = [];
  const tables: Int32Array[][] = [];
  qis.forEach((qi, i) => {
    const column = table.columns.find((c) => c.name === qi.name);
    if (!column) {
      throw new SpecError(
        'E_POPULATION_COLUMN',
        `${where} has no column '${qi.name}', a quasi-identifier of the spec`,
        `the population table holds the input's quasi-identifiers under the same names; ${columnsHint(table)}`,
      );
    }
    const own = new Map<string, number>();
    qi.dictionary.forEach((v, code) => {
      if (!own.has(v)) own.set(v, code);
    });
    const extras: string[] = [];
    const recode = Int32Array.from(column.dictionary, (v) => {
      const code = own.get(v);
      if (code !== undefined) return code;
      extras.push(v);
      return qi.dictionary.length + extras.length - 1;
    });
    columns.push(Int32Array.from(column.codes, (c) => recode[c]!));
    domains.push(qi.dictionary.length + extras.length);
    tables.push(levelTables(spec, qi, hierarchies[i]!, extras, where));
  });
  const session = kernel.open({ columns, domains }, []);
  const { groups, sizes } = session.group(null);
  const distinct = session.keys(groups);
  session.dispose();
  const tupleOf = matchSample(sample, distinct, sizes, where);
  return { columns: distinct, counts: sizes, domains, tables, tupleOf, rows: table.rowCount };
}

/**
 * The sample hierarchy's level tables extended to the population's own values: each takes the
 * label its hierarchy gives it at a level (its code when the sample has that label, a new one
 * else), and the sample's top label at the top (the lattice's heights are the sample's).
 */
function levelTables(
  spec: ReleaseSpec,
  qi: EncodedColumn,
  hierarchy: Hierarchy,
  extras: readonly string[],
  where: string,
): Int32Array[] {
  if (extras.length === 0) return hierarchy.levelTables;
  const attribute = spec.attributes.find((a) => a.name === qi.name)!;
  let own: Hierarchy;
  try {
    own = buildHierarchy(
      { name: qi.name, dictionary: [...extras], codes: Int32Array.from(extras, (_, j) => j) },
      attribute.hierarchy!,
    );
  } catch (e) {
    if (!(e instanceof PpdpError)) throw e;
    throw new HierarchyError(
      e.code,
      `${where}: values of column '${qi.name}' that only the population holds do not fit its hierarchy: ${e.message}`,
      e.hint,
    );
  }
  const d = qi.dictionary.length;
  const height = hierarchy.height;
  return hierarchy.levelTables.map((table, l) => {
    const out = new Int32Array(d + extras.length);
    out.set(table.subarray(0, d));
    const labels = hierarchy.labels[l]!;
    const index = new Map(labels.map((label, code) => [label, code]));
    let next = labels.length;
    const top = table[0]!;
    for (let j = 0; j < extras.length; j++) {
      if (l === 0) out[d + j] = d + j;
      else if (l === height) out[d + j] = top;
      else {
        const level = Math.min(l, own.height);
        const label = own.labels[level]![own.levelTables[level]![j]!]!;
        let code = index.get(label);
        if (code === undefined) index.set(label, (code = next++));
        out[d + j] = code;
      }
    }
    return out;
  });
}

/**
 * Each distinct sample tuple's population tuple (same codes), checking that the population
 * holds every sample tuple at least as often as the sample does.
 */
function matchSample(
  sample: { readonly columns: readonly Int32Array[]; readonly counts: Int32Array },
  population: readonly Int32Array[],
  sizes: Int32Array,
  where: string,
): Int32Array {
  const key = (cols: readonly Int32Array[], t: number) => cols.map((c) => c[t]!).join(',');
  const index = new Map<string, number>();
  for (let t = 0; t < sizes.length; t++) index.set(key(population, t), t);
  const n = sample.counts.length;
  const tupleOf = new Int32Array(n);
  const used = new Float64Array(sizes.length);
  let missing = 0;
  for (let t = 0; t < n; t++) {
    const p = index.get(key(sample.columns, t));
    if (p === undefined) {
      missing += sample.counts[t]!;
      continue;
    }
    tupleOf[t] = p;
    used[p]! += sample.counts[t]!;
  }
  let beyond = 0;
  for (let p = 0; p < sizes.length; p++) beyond += Math.max(0, used[p]! - sizes[p]!);
  if (missing + beyond > 0) {
    throw new SpecError(
      'E_POPULATION_SUBSET',
      `${where}: the input is not a subset of the population: ${thousands(missing + beyond)} input rows have a combination of quasi-identifier values that the population table holds fewer times than the input`,
      'k-map and δ-presence match each input row to a population record with the same quasi-identifier values (compared as text): give a population table that holds every input row',
    );
  }
  return tupleOf;
}
