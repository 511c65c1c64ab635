/**
 * `ppdp hierarchy <release.json> (--column c --out file.csv | --out folder)`: writes the
 * hierarchies a spec's builders make from its input as ARX CSVs (`value;level1;…;*`), to edit
 * or to keep as files. `ppdp hierarchy check [<hierarchy.csv>] (--spec release.json | --data
 * <table>) --column c`: checks a hierarchy file against a column, read as a release reads it
 * (--spec) or as it is (--data) — the file's shape (equal rows, one top, a tree, no cycle) and
 * that every value of the column has a row, counting all that do not.
 */
import { basename, join } from 'node:path';
import { inputRows, tableRows } from '../data/checks.ts';
import { formatHierarchyCells, readHierarchyCells } from '../data/hierarchy-file.ts';
import { columnsHint, readTable } from '../data/read.ts';
import { type EncodedColumn, isMissing, presentCodes, type RowNames } from '../data/table.ts';
import { PpdpError } from '../errors.ts';
import {
  buildHierarchy,
  hierarchyRows,
  missingValues,
  readHierarchyRows,
  VALUES_NOT_SHOWN,
} from '../hierarchy/hierarchy.ts';
import {
  checkLocal,
  checkOut,
  checkReplace,
  checkWritable,
  fileHead,
  makeFolder,
  specReads,
  writeAtomically,
} from '../pipeline/out-path.ts';
import { readInput } from '../pipeline/release.ts';
import { type AttributeSpec, checkHierarchyFile, loadSpec } from '../release-spec/spec.ts';
import { counted } from '../util/format.ts';
import { commandArgs } from './args.ts';

export const HIERARCHY_HELP = `Usage: ppdp hierarchy <release.json> --column <name> --out <file.csv>
       ppdp hierarchy <release.json> --out <folder>
       ppdp hierarchy check [<hierarchy.csv>] --spec <release.json> [--column <name>]
       ppdp hierarchy check <hierarchy.csv> --data <table> --column <name>

The first forms build the hierarchies of the spec's builders ({ "intervals": … },
{ "mask": … }, { "date": … }, { "groups": … }) from the spec's input and write them as
ARX-format CSVs (value;level1;…;*), one row per value: one column to a file, or every
column with a builder to <folder>/<column>.csv. A written file can replace the builder
("hierarchy": "<column>.csv") once edited. --out is never a file the command reads (the
spec, its input, its hierarchy files), a pipe or a device, a URL, nor inside a release folder
(one holding manifest.json); missing folders are created. A file already there is replaced
only if it is a hierarchy (an earlier output: value;level1;… rows under one top), else kept
unless --force. A value or label holding ';', a double quote or a line break is written
quoted ("a;b", inner quotes doubled), as the release reads a hierarchy file.

"check" checks that a hierarchy file is a hierarchy (every row the same length, one top
label, a tree, no cycle) and that every value of a column has a row. With --spec, the column
is read as a release reads it: the spec's input, its format (delimiter, decimal commas, sheet,
empty cells) and the attribute's missing texts; without a file, it checks the spec's hierarchy
file of --column, or of every attribute with one. With --data, a table without a spec is read
as it is. Empty cells (and missing texts) need no row: a missing value generalizes to itself
up to the top. It counts the values without a row and names the first rows holding them (a
folder's file and its row, a sheet's cell), never the values themselves, unless --show-values.

Options:
  --column <name>      the column (required for one file and for check --data)
  --out <path>         the file, or the folder for every built column
  --force              replace any file at --out (never one the command reads)
  --spec <release.json>  check: read the column as this spec's release reads it
  --data <table>       check: a table the hierarchy is for (CSV, Arrow, Parquet or Excel), read
                       without a spec
  --delimiter <c>      check --data: the table's CSV delimiter (default: detected)
  --show-values        check: print each value without a row on stdout, one a line (the one
                       place ppdp prints values of a table: keep that output out of logs)
  -h, --help           this help

Examples:
  ppdp hierarchy examples/hospital/release.json --column admission_date --out dates.csv
  ppdp hierarchy check dates.csv --spec examples/hospital/release.json --column admission_date
  ppdp hierarchy check dates.csv --data examples/hospital/hospital.csv --column admission_date
`;

