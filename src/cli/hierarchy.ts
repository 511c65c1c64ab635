/**
 * `ppdp hierarchy <release.json> (--column c --out file.csv | --out folder)`: writes the
 * hierarchies a spec's builders make from its input as ARX CSVs (`value;level1;…;*`), to edit
 * or to keep as files. `ppdp hierarchy check <hierarchy.csv> --data <table> --column c`:
 * checks a hierarchy file against a column — the file's shape (equal rows, one top, a tree,
 * no cycle) and that every value of the column has a row, counting all that do not.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { columnsHint, readTable } from '../data/read.ts';
import { type EncodedColumn, isMissing, presentCodes } from '../data/table.ts';
import { HierarchyError, PpdpError } from '../errors.ts';
import { buildHierarchy, hierarchyRows, readHierarchyRows } from '../hierarchy/hierarchy.ts';
import { readInput } from '../pipeline/release.ts';
import { loadSpec } from '../release-spec/spec.ts';
import { thousands } from '../util/format.ts';
import { commandArgs } from './args.ts';

export const HIERARCHY_HELP = `Usage: ppdp hierarchy <release.json> --column <name> --out <file.csv>
       ppdp hierarchy <release.json> --out <folder>
       ppdp hierarchy check <hierarchy.csv> --data <table> --column <name>

The first forms build the hierarchies of the spec's builders ({ "intervals": … },
{ "mask": … }, { "date": … }, { "groups": … }) from the spec's input and write them as
ARX-format CSVs (value;level1;…;*), one row per value: one column to a file, or every
column with a builder to <folder>/<column>.csv. A written file can replace the builder
("hierarchy": "<column>.csv") once edited.

"check" reads a hierarchy file and a table (CSV, Arrow, Parquet or Excel) and checks that
the file is a hierarchy (every row the same length, one top label, a tree, no cycle) and that
every value of the column has a row. It counts every value without a row and shows at most three.
Empty cells need no row: a missing value generalizes to itself up to the top.

Options:
  --column <name>      the column (required for one file and for check)
  --out <path>         the file, or the folder for every built column
  --data <table>       check: the table the hierarchy is for (CSV, Arrow, Parquet or Excel)
  --delimiter <c>      check: the table's CSV delimiter (default: detected)
  -h, --help           this help

Examples:
  ppdp hierarchy examples/hospital/release.json --column admission_date --out dates.csv
  ppdp hierarchy check dates.csv --data examples/hospital/hospital.csv --column admission_date
`;

/** Values shown when a check fails: enough to recognize a pattern, not a dump of the data. */
const SHOWN = 3;

export function hierarchyCommand(args: string[]): number {
  if (args[0] === 'check') return checkCommand(args.slice(1));
  const parsed = commandArgs(
    'hierarchy',
    args,
    {
      column: { type: 'string' },
      out: { type: 'string' },
    },
    {
      help: HIERARCHY_HELP,
      accepts: (positionals, values) => positionals.length === 1 && Boolean(values.out),
      takes: 'one release spec and --out',
      synopsis:
        'ppdp hierarchy <release.json> --column <name> --out <file.csv>, or --out <folder> for every built column',
    },
  );
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const out = values.out!; // accepts checked it
  const spec = loadSpec(positionals[0]!);
  const where = basename(spec.file);
  const built = spec.attributes.filter((a) => a.hierarchy !== undefined && a.hierarchy.kind !== 'file');
  let chosen = built;
  if (values.column !== undefined) {
    const a = spec.attributes.find((x) => x.name === values.column);
    if (!a?.hierarchy) {
      throw new PpdpError(
        'E_USAGE',
        `${where}: attributes.${values.column} ${a ? 'has no hierarchy' : 'is not in the spec'}`,
        `name a column with a hierarchy: ${spec.attributes
          .filter((x) => x.hierarchy)
          .map((x) => x.name)
          .join(', ')}`,
      );
    }
    chosen = [a];
  } else if (built.length === 0) {
    throw new PpdpError(
      'E_USAGE',
      `${where}: no attribute has a hierarchy builder`,
      'builders are { "intervals": … }, { "mask": … }, { "date": … } and { "groups": … }',
    );
  }
  const table = readInput(spec);
  const files = chosen.map((a) => {
    const column = table.columns.find((c) => c.name === a.name)!;
    const rows = hierarchyRows(column, a.hierarchy!);
    // Build it as a release would: the same errors for a hierarchy that is not one.
    buildHierarchy(column, a.hierarchy!);
    if (rows.some((row) => row.some((cell) => cell.includes(';') || /[\r\n]/.test(cell)))) {
      throw new HierarchyError(
        'E_HIERARCHY_CELL',
        `${where}: a value or label of '${a.name}' holds ';' or a line break, which an ARX hierarchy file cannot`,
        "keep the builder in the spec, or replace ';' in the column's values",
      );
    }
    // A builder's rows follow the column's dictionary: keep those of values in the data.
    const present = presentCodes(column);
    const used = a.hierarchy!.kind === 'file' ? rows : rows.filter((_, code) => present[code] === 1);
    return { name: a.name, text: `${used.map((row) => row.join(';')).join('\n')}\n`, rows: used.length };
  });
  const single = values.column !== undefined;
  if (!single) mkdirSync(out, { recursive: true });
  for (const f of files) {
    const path = single ? out : join(out, `${f.name}.csv`);
    writeAtomically(path, f.text);
    process.stdout.write(`${path}: hierarchy of '${f.name}', ${thousands(f.rows)} values\n`);
  }
  return 0;
}

