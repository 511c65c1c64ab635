/**
 * `ppdp evaluate <data.csv|data.arrow|release-dir> --spec <release.json>` (or the roles by
 * flags): risk and utility of a table as it is, from ppdp or another tool (src/evaluate/).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { T_CLOSENESS } from '../catalogue/t-closeness.ts';
import { inputRows, tableRows } from '../data/checks.ts';
import { readTable } from '../data/read.ts';
import { concatTables, type EncodedTable } from '../data/table.ts';
import { PpdpError } from '../errors.ts';
import { type Evaluation, evaluateTable } from '../evaluate/evaluate.ts';
import type { PersonSetting } from '../evaluate/persons.ts';
import { hierarchyRows, readHierarchyRows } from '../hierarchy/hierarchy.ts';
import { attributeT } from '../metrics/disclosure.ts';
import type { PopulationSpec } from '../metrics/population-risk.ts';
import {
  checkOut,
  checkReplace,
  fileHead,
  releaseFolderOf,
  specReads,
  writeAtomically,
} from '../pipeline/out-path.ts';
import { readInput } from '../pipeline/release.ts';
import { specLike, swappedArguments } from '../release-spec/json.ts';
import { checkSpecFiles, loadSpec, withColumnDefaults } from '../release-spec/spec.ts';
import { CLASS_METHODS } from '../report/audit.ts';
import { fmtNum, fmtPct } from '../report/format.ts';
import { counted, printable, thousands } from '../util/format.ts';
import { cannotRead } from '../util/unreadable.ts';
import { columnList, commandArgs } from './args.ts';
import { groupingKernelOption } from './options.ts';
import { readReleasedTable } from './released-table.ts';

export const EVALUATE_HELP = `Usage: ppdp evaluate <data.csv|data.arrow|release-dir> (--spec <release.json> | --qi <a,b,…>) [options]

Measures the re-identification risk and the utility of a table as it is: a ppdp release, the
output of another tool (e.g. a generalized CSV from ARX) or raw input. Equivalence classes are
the rows sharing every quasi-identifier value as written; rows whose quasi-identifiers are all
'*' count as suppressed. Prints a summary; writes the measures as JSON only where --out
says (--out - prints the JSON instead of the summary).

Measured: prosecutor risk (max, mean, records above --threshold), journalist risk (given as
the prosecutor risk, its upper bound: the exact figure needs the population's class sizes,
which a population size does not give), marketer risk, the share of
sample uniques, the k achieved,
class sizes, each sensitive attribute's l, t and δ; with --spec each privacy model checked per
class, and a caution naming any column it marks identifying that the table still holds;
with the original table (--spec's input, or --original) the information lost (NCP per cell,
from the released strings and the hierarchies), discernibility and AECS (over the spec's k,
else the k achieved), rows of the original the table lacks counting as suppressed. With a
population (--population, --sampling-fraction, or the spec's "report": { "population": … })
the records unique in the population under Pitman's, Zayatz's and the SNB model and Dankar's
rule; with --weight the survey-weighted individual risk and the expected re-identifications;
with --special-uniques the minimal sample uniques per record (docs/risk.md).

A release of Anatomy, Slicing or randomization is refused: its rows are not classes with
their quasi-identifiers, and its report.json holds its verified figures.

Options:
  --spec <file>          a release spec: roles, hierarchies, privacy models, and its input as
                         the original table
  --qi <list>            instead of --spec: the quasi-identifier columns
  --sensitive <list>     with --qi: the sensitive columns
  --original <file>      with --qi: the original table (CSV, Arrow, Parquet or Excel), for information loss
  --hierarchy <a=file>   with --qi: an ARX-format hierarchy CSV for attribute a (repeatable)
  --delimiter <c>        CSV delimiter of the evaluated table (default: detected)
  --threshold <p>        prosecutor risk above which a record is at risk (default 0.2)
  --population <n>       size of the population the table was drawn from
  --sampling-fraction <f>
                         or the share of the population the table holds, in (0, 1]
  --weight <column>      a column of design weights (people each record stands for)
  --special-uniques      search minimal sample uniques up to 3 quasi-identifiers
  --out <file>           write the measures as JSON to this file (- for stdout; default: none);
                         never a file it reads (the table or release, the spec and its files,
                         --original, --hierarchy), a URL, nor a path inside a release folder; its
                         folder is created; a file already there is replaced only if it is an
                         earlier output of evaluate, else kept unless --force
  --force                replace any file at --out (never one it reads)
  --kernel <name>        grouping kernel: wasm (default) or ts
  -h, --help             this help

Examples:
  ppdp evaluate out/adult --spec examples/adult/release.json --out evaluate.json
  ppdp evaluate arx-output.csv --qi age,sex,zip --sensitive diagnosis --original input.csv
  ppdp evaluate survey.csv --qi age,sex,region --sampling-fraction 0.01 --weight w
`;

export function evaluateCommand(args: string[]): number {
  const parsed = commandArgs(
    'evaluate',
    args,
    {
      spec: { type: 'string' },
      qi: { type: 'string' },
      sensitive: { type: 'string' },
      original: { type: 'string' },
      hierarchy: { type: 'string', multiple: true },
      delimiter: { type: 'string' },
      threshold: { type: 'string', default: '0.2' },
      population: { type: 'string' },
      'sampling-fraction': { type: 'string' },
      weight: { type: 'string' },
      'special-uniques': { type: 'boolean', default: false },
      out: { type: 'string' },
      kernel: { type: 'string', default: 'wasm' },
      force: { type: 'boolean', default: false },
    },
    {
      help: EVALUATE_HELP,
      takes: 'exactly one table or release folder',
      synopsis: 'ppdp evaluate <data.csv|data.arrow|release-dir> --spec <release.json>',
    },
  );
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (!values.spec === !values.qi) {
    throw new PpdpError(
      'E_USAGE',
      'ppdp evaluate needs the column roles: --spec <release.json> or --qi <a,b,…> (not both)',
      'e.g. --spec examples/adult/release.json, or --qi age,sex --sensitive diagnosis',
    );
  }
  if (values.spec && (values.sensitive || values.original || values.hierarchy)) {
    throw new PpdpError(
      'E_USAGE',
      '--sensitive, --original and --hierarchy go with --qi; --spec gives them itself',
      'drop them, or use --qi instead of --spec',
    );
  }
  // Before any work: a column named twice would be measured twice.
  const qis = columnList('--qi', values.qi);
  const sensitives = columnList('--sensitive', values.sensitive);
  refuseOtherLayouts(positionals[0]!);
  const threshold = Number(values.threshold);
  if (!(threshold > 0 && threshold <= 1)) {
    throw new PpdpError(
      'E_USAGE',
      `--threshold must be in (0, 1] (got '${values.threshold}')`,
      'e.g. --threshold 0.2',
    );
  }
  const population = populationOption(values.population, values['sampling-fraction']);
  const measures = {
    threshold,
    ...(values.weight ? { weight: values.weight } : {}),
    specialUniques: values['special-uniques'] ?? false,
  };
  const kernel = groupingKernelOption(values.kernel);
  const spec = values.spec ? loadSpec(values.spec) : undefined;
  if (spec) checkSpecFiles(spec);
  const hierarchyFiles = (values.hierarchy ?? []).map(hierarchyOption);
  const out = values.out;
  if (out !== undefined && out !== '-') {
    const evaluated = positionals[0]!;
    const folder = existsSync(evaluated) && statSync(evaluated).isDirectory();
    checkOut(
      out,
      [
        { path: evaluated, what: folder ? 'the release evaluated' : 'the table evaluated' },
        ...(spec ? specReads(spec) : []),
        ...(values.original ? [{ path: values.original, what: 'the original table (--original)' }] : []),
        ...hierarchyFiles.map(([name, file]) => ({
          path: file,
          what: `the hierarchy of ${name} (--hierarchy)`,
        })),
      ],
      'file',
    );
    checkReplace(out, 'evaluate', values.force ?? false, isEvaluation);
  }
  const paths = tablePaths(positionals[0]!);
  const path = paths[0]!;
  const source = paths.length > 1 ? `${basename(positionals[0]!)} (${paths.length} parts)` : basename(path);
  const table = concatTables(paths.map((p) => readReleasedTable(p, { delimiter: values.delimiter })));
  const rows = tableRows(table);
  let evaluation: Evaluation;
  if (spec) {
    const original = readInput(spec);
    const hierarchies = new Map(
      spec.attributes
        .filter((a) => a.hierarchy && a.type !== 'identifying')
        .map((a) => [
          a.name,
          hierarchyRows(
            original.columns.find((c) => c.name === a.name)!,
            a.hierarchy!,
            inputRows(spec, original),
          ),
        ]),
    );
    evaluation = evaluateTable({
      table,
      source,
      rows,
      quasiIdentifiers: spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name),
      sensitive: spec.attributes.filter((a) => a.type === 'sensitive').map((a) => a.name),
      identifying: spec.attributes.filter((a) => a.type === 'identifying').map((a) => a.name),
      original,
      hierarchies,
      privacy: withColumnDefaults(spec, original).privacy,
      ...entitySetting(spec.attributes, positionals[0]!),
      ...measures,
      ...((population ?? spec.report.population) ? { population: population ?? spec.report.population } : {}),
      kernel,
    });
  } else {
    const original: EncodedTable | undefined = values.original ? readTable(values.original) : undefined;
    const hierarchies = new Map(
      hierarchyFiles.map(([name, file]) => [name, readHierarchyRows(file)] as const),
    );
    evaluation = evaluateTable({
      table,
      source,
      rows,
      quasiIdentifiers: qis,
      sensitive: sensitives,
      ...(original ? { original } : {}),
      hierarchies,
      ...measures,
      ...(population ? { population } : {}),
      kernel,
    });
  }
  const json = `${JSON.stringify(evaluation, null, 2)}\n`;
  if (out === '-') {
    process.stdout.write(json);
    return 0;
  }
  if (out !== undefined) writeAtomically(out, json);
  process.stdout.write(summary(evaluation, out));
  return 0;
}

/**
 * Whether the file at `path` is an earlier output of evaluate, by its first bytes: the JSON of an
 * Evaluation, which starts with its source and counts its rows and suppressed rows.
 */
