/**
 * Generalization hierarchies, bound to one encoded column: per level, a table from the
 * column's codes to label codes (what the hot loops use) and the labels themselves (what the
 * release shows).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { readHierarchyCells } from '../data/hierarchy-file.ts';
import { checkHierarchySize } from '../data/limits.ts';
import { columnRows, type EncodedColumn, isMissing, presentCodes, type RowNames } from '../data/table.ts';
import { HierarchyError } from '../errors.ts';
import type { HierarchySpec } from '../release-spec/spec.ts';
import { PerDictionary } from '../util/per-dictionary.ts';
import {
  checkRefused,
  dateGrid,
  type Grid,
  gridRows,
  groupGrid,
  intervalGrid,
  maskGrid,
  maskHeight,
  missingRow,
  type Rows,
  rowsGrid,
} from './builders.ts';

export interface Hierarchy {
  readonly attribute: string;
  /** Number of levels above the original values (level 0). */
  readonly height: number;
  /** levelTables[l][code] = label code at level l; level 0 is the identity. */
  readonly levelTables: Int32Array[];
  /** labels[l][labelCode] = the released string. labels[0] is the column's dictionary. */
  readonly labels: string[][];
  /** leaves[l][labelCode] = how many distinct input values the label covers (for NCP). */
  readonly leaves: Int32Array[];
  /** Distinct values present in the input. */
  readonly domain: number;
  /**
   * The hierarchy's rows: a file's every row, a builder's one per value present (ARX's Loss
   * counts a column's domain over these, docs/definitions.md §6).
   */
  readonly rows: number;
  /** rowsUnder[l][labelCode] = how many of those rows carry the label at level l. */
  readonly rowsUnder: Int32Array[];
  /** Where the hierarchy came from, for messages. */
  readonly source: string;
}

/**
 * Builds the hierarchy of `column` from its spec. Its errors name the file, rows and levels,
 * never a value or label: a hierarchy's labels are often values of the data. `rows` names the
 * rows of the column they point to, as the column's table places them (src/data/checks.ts,
 * inputRows).
 */
export function buildHierarchy(
  column: EncodedColumn,
  spec: HierarchySpec,
  rows: RowNames = columnRows,
): Hierarchy {
  const source = hierarchySource(spec);
  // A file is read again each time (it may change between releases), and what its bytes make
  // with the dictionary is kept (they are parsed only then); a builder's hierarchy follows from
  // the spec and the dictionary alone: shards of one input, and releases of one input in one
  // process, share theirs.
  const bytes = spec.kind === 'file' ? hierarchyBytes(spec.path) : undefined;
  const key =
    `${column.name}\u0000` + (spec.kind === 'file' ? `${spec.path}\u0000${bytes}` : JSON.stringify(spec));
  let fresh = false;
  const made = (spec.kind === 'file' ? fromFiles : built).get(key, column.dictionary, () => {
    fresh = true;
    const grid =
      spec.kind === 'file' ? rowsGrid(fileRows(column, spec.path)) : hierarchyGrid(column, spec, rows);
    return { grid, shape: hierarchyShape(column, grid, source) };
  });
  // A kept grid was made for another shard's rows: this one's are checked against it.
  if (!fresh) checkRefused(made.grid, column, rows);
  return withRows(column, made.grid, made.shape, source, rows);
}

/** A hierarchy file's bytes (as a string key), or its reader's error when it cannot be read. */
function hierarchyBytes(path: string): string {
  try {
    return readFileSync(path).toString('latin1');
  } catch (e) {
    readHierarchyRows(path); // a missing file or a folder: the reader's error names it
    throw e;
  }
}

/** A builder's grid and shape per dictionary: enough for a release's hierarchies. */
const built = new PerDictionary<{ grid: Grid; shape: HierarchyShape }>(8);
/** The same for a file's text (a release reads a file per quasi-identifier). */
const fromFiles = new PerDictionary<{ grid: Grid; shape: HierarchyShape }>(16);