/** Writes through a temporary file and a rename: a reader never sees half a file. */
export function writeAtomically(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.partial`);
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

function checkCommand(args: string[]): number {
  const parsed = commandArgs(
    'hierarchy check',
    args,
    {
      data: { type: 'string' },
      column: { type: 'string' },
      delimiter: { type: 'string' },
    },
    {
      help: HIERARCHY_HELP,
      accepts: (positionals, values) =>
        positionals.length === 1 && Boolean(values.data) && Boolean(values.column),
      takes: 'one hierarchy file, --data and --column',
      synopsis: 'ppdp hierarchy check <hierarchy.csv> --data <table.csv> --column <name>',
    },
  );
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  // accepts checked both
  const data = values.data!;
  const columnName = values.column!;
  const path = positionals[0]!;
  const file = basename(path);
  const rows = readHierarchyRows(path); // equal row lengths
  // The file's own shape, on a column of its values: one top, a tree, no cycle, no repeats.
  const own: EncodedColumn = {
    name: columnName,
    dictionary: rows.map((row) => row[0]!),
    codes: Int32Array.from(rows, (_, i) => i),
  };
  const h = buildHierarchy(own, { kind: 'file', path });
  const table = readTable(data, { delimiter: values.delimiter, nulls: 'missing' });
  const column = table.columns.find((c) => c.name === columnName);
  if (!column) {
    throw new PpdpError('E_USAGE', `${basename(data)} has no column '${columnName}'`, columnsHint(table));
  }
  const listed = new Set(own.dictionary);
  const present = presentCodes(column);
  const counts = new Int32Array(column.dictionary.length);
  for (let r = 0; r < column.codes.length; r++) counts[column.codes[r]!]!++;
  let absent = 0;
  let absentRows = 0;
  let empty = 0;
  const shown: string[] = [];
  column.dictionary.forEach((v, code) => {
    if (!present[code] || listed.has(v)) return;
    if (isMissing(v)) {
      empty += counts[code]!;
      return;
    }
    absent++;
    absentRows += counts[code]!;
    if (shown.length < SHOWN) shown.push(`'${v}'`);
  });
  if (absent > 0) {
    throw new HierarchyError(
      'E_HIERARCHY_VALUE',
      `${file}: ${thousands(absent)} distinct values of '${column.name}' (${thousands(absentRows)} rows) have no row, e.g. ${shown.join(', ')}${absent > shown.length ? ', …' : ''}`,
      `add a row value;level1;…;${h.labels[h.height]![0]} for each of them`,
    );
  }
  const distinct = present.reduce((a, b) => a + b, 0);
  process.stdout.write(
    `${file}: a hierarchy of ${h.height} levels that covers all ${thousands(distinct)} distinct values of '${column.name}'` +
      (empty > 0 ? ` (${thousands(empty)} empty cells generalize to themselves up to the top)` : '') +
      '\n',
  );
  return 0;
}