export function hierarchyCommand(args: string[]): number {
  if (args[0] === 'check') return checkCommand(args.slice(1));
  const parsed = commandArgs(
    'hierarchy',
    args,
    {
      column: { type: 'string' },
      out: { type: 'string' },
      force: { type: 'boolean', default: false },
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
  const single = values.column !== undefined;
  const pathOf = (name: string) => (single ? out : join(out, `${name}.csv`));
  // Before anything is read or written: no file written may replace what the command reads,
  // a pipe or a device, nor land in a published release. (Each file is checked, not the
  // folder: hierarchy files written beside the spec's own are the usual layout.)
  checkLocal(out, single ? 'file' : 'folder'); // as given: path.join would make s3://b s3:/b
  if (!single) checkWritable(out, 'folder'); // named as given: --out notes.csv, not notes.csv/sex.csv
  for (const a of chosen) {
    checkOut(pathOf(a.name), specReads(spec), 'file');
    checkReplace(pathOf(a.name), 'hierarchy', values.force ?? false, isHierarchyFile);
  }
  const table = readInput(spec);
  const rowNames = inputRows(spec, table);
  const files: { name: string; text: string; rows: number }[] = [];
  for (const a of chosen) {
    const column = table.columns.find((c) => c.name === a.name)!;
    const rows = hierarchyRows(column, a.hierarchy!, rowNames);
    // Build it as a release would: the same errors for a hierarchy that is not one.
    buildHierarchy(column, a.hierarchy!, rowNames);
    // A builder's rows follow the column's dictionary: keep those of values in the data.
    const present = presentCodes(column);
    const used = a.hierarchy!.kind === 'file' ? rows : rows.filter((_, code) => present[code] === 1);
    files.push({ name: a.name, text: formatHierarchyCells(used), rows: used.length });
  }
  if (!single) makeFolder(out);
  for (const f of files) {
    const path = pathOf(f.name);
    writeAtomically(path, f.text);
    process.stdout.write(`${path}: hierarchy of '${f.name}', ${counted(f.rows, 'value')}\n`);
  }
  return 0;
}

/**
 * Whether the file at `path` is a hierarchy as this command writes one (an earlier output, edited
 * or not): `;`-separated rows of a value and its levels, every one under the same top.
 */
function isHierarchyFile(path: string): boolean {
  // Only a file whose first line holds a ';' is read whole.
  if (!fileHead(path).split('\n', 1)[0]!.includes(';')) return false;
  try {
    const rows = readHierarchyCells(path);
    const top = rows[0]?.at(-1);
    return rows.every((row) => row.length >= 2 && row.at(-1) === top);
  } catch {
    return false; // not a hierarchy file
  }
}

function checkCommand(args: string[]): number {
  const parsed = commandArgs(
    'hierarchy check',
    args,
    {
      spec: { type: 'string' },
      data: { type: 'string' },
      column: { type: 'string' },
      delimiter: { type: 'string' },
      'show-values': { type: 'boolean', default: false },
    },
    {
      help: HIERARCHY_HELP,
      accepts: (positionals, values) =>
        values.spec !== undefined
          ? values.data === undefined &&
            values.delimiter === undefined &&
            positionals.length <= 1 &&
            (positionals.length === 0 || values.column !== undefined)
          : positionals.length === 1 && Boolean(values.data) && Boolean(values.column),
      takes:
        "a hierarchy file with --spec (or --data, a table without a spec) and --column; or --spec alone (the spec's hierarchy files)",
      synopsis:
        'ppdp hierarchy check <hierarchy.csv> --spec <release.json> --column <name>, or ppdp hierarchy check <hierarchy.csv> --data <table> --column <name>',
    },
  );
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const show = values['show-values'];
  if (values.spec === undefined) {
    // accepts checked all three
    const data = values.data!;
    const columnName = values.column!;
    const path = positionals[0]!;
    const table = readTable(data, { delimiter: values.delimiter, nulls: 'missing' });
    const column = table.columns.find((c) => c.name === columnName);
    if (!column) {
      throw new PpdpError('E_USAGE', `${basename(data)} has no column '${columnName}'`, columnsHint(table));
    }
    checkColumn(path, path, column, tableRows(table), show);
    return 0;
  }
  const spec = loadSpec(values.spec);
  const where = basename(spec.file);
  let checks: { attribute: AttributeSpec; path: string }[];
  if (values.column === undefined) {
    checks = spec.attributes.flatMap((a) =>
      a.type !== 'identifying' && a.hierarchy?.kind === 'file'
        ? [{ attribute: a, path: a.hierarchy.path }]
        : [],
    );
    if (checks.length === 0) {
      throw new PpdpError(
        'E_USAGE',
        `${where}: no attribute has a hierarchy file`,
        `name the file to check and its column: ppdp hierarchy check <hierarchy.csv> --spec ${values.spec} --column <name>`,
      );
    }
  } else {
    const a = spec.attributes.find((x) => x.name === values.column);
    if (!a || a.type === 'identifying') {
      throw new PpdpError(
        'E_USAGE',
        `${where}: attributes.${values.column} ${a ? 'is identifying: dropped as the input is read, it needs no hierarchy' : 'is not in the spec'}`,
        `name an attribute the release keeps: ${spec.attributes
          .filter((x) => x.type !== 'identifying')
          .map((x) => x.name)
          .join(', ')}`,
      );
    }
    const path = positionals[0] ?? (a.hierarchy?.kind === 'file' ? a.hierarchy.path : undefined);
    if (path === undefined) {
      throw new PpdpError(
        'E_USAGE',
        `${where}: attributes.${a.name} has ${a.hierarchy ? 'a hierarchy builder' : 'no hierarchy'}, not a hierarchy file`,
        `name the file to check: ppdp hierarchy check <hierarchy.csv> --spec ${values.spec} --column ${a.name}`,
      );
    }
    checks = [{ attribute: a, path }];
  }
  // A file the spec names is checked as a release checks it (a folder is not a file).
  if (positionals[0] === undefined) for (const { attribute } of checks) checkHierarchyFile(spec, attribute);
  // The release's own reader: the spec's format, the attributes' missing texts, decimal commas.
  const table = readInput(spec);
  const rowNames = inputRows(spec, table);
  for (const { attribute, path } of checks) {
    const column = table.columns.find((c) => c.name === attribute.name)!;
    checkColumn(path, positionals[0] ?? basename(path), column, rowNames, show);
  }
  return 0;
}

/**
 * Checks a hierarchy file (`file` names it) against a column: the file's own shape, then that
 * every value present has a row (counted, their first rows named as `rowNames`, its table's,
 * names them; the values printed on stdout only with `show`). Prints what it found.
 */
function checkColumn(
  path: string,
  file: string,
  column: EncodedColumn,
  rowNames: RowNames,
  show: boolean,
): void {
  const rows = readHierarchyRows(path, file); // equal row lengths
  // The file's own shape, on a column of its values: one top, a tree, no cycle, no repeats.
  const own: EncodedColumn = {
    name: column.name,
    dictionary: rows.map((row) => row[0]!),
    codes: Int32Array.from(rows, (_, i) => i),
  };
  const h = buildHierarchy(own, { kind: 'file', path });
  const listed = new Set(own.dictionary);
  const present = presentCodes(column);
  const absent: number[] = [];
  let empty = 0;
  column.dictionary.forEach((v, code) => {
    if (!present[code] || listed.has(v)) return;
    if (isMissing(v)) empty++;
    else absent.push(code);
  });
  if (absent.length > 0) {
    if (show) {
      // One a line: a value holding a line break is written as JSON.
      for (const code of absent) {
        const v = column.dictionary[code]!;
        process.stdout.write(`${/[\r\n]/.test(v) ? JSON.stringify(v) : v}\n`);
      }
    }
    throw missingValues(
      column,
      file,
      absent,
      rowNames,
      (it) =>
        show
          ? `${it === 'it' ? 'it is' : 'they are'} listed above, one a line`
          : `look ${it} up in the rows named, or add --show-values to list ${it} on stdout ${VALUES_NOT_SHOWN}`,
      own.dictionary,
    );
  }
  const distinct = present.reduce((a, b) => a + b, 0) - empty;
  process.stdout.write(
    `${file}: a hierarchy of ${counted(h.height, 'level')} that covers all ${counted(distinct, 'distinct value')} of '${column.name}'` +
      (empty > 0 ? ' (empty cells need no row: they generalize to themselves up to the top)' : '') +
      '\n',
  );
}