/** The hierarchy as string rows `[value, level1, …, top]`, from its file or builder (`rows`: as in buildHierarchy). */
export function hierarchyRows(column: EncodedColumn, spec: HierarchySpec, rows: RowNames = columnRows): Rows {
  return spec.kind === 'file' ? fileRows(column, spec.path) : gridRows(hierarchyGrid(column, spec, rows));
}

/** The hierarchy as a grid of label codes, from its file or builder. */
function hierarchyGrid(column: EncodedColumn, spec: HierarchySpec, rows: RowNames): Grid {
  switch (spec.kind) {
    case 'file':
      return rowsGrid(fileRows(column, spec.path));
    case 'intervals':
      checkHierarchySize('intervals builder', column.name, column.dictionary.length, spec.widths.length + 2);
      return intervalGrid(column, spec.widths, spec.bottom, spec.top, rows);
    case 'mask':
      checkHierarchySize(
        'mask builder',
        column.name,
        column.dictionary.length,
        maskHeight(column.dictionary) + 1,
      );
      return maskGrid(column, spec.direction);
    case 'date':
      checkHierarchySize('date builder', column.name, column.dictionary.length, spec.levels.length + 2);
      return dateGrid(column, spec.format, spec.levels, rows);
    case 'groups':
      checkHierarchySize('groups builder', column.name, column.dictionary.length, spec.levels.length + 2);
      return groupGrid(column, spec.levels, rows);
  }
}

function fileRows(column: EncodedColumn, path: string): Rows {
  const rows = readHierarchyRows(path);
  checkHierarchySize(basename(path), column.name, rows.length, rows[0]!.length, true);
  return withMissingRows(column, rows);
}

/**
 * A file's rows plus, for each missing value of the column the file does not list, a row
 * that keeps it up to the file's top label (a file that lists it decides for itself).
 */
function withMissingRows(column: EncodedColumn, rows: Rows): Rows {
  const height = rows[0]!.length - 1;
  if (height === 0) return rows; // refused with its own error when the hierarchy is built
  const listed = new Set(rows.map((row) => row[0]!));
  const extra = column.dictionary
    .filter((v) => isMissing(v) && !listed.has(v))
    .map((v) => missingRow(v, height, rows[0]![height]!));
  return extra.length === 0 ? rows : [...rows, ...extra];
}

function hierarchySource(spec: HierarchySpec): string {
  return spec.kind === 'file' ? basename(spec.path) : `${spec.kind} builder`;
}

/**
 * Reads an ARX hierarchy CSV (`value;level1;…;*`) as the table reader reads CSV
 * (readHierarchyCells); `name` names it in messages.
 */
export function readHierarchyRows(path: string, name = basename(path)): Rows {
  const rows = readHierarchyCells(path, name);
  checkLabels(name, rows);
  return rows;
}

/**
 * Refuses an empty label (or one of blanks): released, it reads as a missing value, which a
 * value that is not missing must never become. Only the row of a missing value may keep it
 * (`;;*`: it generalizes to itself, as the row ppdp adds for one a file does not list).
 */
function checkLabels(file: string, rows: Rows): void {
  for (const [r, row] of rows.entries()) {
    for (let l = 1; l < row.length; l++) {
      const label = row[l]!;
      if (!isMissing(label) || label === row[0]) continue;
      const top = l === row.length - 1;
      // Every row ending in an empty cell: a delimiter after the last label (an export's padding).
      const trailing = top && rows.every((other) => other[l] === '');
      throw new HierarchyError(
        'E_HIERARCHY_LABEL',
        `${file} row ${r + 1}, level ${l}: the label is empty${label === '' ? '' : ' (blanks only)'}` +
          (trailing ? ' (every row ends with the delimiter)' : ''),
        trailing
          ? 'remove the delimiter from the end of each line'
          : 'give the value a label at every level: an empty label is released as an empty cell, which ' +
              'stands for a missing value (only the empty value may keep itself, e.g. `;;*`)',
      );
    }
  }
}

/**
 * What a hierarchy is whichever of its dictionary's values rows hold: each code's row and
 * labels per level, checked for duplicates, a top, cycles (the tree check's error waits for
 * the missing values' check, which comes first).
 */