function isEvaluation(path: string): boolean {
  const head = fileHead(path);
  return /^\{\s*"source":/.test(head) && head.includes('"rows":') && head.includes('"suppressedRows":');
}

/**
 * evaluate reads a table as rows with their quasi-identifiers, which only generalization and
 * Mondrian release: Anatomy's and Slicing's buckets and a randomized table would be misread
 * (each row a class of its own, a joined column not found, a risk of NaN). A release of another
 * method (the report.json of the release `path` is or lies in) is refused before any work.
 */
function refuseOtherLayouts(path: string): void {
  const folder = releaseFolderOf(path);
  if (folder === undefined) return;
  const method = (savedReport(join(folder, 'report.json')) as { spec?: { method?: unknown } } | undefined)
    ?.spec?.method;
  if (typeof method !== 'string' || CLASS_METHODS.has(method)) return;
  throw new PpdpError(
    'E_EVALUATE_METHOD',
    `${path}: evaluate measures releases of ${[...CLASS_METHODS].join(' and ')} (rows with their quasi-identifiers); this release was made by ${method}, and its report.json holds its verified figures`,
    `read ${join(relative(process.cwd(), folder) || '.', 'report.json')} (report.html for a person); to measure the input's own risk, evaluate the input table with --spec`,
  );
}

/**
 * A release's report.json as JSON; undefined when it is missing or not JSON. One that is there
 * but cannot be read is refused: evaluate would otherwise measure the release without its
 * method and node (rows counted, not persons) and say nothing of why.
 */
function savedReport(path: string): unknown {
  if (!existsSync(path)) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const { message, hint } = cannotRead(
      "release's report",
      relative(process.cwd(), path) || path,
      path,
      err,
    );
    throw new PpdpError(
      'E_EVALUATE_REPORT',
      message,
      `${hint}: evaluate reads the release's method and node from it`,
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * With an entity column in the spec: its name, and the release's node from the report.json of
 * the release folder evaluated (persons are placed through the hierarchies at that node).
 */
function entitySetting(
  attributes: readonly { readonly name: string; readonly type: string }[],
  path: string,
): { persons?: PersonSetting } {
  const entity = attributes.find((a) => a.type === 'entity')?.name;
  if (entity === undefined) return {};
  // An unreadable report names no node: the figures are then said not to count persons.
  const report = statSync(path).isDirectory()
    ? (savedReport(join(path, 'report.json')) as { generalization?: { node?: unknown } } | undefined)
    : undefined;
  const n = report?.generalization?.node;
  const node = n && typeof n === 'object' ? (n as Record<string, number>) : undefined;
  return { persons: { entity, ...(node ? { node } : {}) } };
}

/** `--hierarchy <attribute>=<file>`: the attribute and the file. */
function hierarchyOption(text: string): readonly [string, string] {
  const at = text.indexOf('=');
  if (at <= 0) {
    throw new PpdpError(
      'E_USAGE',
      `--hierarchy ${text}: expected <attribute>=<file>`,
      'e.g. --hierarchy age=age.csv',
    );
  }
  return [text.slice(0, at), text.slice(at + 1)];
}

/** --population <n> or --sampling-fraction <f> (not both), checked as numbers here and against the table later. */
function populationOption(
  size: string | undefined,
  fraction: string | undefined,
): PopulationSpec | undefined {
  if (size !== undefined && fraction !== undefined) {
    throw new PpdpError(
      'E_USAGE',
      '--population and --sampling-fraction say the same thing: give one',
      'e.g. --population 1000000 or --sampling-fraction 0.01',
    );
  }
  if (size !== undefined) {
    const n = Number(size);
    if (!(Number.isSafeInteger(n) && n > 0)) {
      throw new PpdpError(
        'E_USAGE',
        `--population must be a whole number of people (got '${size}')`,
        'e.g. --population 1000000',
      );
    }
    return { size: n };
  }
  if (fraction !== undefined) {
    const f = Number(fraction);
    if (!(f > 0 && f <= 1)) {
      throw new PpdpError(
        'E_USAGE',
        `--sampling-fraction must be in (0, 1] (got '${fraction}')`,
        'e.g. --sampling-fraction 0.01',
      );
    }
    return { samplingFraction: f };
  }
  return undefined;
}

/**
 * A folder means its data.arrow (else data.csv), or the Arrow files of its parts in order
 * (data/part-*.arrow, a large release): a release folder.
 */
function tablePaths(path: string): string[] {
  if (!existsSync(path)) {
    throw new PpdpError(
      'E_INPUT_MISSING',
      `${path}: no such file or folder`,
      'give a CSV, an Arrow file or a release folder',
    );
  }
  if (!statSync(path).isDirectory()) {
    // A spec here would be read as a CSV and refused for its quotes: say what it is.
    if (specLike(fileHead(path, 4096))) {
      throw swappedArguments(
        path,
        'a release spec (JSON)',
        'a table',
        'give the table (CSV, Arrow, Parquet) or release folder first and the spec with --spec, e.g. ppdp evaluate data.csv --spec release.json',
      );
    }
    return [path];
  }
  for (const name of ['data.arrow', 'data.csv']) if (existsSync(join(path, name))) return [join(path, name)];
  const parts = existsSync(join(path, 'data'))
    ? readdirSync(join(path, 'data'))
        .filter((f) => /^part-\d+\.arrow$/.test(f))
        .sort()
        .map((f) => join(path, 'data', f))
    : [];
  if (parts.length > 0) return parts;
  throw new PpdpError(
    'E_INPUT_MISSING',
    `${path}: no data.arrow, data.csv or data/part-*.arrow`,
    'point at a release folder or a table',
  );
}

function summary(e: Evaluation, out: string | undefined): string {
  // The report's formatters: counts with thousands separators, 4 significant digits.
  const num = (x: number | null) => (x === null ? '—' : Number.isFinite(x) ? fmtNum(x) : String(x));
  const models = (e.models ?? []).flatMap((m) =>
    m.measured === false ? [] : [{ model: m.model, params: m.params, achieved: { t: m.worst } }],
  );
  // With persons placed, the risks count persons as the release's report does.
  const one = e.persons !== undefined && !('notMeasured' in e.persons) ? 'person' : 'record';
  const who = `${one}s`;
  const lines = [
    `${e.source}: ${counted(e.rows, 'row')} (${thousands(e.suppressedRows)} suppressed${e.removedRows > 0 ? `, ${thousands(e.removedRows)} of them removed: rows of the original the table lacks` : ''}), ${counted(e.classes, 'class', 'classes')} over ${e.quasiIdentifiers.join(', ')}`,
    ...(e.persons === undefined
      ? [`  k achieved            ${thousands(e.kAchieved)}`]
      : 'notMeasured' in e.persons
        ? [
            `  k achieved            ${counted(e.kAchieved, 'row')} (not counted over persons: ${e.persons.notMeasured})`,
            '  l, t, δ               not counted over persons here; the release’s report.json gives them over persons',
          ]
        : [
            `  k achieved            ${counted(e.persons.kAchieved, 'person')} (${counted(e.persons.input, 'person')}, ${thousands(e.persons.suppressed)} with a suppressed row)`,
            '  (l, t, δ and the models below count persons: each weighs 1 in a class, split over their rows)',
          ]),
    `  prosecutor risk       max ${num(e.risk.prosecutor.max)}, mean ${num(e.risk.prosecutor.mean)}; ` +
      `${counted(e.risk.prosecutor.recordsAbove, one)} (${fmtPct(e.risk.prosecutor.shareAbove)}) above ${e.risk.threshold}`,
    `  journalist risk       max ${num(e.risk.journalist.max)} (${e.risk.journalist.note})`,
    `  marketer risk         ${num(e.risk.marketer)}`,
    `  sample uniques        ${fmtPct(e.risk.sample.sampleUniques)} of ${who}`,
    ...(e.populationRisk
      ? [
          `  population uniques    ${Object.entries(e.populationRisk.estimates)
            .map(([m, x]) => `${m} ${x.uniques === null ? 'not fitted' : num(x.uniques)}`)
            .join(
              ', ',
            )} (in a population of ${thousands(e.populationRisk.populationSize)}${e.populationRisk.over === 'persons' ? ' persons, counted over persons' : ''}; ${
            e.populationRisk.dankarModel === null
              ? 'no sample uniques, so none is estimated unique'
              : `Dankar's rule chose ${e.populationRisk.dankarModel}`
          })`,
        ]
      : []),
    ...(e.weightedRisk
      ? [
          `  weighted risk         ${num(e.weightedRisk.expectedReidentifications)} expected re-identifications ` +
            `(global ${num(e.weightedRisk.globalRisk)}, max ${num(e.weightedRisk.maxRisk)}; weights in ${e.weightedRisk.weight})`,
        ]
      : []),
    ...(e.specialUniques
      ? [
          `  special uniques       ${counted(e.specialUniques.recordsWithMsu, 'record')} (${fmtPct(e.specialUniques.shareWithMsu)}) with an MSU ` +
            `of ≤ ${counted(e.specialUniques.maxSize, 'attribute')}; SUDA score max ${num(e.specialUniques.maxScore)}, mean ${num(e.specialUniques.meanScore)}`,
        ]
      : []),
    ...Object.values(e.disclosure).map((d) => {
      // One t per attribute: the t-closeness model's on it (its distance), else the default rule's.
      const t = attributeT(d.attribute, d, models)!;
      return (
        `  ${d.attribute.padEnd(21)} distinct l ${num(d.release.distinctL)}, entropy l ${num(d.release.entropyL)}, ` +
        `t (${t.distance}) ${num(t.t)}, δ ${num(d.release.delta)}`
      );
    }),
    ...(e.models ?? []).map((m) =>
      m.notMeasured !== undefined
        ? `  ${m.model.padEnd(21)} not measured: ${m.notMeasured}`
        : m.measured === false
          ? `  ${m.model.padEnd(21)} not measured: it needs its population table generalized as the release was (the release's report checks it)`
          : `  ${m.model.padEnd(21)} ${m.satisfied ? 'satisfied' : `NOT satisfied (${counted(m.classesFailing, 'class', 'classes')} ${m.classesFailing === 1 ? 'fails' : 'fail'})`}, worst ${
              m.model === T_CLOSENESS.name && typeof m.params.distance === 'string'
                ? `t (${m.params.distance}) `
                : ''
            }${num(m.worst)}`,
    ),
    ...(e.utility
      ? [
          `  information loss      NCP ${num(e.utility.ncp)}, discernibility ${thousands(e.utility.discernibility)}, ` +
            `AECS ${num(e.utility.aecs)} (k = ${e.utility.aecsK.k}, ${e.utility.aecsK.from === 'spec' ? 'the spec’s' : 'the k achieved: no spec'})` +
            (e.utility.unmeasuredCells > 0
              ? `; ${counted(e.utility.unmeasuredCells, 'cell')} not measurable, counted 0: the NCP is a lower bound`
              : ''),
        ]
      : []),
    // As release prints its verdict's causes; a column name's bidi controls shown, not obeyed.
    ...(e.cautions ?? []).map((c) => `  caution: ${printable(c)}`),
    out === undefined ? 'not written: add --out <file> for the measures as JSON' : `written to ${out}`,
  ];
  return `${lines.join('\n')}\n`;
}