interface HierarchyShape {
  readonly height: number;
  /** code → its grid row; -1: a dictionary entry no row lists. */
  readonly rowOf: Int32Array;
  readonly levelTables: Int32Array[];
  readonly labels: string[][];
  /** localOf[l][grid label] = its label code at level l (-1: none); level 0 unused. */
  readonly localOf: Int32Array[];
  readonly notATree: HierarchyError | undefined;
}

function hierarchyShape(column: EncodedColumn, grid: Grid, source: string): HierarchyShape {
  const height = grid.rows === 0 ? 0 : grid.height;
  const { cells, labels: names } = grid;
  const values = cells[0]!;
  const rowOfLabel = new Int32Array(names.length).fill(-1); // label → the row listing it as a value
  for (let r = 0; r < grid.rows; r++) {
    if (rowOfLabel[values[r]!] !== -1) {
      throw new HierarchyError(
        'E_HIERARCHY_DUPLICATE',
        `${source} row ${r + 1}: value listed twice (also in row ${rowOfLabel[values[r]!]! + 1})`,
        'list every value once',
      );
    }
    rowOfLabel[values[r]!] = r;
  }
  checkTop(column.name, source, grid, height);
  if (hasCycle(grid, height)) reportCycle(column.name, source, gridRows(grid));
  const dict = column.dictionary;
  // code → its row; -1: an unused dictionary entry no row lists (never released: `*` above it).
  const rowOf = new Int32Array(dict.length).fill(-1);
  for (let code = 0; code < dict.length; code++) {
    const label = grid.rowsAreCodes ? values[code] : grid.index.get(dict[code]!);
    const row = label === undefined ? -1 : rowOfLabel[label]!;
    if (row >= 0) rowOf[code] = row;
  }
  // Plain loops: `Int32Array.from` over a dictionary of strings walks it as an iterable.
  const identity = new Int32Array(dict.length);
  for (let c = 0; c < dict.length; c++) identity[c] = c;
  const levelTables: Int32Array[] = [identity];
  const labels: string[][] = [dict.slice()];
  const localOf: Int32Array[] = [new Int32Array(0)];
  // Per level, grid labels renumbered from 0 in the order the codes meet them.
  const star = grid.index.get('*') ?? names.length;
  for (let l = 1; l <= height; l++) {
    const local = new Int32Array(names.length + 1).fill(-1);
    const at = cells[l]!;
    const table = new Int32Array(dict.length);
    const levelLabels: string[] = [];
    for (let code = 0; code < dict.length; code++) {
      const label = rowOf[code] === -1 ? star : at[rowOf[code]!]!;
      let id = local[label]!;
      if (id === -1) {
        local[label] = id = levelLabels.length;
        levelLabels.push(names[label] ?? '*');
      }
      table[code] = id;
    }
    levelTables.push(table);
    labels.push(levelLabels);
    localOf.push(local);
  }
  const notATree = treeError(column.name, source, levelTables, labels, rowOf);
  return { height, rowOf, levelTables, labels, localOf, notATree };
}

/** The hierarchy of `column`'s rows: the values they hold checked and counted (copies of the shape's tables). */
function withRows(
  column: EncodedColumn,
  grid: Grid,
  shape: HierarchyShape,
  source: string,
  rowNames: RowNames,
): Hierarchy {
  const { height, rowOf, localOf } = shape;
  const present = presentCodes(column);
  const dict = column.dictionary;
  const missing: number[] = [];
  for (let code = 0; code < dict.length; code++) if (rowOf[code] === -1 && present[code]) missing.push(code);
  if (missing.length > 0) {
    const values = Array.from(grid.cells[0]!.subarray(0, grid.rows), (label) => grid.labels[label]!);
    throw missingValues(column, source, missing, rowNames, undefined, values);
  }
  if (shape.notATree) throw shape.notATree;

  // A builder's grid has a row per dictionary value: only those of values present count.
  const counted = (r: number) => !grid.rowsAreCodes || present[r] === 1;
  let rows = 0;
  for (let r = 0; r < grid.rows; r++) if (counted(r)) rows++;
  const underLeaf = new Int32Array(dict.length);
  for (let c = 0; c < dict.length; c++) underLeaf[c] = rowOf[c] !== -1 && counted(rowOf[c]!) ? 1 : 0;
  const rowsUnder: Int32Array[] = [underLeaf];
  const perLabel = new Int32Array(grid.labels.length + 1);
  for (let l = 1; l <= height; l++) {
    const at = grid.cells[l]!;
    const local = localOf[l]!;
    perLabel.fill(0);
    for (let r = 0; r < grid.rows; r++) if (counted(r)) perLabel[at[r]!]!++;
    const under = new Int32Array(shape.labels[l]!.length);
    for (let label = 0; label < local.length; label++)
      if (local[label]! >= 0) under[local[label]!] = perLabel[label]!;
    rowsUnder.push(under);
  }
  // Copies: the caller owns what it gets, the shape serves the next shard too.
  const levelTables = shape.levelTables.map((table) => table.slice());
  const labels = shape.labels.map((level) => level.slice());
  const leaves = levelTables.map((table, l) => {
    const counts = new Int32Array(labels[l]!.length);
    for (let code = 0; code < dict.length; code++) if (present[code]) counts[table[code]!]!++;
    return counts;
  });
  const domain = present.reduce((a, b) => a + b, 0);
  return { attribute: column.name, height, levelTables, labels, leaves, domain, rows, rowsUnder, source };
}

/** Why messages name rows, not the values a hierarchy lacks. */
export const VALUES_NOT_SHOWN =
  '(values are not shown: a value missing from a hierarchy is often rare, and rare values can identify a person)';

/**
 * Values of the data that the hierarchy does not list: how many, in how many rows, and the
 * first rows holding them (as `rowNames` names them), never the values. A value the
 * hierarchy's author did not foresee is typically a rare one, and rare values identify people;
 * messages end up in terminals, CI logs and tickets. The rows named let the publisher look the
 * values up in their own file.
 */
export function missingValues(
  column: EncodedColumn,
  source: string,
  codes: number[],
  rowNames: RowNames,
  /** How to find the value(s), `it` or `them` (a release's error points to `ppdp hierarchy check`). */
  lookUp = (it: string) =>
    `look ${it} up in the rows named, or run \`ppdp hierarchy check\` ${VALUES_NOT_SHOWN}`,
  /** The values the hierarchy lists, to tell one that differs only in blanks, case or normalization. */
  listed?: readonly string[],
): HierarchyError {
  const isMissing = new Uint8Array(column.dictionary.length);
  for (const code of codes) isMissing[code] = 1;
  let rows = 0;
  const firstRows: number[] = [];
  const seen = new Uint8Array(column.dictionary.length);
  for (let r = 0; r < column.codes.length; r++) {
    const code = column.codes[r]!;
    if (!isMissing[code]) continue;
    rows++;
    if (!seen[code] && firstRows.length < 5) firstRows.push(r);
    seen[code] = 1;
  }
  const values = codes.length === 1 ? 'a value' : `${codes.length} values`;
  const empty = codes.some((code) => column.dictionary[code]!.trim() === '');
  const where = `${rowNames(column.name, firstRows)}${codes.length > firstRows.length ? ', …' : ''}`;
  const near =
    listed &&
    nearMisses(
      codes.map((code) => column.dictionary[code]!),
      listed,
      source,
    );
  return new HierarchyError(
    'E_HIERARCHY_VALUE',
    `${source}: ${values} of column '${column.name}' ${codes.length === 1 ? 'appears' : 'appear'} in the data but not in the hierarchy${
      empty ? ` (${codes.length === 1 ? 'it is' : 'one is'} the empty value)` : ''
    }: ${rows} ${rows === 1 ? 'row' : 'rows'}, first in ${where}`,
    `${near ?? ''}add a row for ${codes.length === 1 ? 'that value' : 'each of these values'} to ${source}; ${lookUp(
      codes.length === 1 ? 'it' : 'them',
    )}`,
  );
}

/**
 * Ways a value and a hierarchy's row can differ that a person does not see: blanks around the
 * value (an export's padding), letter case, and Unicode normalization (`é` as one character,
 * NFC, or as `e` and a combining accent, NFD, as macOS file names and some exports write it).
 */
const UNSEEN: readonly { readonly what: string; readonly form: (v: string) => string }[] = [
  { what: 'surrounding blanks', form: (v) => v.trim() },
  { what: 'letter case', form: (v) => v.toLowerCase() },
  {
    what: 'Unicode normalization (an accented letter written as one character, NFC, or as a letter and a combining accent, NFD)',
    form: (v) => v.normalize('NFC'),
  },
];

/**
 * The start of the hint when some of `values` (a hierarchy lacks them) match a value of
 * `listed` once such unseen differences are set aside: which differences, and how many values,
 * never the values.
 */
function nearMisses(
  values: readonly string[],
  listed: readonly string[],
  source: string,
): string | undefined {
  const all = (v: string) => UNSEEN.reduce((x, { form }) => form(x), v);
  const forms = [...UNSEEN.map(({ form }) => form), all].map((form) => ({
    form,
    listed: new Set(listed.map(form)),
  }));
  const seen = new Set<string>();
  let near = 0;
  for (const v of values) {
    // The single differences that explain it, else (several at once) every one that plays a part.
    const single = UNSEEN.filter((_, k) => forms[k]!.listed.has(forms[k]!.form(v)));
    const why = single.length > 0 ? single : forms.at(-1)!.listed.has(all(v)) ? UNSEEN : [];
    if (why.length === 0) continue;
    near++;
    for (const { what } of why) seen.add(what);
  }
  if (near === 0) return undefined;
  const whats = [...seen];
  const how = whats.length === 1 ? whats[0]! : `${whats.slice(0, -1).join(', ')} or ${whats.at(-1)}`;
  const one = values.length === 1;
  return (
    `${one ? 'it matches' : `${near} of them ${near === 1 ? 'matches' : 'match'}`} a value of ${source} ` +
    `but for ${how}: write ${one || near === 1 ? 'it' : 'them'} the same way in the data and in ${source}, or `
  );
}

/** A label must have one parent: values that meet at level l must meet at every level above (the error if not). */
function treeError(
  name: string,
  source: string,
  tables: Int32Array[],
  labels: string[][],
  /** code → its row (-1: a dictionary entry no row lists). */
  rowOf: Int32Array,
): HierarchyError | undefined {
  for (let l = 1; l + 1 < tables.length; l++) {
    // label → the first code under it: its parent is that code's label one level up.
    const first = new Int32Array(labels[l]!.length).fill(-1);
    const below = tables[l]!;
    const above = tables[l + 1]!;
    for (let code = 0; code < below.length; code++) {
      const f = first[below[code]!]!;
      if (f === -1) first[below[code]!] = code;
      else if (above[f] !== above[code]) {
        const rows = [rowOf[f]!, rowOf[code]!]
          .filter((r) => r >= 0)
          .sort((a, b) => a - b)
          .map((r) => r + 1);
        const where =
          rows.length === 2 ? `rows ${rows[0]} and ${rows[1]}` : rows.length === 1 ? `row ${rows[0]}` : '';
        return new HierarchyError(
          'E_HIERARCHY_TREE',
          `${source}${where === '' ? '' : ` ${where}`}: hierarchy of '${name}' is not a tree: ${
            rows.length === 2 ? 'the label these rows share' : 'a label'
          } at level ${l} has two parents at level ${l + 1}`,
          'values that share a label at one level must share their labels at every level above',
        );
      }
    }
  }
  return undefined;
}

/**
 * The last level must be one label for every value (such as `*`): the top of the lattice is
 * then one class of all rows, which every k ≤ rows satisfies.
 */
function checkTop(name: string, source: string, grid: Grid, height: number): void {
  if (height === 0) {
    throw new HierarchyError(
      'E_HIERARCHY_TOP',
      `${source}: the hierarchy of '${name}' has only the values column, no level above it`,
      'add levels after the value, ending in one label for all values: value;level1;…;*',
    );
  }
  const tops = grid.cells[height]!;
  const top = tops[0]!;
  const r = tops.findIndex((label) => label !== top);
  if (r >= 0) {
    throw new HierarchyError(
      'E_HIERARCHY_TOP',
      `${source} row ${r + 1}: the top level (level ${height}) of the hierarchy of '${name}' has more than one label (this row's differs from row 1's)`,
      'end every row with the same label for all values, such as *',
    );
  }
}

/**
 * Whether some label generalizes, level by level, back to itself: the steps label → its label
 * one level up (a label repeated one level up is no step) have no topological order. Labels
 * are integers here; `reportCycle` finds the cycle to name only when there is one.
 */
function hasCycle(grid: Grid, height: number): boolean {
  const { cells, rows } = grid;
  const n = grid.labels.length;
  const indegree = new Int32Array(n);
  const outdegree = new Int32Array(n + 1);
  for (let l = 0; l < height; l++) {
    const from = cells[l]!;
    const to = cells[l + 1]!;
    for (let r = 0; r < rows; r++) {
      if (from[r] === to[r]) continue;
      outdegree[from[r]! + 1]!++;
      indegree[to[r]!]!++;
    }
  }
  const start = outdegree; // prefix sums: start[a] … start[a + 1] holds a's steps
  for (let a = 0; a < n; a++) start[a + 1]! += start[a]!;
  const steps = new Int32Array(start[n]!);
  const fill = start.slice(0, n);
  for (let l = 0; l < height; l++) {
    const from = cells[l]!;
    const to = cells[l + 1]!;
    for (let r = 0; r < rows; r++) if (from[r] !== to[r]) steps[fill[from[r]!]!++] = to[r]!;
  }
  const ready: number[] = [];
  for (let a = 0; a < n; a++) if (indegree[a] === 0) ready.push(a);
  let done = 0;
  while (ready.length > 0) {
    const a = ready.pop()!;
    done++;
    for (let s = start[a]!; s < start[a + 1]!; s++) if (--indegree[steps[s]!]! === 0) ready.push(steps[s]!);
  }
  return done < n;
}

/**
 * A label must not generalize, level by level, back to itself (`a;b;*` with `b;a;*`): such a
 * "generalization" relabels values instead of coarsening them. Repeating a label one level up
 * (`Male;Male;*`) is not a cycle.
 */
function reportCycle(name: string, source: string, rows: Rows): void {
  // label → its parents one level up (label → row of the first such step)
  const parents = new Map<string, Map<string, number>>();
  for (const [r, row] of rows.entries()) {
    for (let l = 0; l + 1 < row.length; l++) {
      const a = row[l]!;
      const b = row[l + 1]!;
      if (a === b) continue;
      let out = parents.get(a);
      if (!out) parents.set(a, (out = new Map()));
      if (!out.has(b)) out.set(b, r);
    }
  }
  const state = new Map<string, 1 | 2>(); // 1: on the path, 2: done
  for (const start of parents.keys()) {
    if (state.has(start)) continue;
    // Iterative DFS: a label on the current path met again closes a cycle. Each entry keeps
    // the row of the step that reached it.
    const path: { label: string; next: Iterator<[string, number]>; row: number }[] = [
      { label: start, next: (parents.get(start) ?? new Map()).entries(), row: -1 },
    ];
    state.set(start, 1);
    while (path.length > 0) {
      const top = path.at(-1)!;
      const step = top.next.next();
      if (step.done) {
        state.set(top.label, 2);
        path.pop();
        continue;
      }
      const [label, row] = step.value;
      const seen = state.get(label);
      if (seen === 1) {
        const steps = [...path.slice(path.findIndex((p) => p.label === label) + 1).map((p) => p.row), row];
        const through = [...new Set(steps)].sort((a, b) => a - b).map((r) => r + 1);
        throw new HierarchyError(
          'E_HIERARCHY_CYCLE',
          `${source} row ${row + 1}: the hierarchy of '${name}' has a cycle: a label generalizes, level by level, back to itself (through ${
            through.length === 1
              ? `row ${through[0]}`
              : `rows ${through.slice(0, -1).join(', ')} and ${through.at(-1)}`
          })`,
          'a label must only generalize to coarser labels: check for swapped or repeated labels between rows',
        );
      }
      if (seen === undefined) {
        state.set(label, 1);
        path.push({ label, next: (parents.get(label) ?? new Map()).entries(), row });
      }
    }
  }
}
