/**
 * The release spec (`release.json`, docs/release-spec.md): the user's contract. Parsing validates every
 * field against the schema below and names the field, what is allowed and what was found.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { findModel, modelNames, type PrivacyModelSpec } from '../catalogue/catalogue.ts';
import type { ModelDeclaration, ParamField } from '../catalogue/declaration.ts';
import { DELTA_DISCLOSURE } from '../catalogue/delta-disclosure.ts';
import { K_ANONYMITY } from '../catalogue/k-anonymity.ts';
import {
  DISTINCT_L_DIVERSITY,
  ENTROPY_L_DIVERSITY,
  RECURSIVE_CL_DIVERSITY,
} from '../catalogue/l-diversity.ts';
import { T_CLOSENESS } from '../catalogue/t-closeness.ts';
import { HierarchyError, InputError, SpecError } from '../errors.ts';
import { isDecimalMultiple } from '../util/decimal.ts';
import { MIN_SAMPLING_FRACTION } from '../util/limits.ts';
import { nearest } from '../util/nearest.ts';
import { allNumbers } from '../util/numbers.ts';
import { ownRecord } from '../util/record.ts';
import { cannotRead, isMissing } from '../util/unreadable.ts';
import { checkSpecSize, findDuplicateKey, locateJsonError, swappedArguments, tableLike } from './json.ts';
import { checkSpecLimits, type Field, type ObjectSchema, validateObject } from './schema.ts';

export type AttributeType = 'identifying' | 'quasi-identifying' | 'sensitive' | 'insensitive' | 'entity';
export const ATTRIBUTE_TYPES: readonly AttributeType[] = [
  'identifying',
  'quasi-identifying',
  'sensitive',
  'insensitive',
  'entity',
];

/**
 * Whether a column of this type is released: not an identifying one (dropped as read), nor the
 * entity (a person's id: read, to count persons, and never released).
 */
export function isReleasedType(type: AttributeType | undefined): boolean {
  return type !== 'identifying' && type !== 'entity';
}

/**
 * A column that generalization releases as it is, read by no hierarchy, model or metric (an
 * insensitive one): it travels as its rows' bytes from the reader to the released files.
 */
export function isPassThroughType(type: AttributeType | undefined): boolean {
  return type === 'insensitive';
}

/** The spec's entity column (a person's id, docs/definitions.md "Several rows per person"), if any. */
export function entityOf(spec: Pick<ReleaseSpec, 'attributes'>): string | undefined {
  return spec.attributes.find((a) => a.type === 'entity')?.name;
}

/** The attributes' `missing` texts, by column (for the readers). */
export function missingTexts(spec: Pick<ReleaseSpec, 'attributes'>): Map<string, ReadonlySet<string>> {
  return new Map(spec.attributes.flatMap((a) => (a.missing ? [[a.name, new Set(a.missing)] as const] : [])));
}

export type HierarchySpec =
  | { readonly kind: 'file'; readonly path: string /** As written in the spec. */; readonly written?: string }
  | {
      readonly kind: 'intervals';
      readonly widths: number[];
      /** Bottom coding: values below it become `<bottom` at every level but the top. */
      readonly bottom?: number;
      /** Top coding: values at or above it become `>=top` at every level but the top. */
      readonly top?: number;
    }
  | { readonly kind: 'mask'; readonly direction: 'right' | 'left' }
  | { readonly kind: 'date'; readonly format: string; readonly levels: DateLevel[] }
  | { readonly kind: 'groups'; readonly levels: Readonly<Record<string, string>>[] };

/** The levels a date hierarchy can climb through, finest first. */
export const DATE_LEVELS = ['month', 'quarter', 'year', 'decade'] as const;
export type DateLevel = (typeof DATE_LEVELS)[number];

/** How values of an attribute compare: nominal (categories), ordinal (ordered codes), numeric. */
export type AttributeScale = 'nominal' | 'ordinal' | 'numeric';

export interface AttributeSpec {
  readonly name: string;
  readonly type: AttributeType;
  readonly hierarchy: HierarchySpec | undefined;
  /** Default: nominal. Mondrian splits numeric and ordinal attributes by value order. */
  readonly scale: AttributeScale;
  /** Cells (blanks around them aside) read as the missing value, as an empty cell is: `NA`, `NULL`. */
  readonly missing?: readonly string[];
}

/** A privacy model's spec: derived from the models' declarations (src/catalogue/). */
export type { PrivacyModelSpec };

export type KMapEstimator = Extract<PrivacyModelSpec, { populationSize: number }>['estimator'];

/** The models judged against a population table. */
export type PopulationModelSpec = Extract<PrivacyModelSpec, { population: string }>;

export function isPopulationModel(m: PrivacyModelSpec): m is PopulationModelSpec {
  return 'population' in m;
}

export type MetricName = 'ncp' | 'discernibility' | 'precision' | 'aecs' | 'entropy' | 'loss';
export const METRIC_NAMES: readonly MetricName[] = [
  'ncp',
  'discernibility',
  'precision',
  'aecs',
  'entropy',
  'loss',
];

/** ARX's Loss (docs/definitions.md §6): how attributes are aggregated, how suppression weighs, per-QI weights. */
export interface LossSpec {
  readonly aggregate: 'geometric' | 'arithmetic';
  /** In [0, 1]: 0.5 weighs generalization and suppression alike, 0 favours suppression, 1 generalization. */
  readonly gsFactor: number;
  /** QI name → weight > 0 (relative: divided by the largest); a QI not named weighs 1. */
  readonly weights: Readonly<Record<string, number>> | undefined;
}

export const PREFERENCES = [
  'min-absolute-distance',
  'min-relative-distance',
  'max-distribution',
  'min-suppression',
] as const;
export type Preference = (typeof PREFERENCES)[number];

export interface GeneralizationMethodSpec {
  readonly name: 'generalization';
  /** Fraction of rows that may be suppressed, in [0, 1]. */
  readonly maxSuppression: number;
  readonly metric: MetricName;
  /** The Loss metric's settings (used by metric `loss`, and for the Loss the report gives). */
  readonly loss: LossSpec;
  readonly strategy: 'optimal' | 'k-minimal';
  /** With strategy k-minimal: how to choose among the k-minimal nodes. */
  readonly preference: Preference;
  readonly suppressed: 'mask' | 'remove';
  /**
   * Best-effort search (lattices past limits.maxLatticeNodes, or when either is set): stop
   * after this many seconds (a safety stop: results then depend on the machine's speed)…
   */
  readonly timeLimit?: number | undefined;
  /** …or after this many nodes evaluated (the deterministic stop). */
  readonly nodeBudget?: number | undefined;
  /**
   * How records in classes below k are protected (docs/definitions.md, "Cell suppression"):
   * `rows` (absent: the default) suppresses them whole, `cells` suppresses the fewest QI cells.
   */
  readonly suppression?: 'rows' | 'cells' | undefined;
  /** With cell suppression: QI name → importance ≥ 0 (higher: suppressed later); a QI not named has 0. */
  readonly importance?: Readonly<Record<string, number>> | undefined;
}

export interface MondrianMethodSpec {
  readonly name: 'mondrian';
  readonly mode: 'strict' | 'relaxed';
  /** Compute the distribution measures (KL, χ², CUBE query error); default true. */
  readonly measures: boolean;
}

export interface AnatomyMethodSpec {
  readonly name: 'anatomy';
}

export interface SlicingMethodSpec {
  readonly name: 'slicing';
  /** Number of columns to cluster attributes into (when columnGroups is not given). */
  readonly columns: number | undefined;
  /** Explicit attribute groups, one per column. */
  readonly columnGroups: string[][] | undefined;
  /** How tuple partitioning splits a bucket: at a QI's median (default) or into random halves. */
  readonly split: 'mondrian' | 'random';
}

export interface RandomizationMethodSpec {
  readonly name: 'randomization';
  readonly scenario: 'rr-s' | 'rr-qi' | 'rr-both';
  readonly form: 'retention' | 'uniform';
  readonly smallDomain: boolean;
  /** Explicit retention probability per attribute (skips the optimizer). */
  readonly retention: Readonly<Record<string, number>> | undefined;
  /** User-supplied distortion matrices per attribute (`{ categories, matrix }`, validated by the method). */
  readonly matrices: Readonly<Record<string, unknown>> | undefined;
  /** How numeric attributes become categories: a hierarchy level or equal-width bins. */
  readonly discretize: Readonly<Record<string, { level: number } | { bins: number }>> | undefined;
}

export type MethodSpec =
  | GeneralizationMethodSpec
  | MondrianMethodSpec
  | AnatomyMethodSpec
  | SlicingMethodSpec
  | RandomizationMethodSpec;
export type MethodName = MethodSpec['name'];
export const METHOD_NAMES: readonly MethodName[] = [
  'generalization',
  'mondrian',
  'anatomy',
  'slicing',
  'randomization',
];

export interface ReleaseSpec {
  /** Absolute path of the spec file; other paths are resolved against its folder. */
  readonly file: string;
  readonly input: string;
  /** `input` as written in the spec (for messages). */
  readonly inputWritten?: string;
  readonly format: {
    readonly delimiter: string | undefined;
    readonly type: 'csv' | 'arrow' | 'parquet' | 'xlsx' | undefined;
    /** Excel input: the sheet, by name or 1-based position; absent: the first. */
    readonly sheet?: string | number;
    /** Empty cells in a quasi-identifier: an error (default), or a value of their own. */
    readonly emptyCells?: 'error' | 'value';
    /**
     * Whether the release's CSV files prefix `'` to every cell a spreadsheet would read as a
     * formula (see docs/release-spec.md, CSV formulas); the Arrow files are never changed.
     */
    readonly escapeFormulas?: boolean;
    /** `,`: numbers written with a decimal comma (3,75) are read as with a point (3.75); absent: `.`. */
    readonly decimal?: '.' | ',';
    /**
     * CSV input whose quoted fields may hold line breaks: read in one piece, never cut into
     * ranges read side by side (a cut at a line break could fall inside such a field).
     */
    readonly lineBreaksInQuotes?: boolean;
  };
  /**
   * The release's data files: data.arrow and data.csv always, data.parquet as well when listed
   * (docs/release-spec.md, "output"). Absent: the default, Arrow and CSV.
   */
  readonly output?: { readonly formats: readonly OutputFormat[] };
  /** Resource limits, checked before the work they bound starts (see src/data/limits.ts). */
  readonly limits?: SpecLimits;
  readonly attributes: AttributeSpec[];
  readonly privacy: PrivacyModelSpec[];
  readonly method: MethodSpec;
  readonly seed: number;
  readonly report: ReportSpec;
  /**
   * Defaults the input's values decide (withColumnDefaults fills them): the privacy entries,
   * by index, whose t-closeness distance the spec leaves out (`equal` until then).
   */
  readonly pending?: Readonly<Record<string, readonly number[]>>;
}

/** A format the release's data is written in. */
export type OutputFormat = 'arrow' | 'csv' | 'parquet';
const OUTPUT_FORMATS: readonly OutputFormat[] = ['arrow', 'csv', 'parquet'];

/** Whether the release holds its data as Parquet too (data.parquet, or a .parquet per part). */
export function writesParquet(spec: Pick<ReleaseSpec, 'output'>): boolean {
  return spec.output?.formats.includes('parquet') ?? false;
}

/** What the report measures against. */
export interface ReportSpec {
  /** A row whose re-identification (or attribute-disclosure) risk exceeds this counts as at risk. */
  readonly riskThreshold: number;
  /** The population the input was drawn from: population uniqueness is estimated against it (docs/risk.md). */
  readonly population?: { readonly size: number } | { readonly samplingFraction: number };
  /** Whether the spec sets riskThreshold (randomization otherwise measures against its τ). */
  readonly riskThresholdSet?: boolean;
}

/** The risk threshold when the spec sets none: one chance in five. */
export const DEFAULT_RISK_THRESHOLD = 0.2;

export interface SpecLimits {
  /** Memory budget in MB for the input (default: the machine's memory; `--max-memory` overrides). */
  readonly maxMemoryMB: number | undefined;
  /** Largest generalization lattice searched (default 10^7 nodes). */
  readonly maxLatticeNodes: number | undefined;
}

const num = (min: number, max: number, integer = false, example?: number): Field => ({
  kind: 'number',
  min,
  max,
  integer,
  ...(example === undefined ? {} : { example }),
});
const str = (values?: readonly string[]): Field => ({ kind: 'string', values });

/**
 * A model's fields as the spec checks them, from its declaration: a variant's fields are each
 * optional (its `refine` says which variant a spec gives), and so is a field with a default.
 */
function modelFields(d: ModelDeclaration): ObjectSchema {
  const field = (f: ParamField, inVariant: boolean): Field => {
    const required = !inVariant && !('optional' in f && f.optional) ? { required: true } : {};
    switch (f.kind) {
      case 'number':
        return { ...num(f.min, f.max, f.integer ?? false, f.example), ...required };
      case 'string':
        return { ...str(f.values), ...required };
      case 'attribute':
      case 'file':
        return { ...str(), ...required };
      case 'levels':
        return { kind: 'object', ...required };
    }
  };
  const own = Object.entries(d.fields).map(([k, f]) => [k, field(f, false)] as const);
  const variants = (d.variants ?? []).flatMap((v) =>
    Object.entries(v).map(([k, f]) => [k, field(f, true)] as const),
  );
  return Object.fromEntries([...own, ...variants]);
}

const TOP_LEVEL: ObjectSchema = {
  input: { ...str(), required: true },
  format: { kind: 'object' },
  attributes: { kind: 'object', required: true },
  privacy: { kind: 'array', required: true },
  method: { kind: 'object', required: true },
  seed: num(0, 2 ** 32 - 1, true),
  root: str(),
  limits: { kind: 'object' },
  report: { kind: 'object' },
  output: { kind: 'object' },
};
const OUTPUT: ObjectSchema = {
  formats: { kind: 'array', required: true },
};
const REPORT: ObjectSchema = {
  riskThreshold: num(0, 1),
  population: { kind: 'object' },
};
const POPULATION: ObjectSchema = {
  size: num(1, Number.MAX_SAFE_INTEGER, true, 1000000),
  samplingFraction: num(MIN_SAMPLING_FRACTION, 1, false, 0.01),
};
const FORMAT: ObjectSchema = {
  delimiter: str([';', ',', '\t', '|']),
  type: str(['csv', 'arrow', 'parquet', 'xlsx']),
  sheet: { kind: 'any' },
  emptyCells: str(['error', 'value']),
  escapeFormulas: { kind: 'boolean' },
  decimal: str(['.', ',']),
  lineBreaksInQuotes: { kind: 'boolean' },
};
/**
 * `format.sheet`: a sheet's name (1 to 31 characters, as Excel allows) or its position from 1
 * (`where` names the spec or the command; `option`, the command's option that gives it).
 */
export function sheetSetting(value: unknown, where: string, option?: string): string | number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65_535) return value;
  if (typeof value === 'string' && value.length >= 1 && value.length <= 31) return value;
  throw new SpecError(
    option === undefined ? 'E_SPEC_TYPE' : 'E_USAGE',
    `${where}: ${option ?? 'format.sheet'} must be a sheet's name (1 to 31 characters) or its position from 1, got ${typeof value === 'string' ? `a string of ${value.length} characters` : JSON.stringify(value)?.slice(0, 40)}`,
    option === undefined
      ? 'e.g. "format": { "sheet": "Data" } or "format": { "sheet": 2 }'
      : `e.g. ${option} Data or ${option} 2`,
  );
}
const LIMITS: ObjectSchema = {
  maxMemoryMB: num(1, 1e9),
  maxLatticeNodes: num(1, Number.MAX_SAFE_INTEGER, true),
};
const ATTRIBUTE: ObjectSchema = {
  type: { ...str(ATTRIBUTE_TYPES), required: true },
  hierarchy: { kind: 'any' },
  scale: str(['nominal', 'ordinal', 'numeric']),
  missing: { kind: 'array' },
};
const METHODS: Record<MethodName, ObjectSchema> = {
  generalization: {
    name: str(),
    maxSuppression: num(0, 1),
    metric: str(METRIC_NAMES),
    loss: { kind: 'object' },
    strategy: str(['optimal', 'k-minimal']),
    preference: str(PREFERENCES),
    suppressed: str(['mask', 'remove']),
    timeLimit: num(0.001, 1e7, false, 30),
    nodeBudget: num(1, Number.MAX_SAFE_INTEGER, true, 20000),
    suppression: str(['rows', 'cells']),
    importance: { kind: 'object' },
  },
  mondrian: { name: str(), mode: str(['strict', 'relaxed']), measures: { kind: 'boolean' } },
  anatomy: { name: str() },
  slicing: {
    name: str(),
    columns: num(1, 1000, true),
    columnGroups: { kind: 'array' },
    split: str(['mondrian', 'random']),
  },
  randomization: {
    name: str(),
    scenario: str(['rr-s', 'rr-qi', 'rr-both']),
    form: str(['retention', 'uniform']),
    smallDomain: { kind: 'boolean' },
    retention: { kind: 'object' },
    matrices: { kind: 'object' },
    discretize: { kind: 'object' },
  },
};

/**
 * Reads and validates a spec file. `confinedTo` names the folder a spec came from when it was
 * read from a bucket (e.g. `s3://b/inbox/x/`): every path it names must then stay inside it.
 */
export function loadSpec(path: string, confinedTo?: string): ReleaseSpec {
  const file = resolve(path);
  const notSpec = (kind: string): never => {
    throw swappedArguments(
      file,
      `a table (${kind})`,
      'a release spec',
      'give the release spec (a JSON file such as release.json) where the command expects it; the spec names the table in its "input"',
    );
  };
  // A binary table is named before its size or bytes are looked at.
  const magic = tableLike(file);
  if (magic !== undefined) notSpec(magic);
  checkSpecSize(file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
    // A byte order mark (Notepad adds one) is not part of the JSON.
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  } catch (err) {
    if (existsSync(file) && statSync(file).isDirectory()) {
      throw new SpecError(
        'E_SPEC_MISSING',
        `${path}: is a folder, not a release spec file`,
        `name the spec file inside it, e.g. ${join(path, 'release.json')}`,
      );
    }
    if (isMissing(err)) {
      throw new SpecError(
        'E_SPEC_MISSING',
        `${path}: release spec not found`,
        'check the path to release.json',
      );
    }
    // There but locked (a permission on it or a folder above it) is not "not found".
    const { message, hint } = cannotRead('release spec', path, file, err);
    throw new SpecError('E_SPEC_MISSING', message, hint);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Nothing of the text is quoted: a spec may hold data values, and the file may be a table.
    const table = tableLike(file, text);
    if (table !== undefined) notSpec(table);
    const at = locateJsonError(text);
    throw new SpecError(
      'E_SPEC_JSON',
      `${basename(file)} line ${at.line}, column ${at.column}: not valid JSON (${at.problem})`,
      at.hint,
    );
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate) {
    throw new SpecError(
      'E_SPEC_DUPLICATE',
      `${basename(file)} line ${duplicate.line}: ${duplicate.path} is given twice (first on line ${duplicate.firstLine})`,
      'keep one entry: JSON would silently keep only the last one (a column has one type and one hierarchy)',
    );
  }
  if (confinedTo !== undefined) confineSpecPaths(json, basename(file), confinedTo);
  return parseSpec(json, file);
}

/**
 * A spec read from a bucket may be anyone's: it names files inside its own folder only, so it
 * cannot read another inbox, the work area, or the reading machine's own files (`/proc`,
 * `/etc`). Checked on the parsed JSON, before any file it names is read; a person running the
 * CLI on their own spec keeps absolute paths and `root`.
 * @throws SpecError E_SPEC_PATH naming the field.
 */
export function confineSpecPaths(json: unknown, where: string, folder: string): void {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return; // parseSpec names it
  const top = json as { root?: unknown; input?: unknown; attributes?: unknown; privacy?: unknown };
  const refuse = (field: string, why: string): never => {
    throw new SpecError(
      'E_SPEC_PATH',
      `${where}: ${field} ${why}; a spec read from ${folder} may only name files inside that folder`,
      'name each file relative to release.json, without ".." (e.g. "input": "data.csv"), and upload it to the same folder',
    );
  };
  if (top.root !== undefined) refuse('root', 'is set');
  const check = (field: string, path: unknown) => {
    if (typeof path !== 'string') return; // parseSpec names a wrong type
    const problem = confinedPathProblem(path);
    if (problem) refuse(`${field} '${path}'`, problem);
  };
  check('input', top.input);
  if (typeof top.attributes === 'object' && top.attributes !== null) {
    for (const [name, a] of Object.entries(top.attributes as Record<string, unknown>)) {
      check(`attributes.${name}.hierarchy`, (a as { hierarchy?: unknown } | null)?.hierarchy);
    }
  }
  if (Array.isArray(top.privacy)) {
    top.privacy.forEach((m, i) => {
      check(`privacy[${i}].population`, (m as { population?: unknown } | null)?.population);
    });
  }
}

/** Why a path may not be named by a confined spec, or undefined when it stays inside its folder. */
function confinedPathProblem(path: string): string | undefined {
  if (path.trim() === '') return 'is empty';
  if (path.includes('\\') || path.includes('\0')) return 'holds a backslash or a NUL (use / between folders)';
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(path)) return 'is a URL';
  if (path.startsWith('/') || path.startsWith('~')) return 'is an absolute path';
  let depth = 0;
  for (const segment of path.split('/')) {
    if (segment === '..') depth--;
    else if (segment !== '' && segment !== '.') depth++;
    if (depth < 0) return 'leads out of the folder';
  }
  return depth === 0 ? 'names the folder itself' : undefined;
}

/**
 * Checks that the input, hierarchy and population files the spec names exist, before any is
 * read, and that each but the input (which may be a folder of parts) is a file, not a folder.
 * A missing one is named as the spec writes it, with the folder it was resolved from and the
 * path tried. `shownDir` names the spec's folder for a person when the spec was copied from
 * elsewhere (an `s3://` spec is read from a local copy).
 */
export function checkSpecFiles(spec: ReleaseSpec, shownDir?: string): void {
  const check = specFileCheck(spec, shownDir);
  check(
    (m, h) => new InputError('E_INPUT_MISSING', m, h),
    'input',
    spec.inputWritten ?? spec.input,
    spec.input,
    undefined,
  );
  for (const a of spec.attributes) checkHierarchyFile(spec, a, shownDir);
  for (const [i, m] of spec.privacy.entries()) {
    if (!isPopulationModel(m)) continue;
    check(
      (message, hint) => new InputError('E_POPULATION_MISSING', message, hint),
      `privacy[${i}].population`,
      relative(dirname(spec.file), m.population),
      m.population,
      'name one CSV, Arrow or Parquet file holding the population table',
    );
  }
}

/** checkSpecFiles for one attribute's hierarchy file (none for a builder or no hierarchy). */
export function checkHierarchyFile(spec: ReleaseSpec, a: AttributeSpec, shownDir?: string): void {
  const h = a.hierarchy;
  if (h?.kind !== 'file') return;
  specFileCheck(spec, shownDir)(
    (message, hint) => new HierarchyError('E_HIERARCHY_MISSING', message, hint),
    `attributes.${a.name}.hierarchy`,
    h.written ?? h.path,
    h.path,
    `name the hierarchy's CSV file (value;level1;…;*), e.g. ${h.written ?? h.path}/${a.name}.csv, or a builder such as { "mask": "right" }`,
  );
}

/**
 * Throws (the error `make` gives) for the file `field` names, `written` in the spec and
 * resolved to `path`, when it is missing, or, given `fileHint`, when it is not a file (a folder).
 */
function specFileCheck(spec: ReleaseSpec, shownDir: string | undefined) {
  const where = basename(spec.file);
  const dir = shownDir?.replace(/\/$/, '') ?? dirname(spec.file);
  const shown = (path: string) =>
    shownDir === undefined ? path : `${dir}/${relative(dirname(spec.file), path)}`;
  return (
    make: (message: string, hint: string) => Error,
    field: string,
    written: string,
    path: string,
    fileHint: string | undefined,
  ): void => {
    if (!existsSync(path)) {
      throw make(
        `${where}: ${field} '${written}' not found: paths in a spec are relative to the spec's folder, ${dir}, so it was looked for at ${shown(path)}`,
        // A spec read from a bucket names only files inside its own folder (confineSpecPaths).
        shownDir === undefined
          ? `put the file at ${shown(path)}, or change ${field} in ${where} to its path relative to ${dir} (or to an absolute path)`
          : `upload the file to ${shown(path)}, or change ${field} in ${where} to the name of a file inside ${dir}`,
      );
    }
    const stat = statSync(path);
    if (fileHint !== undefined && !stat.isFile()) {
      const is = stat.isDirectory() ? 'a folder, not a file' : 'not a regular file (a pipe or a device)';
      throw make(`${where}: ${field} '${written}' is ${is} (${shown(path)})`, fileHint);
    }
  };
}

/** Validates a parsed spec. `file` is the spec's absolute path (paths resolve against its folder). */
export function parseSpec(json: unknown, file: string): ReleaseSpec {
  const where = basename(file);
  const dir = dirname(file);
  checkSpecLimits(json, where);
  const top = validateObject(json, TOP_LEVEL, where, '');
  const format = top.format === undefined ? {} : validateObject(top.format, FORMAT, where, 'format');
  const limits = top.limits === undefined ? {} : validateObject(top.limits, LIMITS, where, 'limits');
  const report = top.report === undefined ? {} : validateObject(top.report, REPORT, where, 'report');
  const output = top.output === undefined ? undefined : validateObject(top.output, OUTPUT, where, 'output');
  const inside = pathGuard(where, dir, top.root as string | undefined);
  const methodName = validateObject(
    top.method,
    { name: { ...str(METHOD_NAMES), required: true } },
    where,
    'method',
    undefined,
    true,
  ).name as MethodName;
  const method = validateObject(top.method, METHODS[methodName], where, 'method');

  const attributes = Object.entries(top.attributes as Record<string, unknown>).map(([name, raw]) => {
    const a = validateObject(raw, ATTRIBUTE, where, `attributes.${name}`);
    const type = a.type as AttributeType;
    const hierarchy =
      a.hierarchy === undefined
        ? undefined
        : parseHierarchy(a.hierarchy, where, `attributes.${name}.hierarchy`, inside);
    if (type === 'quasi-identifying' && hierarchy === undefined && methodName === 'generalization') {
      throw new SpecError(
        'E_SPEC_HIERARCHY',
        `${where}: attributes.${name} is quasi-identifying but has no hierarchy`,
        'add "hierarchy": a CSV file in ARX format or a builder such as { "intervals": [5, 10] }, { "mask": "right" } or { "date": "YYYY-MM-DD" }',
      );
    }
    const missing =
      a.missing === undefined
        ? {}
        : { missing: parseMissing(a.missing, where, `attributes.${name}.missing`) };
    return { name, type, hierarchy, scale: (a.scale as AttributeScale | undefined) ?? 'nominal', ...missing };
  });
  checkEntity(attributes, methodName, where);
  if (!attributes.some((a) => a.type === 'quasi-identifying')) {
    throw new SpecError(
      'E_SPEC_NO_QI',
      `${where}: attributes names no quasi-identifying column`,
      'mark the columns an attacker could link on as "type": "quasi-identifying"',
    );
  }

  const privacy = (top.privacy as unknown[]).map((raw, i) =>
    parseModel(raw, where, `privacy[${i}]`, attributes, inside),
  );
  checkEntityModels(attributes, privacy, where);
  // The fields left out whose default the input's values decide, by field: the models' indices.
  const leftOut: Record<string, number[]> = {};
  for (const [i, raw] of (top.privacy as Record<string, unknown>[]).entries()) {
    for (const [key, f] of Object.entries(findModel(privacy[i]!.model)!.fields)) {
      if (f.kind === 'string' && f.byColumn && raw[key] === undefined) (leftOut[key] ??= []).push(i);
    }
  }
  if (privacy.length === 0) {
    throw new SpecError(
      'E_SPEC_PRIVACY',
      `${where}: privacy is empty`,
      'name at least one privacy model, e.g. [{ "model": "k-anonymity", "k": 5 }]',
    );
  }
  const seen = new Set<string>();
  for (const [i, m] of privacy.entries()) {
    const key = `${m.model}:${'attribute' in m ? m.attribute : ''}`;
    if (seen.has(key)) {
      throw new SpecError(
        'E_SPEC_PRIVACY',
        `${where}: privacy[${i}] repeats ${m.model}`,
        'keep one entry per model',
      );
    }
    seen.add(key);
  }
  // One population for the models that need one: its classes are counted once per node.
  const populations = privacy.filter(isPopulationModel);
  const other = populations.findIndex((m) => m.population !== populations[0]!.population);
  if (other >= 0) {
    throw new SpecError(
      'E_SPEC_CONFLICT',
      `${where}: privacy[${privacy.indexOf(populations[other]!)}].population names another file than privacy[${privacy.indexOf(populations[0]!)}].population`,
      'k-map and δ-presence in one spec must name the same population table',
    );
  }
  // Cell suppression is defined for k-anonymity alone (docs/definitions.md, "Cell suppression").
  const notK = privacy.findIndex((m) => m.model !== K_ANONYMITY.name);
  if (method.suppression === 'cells' && notK >= 0) {
    throw new SpecError(
      'E_SPEC_MODEL_METHOD',
      `${where}: privacy[${notK}] is ${privacy[notK]!.model}, and method.suppression "cells" protects k-anonymity only`,
      'use "suppression": "rows" (the default) with this model, or keep only k-anonymity models',
    );
  }
  const entity = attributes.find((a) => a.type === 'entity');
  if (method.suppression === 'cells' && entity) {
    throw new SpecError(
      'E_SPEC_CONFLICT',
      `${where}: attributes.${entity.name} is an entity column, and method.suppression "cells" protects records, not persons`,
      'use "suppression": "rows" (the default) with an entity column',
    );
  }

  return {
    file,
    input: inside('input', top.input as string),
    inputWritten: top.input as string,
    format: {
      delimiter: format.delimiter as string | undefined,
      type: format.type as 'csv' | 'arrow' | 'parquet' | 'xlsx' | undefined,
      ...(format.sheet === undefined ? {} : { sheet: sheetSetting(format.sheet, where) }),
      emptyCells: (format.emptyCells as 'error' | 'value' | undefined) ?? 'error',
      escapeFormulas: (format.escapeFormulas as boolean | undefined) ?? false,
      ...(format.decimal === ',' ? { decimal: ',' as const } : {}),
      ...(format.lineBreaksInQuotes === true ? { lineBreaksInQuotes: true } : {}),
    },
    ...(output === undefined ? {} : { output: { formats: parseFormats(output.formats, methodName, where) } }),
    limits: {
      maxMemoryMB: limits.maxMemoryMB as number | undefined,
      maxLatticeNodes: limits.maxLatticeNodes as number | undefined,
    },
    attributes,
    privacy,
    method: parseMethod(methodName, method, where, attributes),
    seed: (top.seed as number | undefined) ?? 0,
    report: {
      riskThreshold: (report.riskThreshold as number | undefined) ?? DEFAULT_RISK_THRESHOLD,
      ...(report.population === undefined
        ? {}
        : { population: parsePopulation(report.population, methodName, where) }),
      riskThresholdSet: report.riskThreshold !== undefined,
    },
    ...(Object.keys(leftOut).length > 0 ? { pending: leftOut } : {}),
  };
}

/** The methods that count a class's persons when the spec names an entity column. */
const ENTITY_METHODS: readonly MethodName[] = ['generalization'];
/**
 * The models judged over persons when the spec names an entity column (l, t and δ on the
 * person-weighted distributions: docs/definitions.md, "Several rows per person").
 */
const ENTITY_MODELS: readonly string[] = [
  K_ANONYMITY.name,
  DISTINCT_L_DIVERSITY.name,
  ENTROPY_L_DIVERSITY.name,
  RECURSIVE_CL_DIVERSITY.name,
  T_CLOSENESS.name,
  DELTA_DISCLOSURE.name,
];

/**
 * At most one entity column, without a hierarchy, and a method that counts persons.
 * @throws SpecError E_SPEC_ENTITY naming the attribute, or the method.
 */
function checkEntity(attributes: readonly AttributeSpec[], method: MethodName, where: string): void {
  const entities = attributes.filter((a) => a.type === 'entity');
  if (entities.length === 0) return;
  if (entities.length > 1) {
    throw new SpecError(
      'E_SPEC_ENTITY',
      `${where}: attributes.${entities[1]!.name} is a second entity column (attributes.${entities[0]!.name} is one)`,
      'name one column per spec "type": "entity" (the person or household the rows belong to); mark the other "identifying"',
    );
  }
  const entity = entities[0]!;
  if (entity.hierarchy !== undefined) {
    throw new SpecError(
      'E_SPEC_ENTITY',
      `${where}: attributes.${entity.name}.hierarchy is set, but an entity column is never released`,
      `drop the hierarchy of attributes.${entity.name}`,
    );
  }
  if (!ENTITY_METHODS.includes(method)) {
    throw new SpecError(
      'E_SPEC_ENTITY_METHOD',
      `${where}: attributes.${entity.name} is "type": "entity", which method ${method} does not honour yet (it would count rows, not persons)`,
      `use "method": { "name": "generalization" }, or mark attributes.${entity.name} "identifying" if each person has one row`,
    );
  }
}

/** With an entity column, the models judged over persons only. @throws SpecError E_SPEC_ENTITY_MODEL. */
function checkEntityModels(
  attributes: readonly AttributeSpec[],
  privacy: readonly PrivacyModelSpec[],
  where: string,
): void {
  const entity = attributes.find((a) => a.type === 'entity');
  if (!entity) return;
  const i = privacy.findIndex((m) => !ENTITY_MODELS.includes(m.model));
  if (i >= 0) {
    throw new SpecError(
      'E_SPEC_ENTITY_MODEL',
      `${where}: privacy[${i}] is ${privacy[i]!.model}, which is not yet judged over persons (attributes.${entity.name} is "type": "entity")`,
      `with an entity column, use ${ENTITY_MODELS.join(', ')}; or mark attributes.${entity.name} "identifying" to judge rows`,
    );
  }
}

/**
 * `output.formats`: distinct formats, data.arrow and data.csv among them (the verifier reads the
 * release from both); Parquet is written by generalization only.
 */
/** The most markers `format.missing` may list. */
const MAX_MISSING_MARKERS = 20;

/** An attribute's `missing` (`at`): 1 to 20 distinct texts of 1 to 100 characters that are not blank. */
function parseMissing(raw: unknown, where: string, at: string): string[] {
  const markers = raw as unknown[];
  const example = 'e.g. "missing": ["NA", "NULL"]';
  if (markers.length === 0 || markers.length > MAX_MISSING_MARKERS) {
    throw new SpecError(
      'E_SPEC_VALUE',
      `${where}: ${at} lists ${markers.length} texts: it takes 1 to ${MAX_MISSING_MARKERS}`,
      `list the texts that stand for a missing value, ${example}`,
    );
  }
  for (const [i, m] of markers.entries()) {
    if (typeof m !== 'string' || m.trim() === '' || m.length > 100 || markers.indexOf(m) !== i) {
      throw new SpecError(
        'E_SPEC_VALUE',
        `${where}: ${at}[${i}] must be a text of 1 to 100 characters, not blank, listed once`,
        `list the texts that stand for a missing value, ${example} (an empty cell is missing already)`,
      );
    }
  }
  return (markers as string[]).map((m) => m.trim());
}

function parseFormats(raw: unknown, method: MethodName, where: string): OutputFormat[] {
  const formats = raw as unknown[];
  for (const [i, f] of formats.entries()) {
    if (!OUTPUT_FORMATS.includes(f as OutputFormat) || formats.indexOf(f) !== i) {
      throw new SpecError(
        'E_SPEC_OUTPUT',
        `${where}: output.formats[${i}] is ${JSON.stringify(f)}: each of "arrow", "csv" and "parquet" may be listed once`,
        'e.g. "output": { "formats": ["arrow", "csv", "parquet"] }',
      );
    }
  }
  if (!formats.includes('arrow') || !formats.includes('csv')) {
    throw new SpecError(
      'E_SPEC_OUTPUT',
      `${where}: output.formats must list "arrow" and "csv": every release holds data.arrow and data.csv`,
      'e.g. "output": { "formats": ["arrow", "csv", "parquet"] }',
    );
  }
  if (formats.includes('parquet') && method !== 'generalization') {
    throw new SpecError(
      'E_SPEC_OUTPUT',
      `${where}: output.formats lists "parquet", which ${method} does not write`,
      'drop "parquet" from output.formats (generalization writes it), or convert data.arrow',
    );
  }
  return formats as OutputFormat[];
}

/** `"population": { "size": N }` or `{ "samplingFraction": f }`: exactly one of them. */
function parsePopulation(
  raw: unknown,
  method: MethodName,
  where: string,
): NonNullable<ReportSpec['population']> {
  if (method !== 'generalization' && method !== 'mondrian') {
    throw new SpecError(
      'E_SPEC_POPULATION',
      `${where}: report.population is measured on equivalence classes, which ${method} does not release`,
      'drop report.population, or measure the release with ppdp evaluate --population',
    );
  }
  const p = validateObject(raw, POPULATION, where, 'report.population');
  if ((p.size === undefined) === (p.samplingFraction === undefined)) {
    throw new SpecError(
      'E_SPEC_POPULATION',
      `${where}: report.population needs exactly one of size and samplingFraction`,
      'e.g. "population": { "size": 1000000 } or "population": { "samplingFraction": 0.01 }',
    );
  }
  return p.size !== undefined
    ? { size: p.size as number }
    : { samplingFraction: p.samplingFraction as number };
}

/**
 * The spec with the defaults its input's values decide: a t-closeness model without a distance
 * measures `ordered` on a numeric sensitive attribute (every value a number) and `equal` on
 * any other. `table` needs only the columns' dictionaries.
 */
export function withColumnDefaults(
  spec: ReleaseSpec,
  table: { readonly columns: readonly { readonly name: string; readonly dictionary: readonly string[] }[] },
): ReleaseSpec {
  if (!spec.pending) return spec;
  const pending = spec.pending;
  const privacy = spec.privacy.map((m, i) => {
    const decided: Record<string, string> = {};
    for (const [key, f] of Object.entries(findModel(m.model)?.fields ?? {})) {
      if (f.kind !== 'string' || !f.byColumn || !pending[key]?.includes(i) || !('attribute' in m)) continue;
      const column = table.columns.find((c) => c.name === m.attribute);
      decided[key] = f.byColumn(column !== undefined && allNumbers(column.dictionary));
    }
    return Object.keys(decided).length === 0 ? m : ({ ...m, ...decided } as PrivacyModelSpec);
  });
  const { pending: _, ...rest } = spec;
  return { ...rest, privacy };
}

const LOSS: ObjectSchema = {
  aggregate: str(['geometric', 'arithmetic']),
  gsFactor: num(0, 1),
  weights: { kind: 'object' },
};

function parseLoss(raw: unknown, where: string, attributes: AttributeSpec[]): LossSpec {
  const loss = raw === undefined ? {} : validateObject(raw, LOSS, where, 'method.loss');
  const weights = loss.weights as Record<string, unknown> | undefined;
  if (weights !== undefined) {
    const qis = attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name);
    for (const [name, w] of Object.entries(weights)) {
      if (!qis.includes(name)) {
        const near = nearest(name, qis);
        throw new SpecError(
          'E_SPEC_VALUE',
          `${where}: method.loss.weights names '${name}', not a quasi-identifier${near ? ` (did you mean '${near}'?)` : ''}`,
          `weights are per quasi-identifier: ${qis.join(', ')}`,
        );
      }
      if (typeof w !== 'number' || !Number.isFinite(w) || w <= 0) {
        throw new SpecError(
          'E_SPEC_VALUE',
          `${where}: method.loss.weights.${name} must be a number above 0`,
          'weights are relative (divided by the largest): e.g. 1 for every attribute, 0.5 for one that matters half as much',
        );
      }
    }
  }
  return {
    aggregate: (loss.aggregate as 'geometric' | 'arithmetic' | undefined) ?? 'geometric',
    gsFactor: (loss.gsFactor as number | undefined) ?? 0.5,
    weights: weights && ownRecord(weights as Record<string, number>),
  };
}

/**
 * `method.suppression` and `method.importance` (docs/release-spec.md, "Cell suppression"): set
 * only when given, so that a spec without them parses as before.
 */
function parseCellSuppression(
  m: Record<string, unknown>,
  where: string,
  attributes: AttributeSpec[],
): Pick<GeneralizationMethodSpec, 'suppression' | 'importance'> {
  const importance = m.importance as Record<string, unknown> | undefined;
  if (importance !== undefined) {
    if (m.suppression !== 'cells') {
      throw new SpecError(
        'E_SPEC_CONFLICT',
        `${where}: method.importance applies to cell suppression only`,
        'add "suppression": "cells" to method, or drop method.importance',
      );
    }
    const qis = attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name);
    for (const [name, w] of Object.entries(importance)) {
      if (!qis.includes(name)) {
        const near = nearest(name, qis);
        throw new SpecError(
          'E_SPEC_VALUE',
          `${where}: method.importance names '${name}', not a quasi-identifier${near ? ` (did you mean '${near}'?)` : ''}`,
          `importance is per quasi-identifier: ${qis.join(', ')}`,
        );
      }
      if (typeof w !== 'number' || !Number.isFinite(w) || w < 0) {
        throw new SpecError(
          'E_SPEC_VALUE',
          `${where}: method.importance.${name} must be a number ≥ 0`,
          'a higher importance keeps the attribute longer, e.g. "importance": { "age": 2, "zip": 1 } (a QI not named has 0)',
        );
      }
    }
  }
  return {
    ...(m.suppression === undefined ? {} : { suppression: m.suppression as 'rows' | 'cells' }),
    ...(importance === undefined ? {} : { importance: ownRecord(importance as Record<string, number>) }),
  };
}

function parseMethod(
  name: MethodName,
  m: Record<string, unknown>,
  where: string,
  attributes: AttributeSpec[],
): MethodSpec {
  switch (name) {
    case 'generalization':
      return {
        name,
        maxSuppression: (m.maxSuppression as number | undefined) ?? 0,
        metric: (m.metric as MetricName | undefined) ?? 'ncp',
        loss: parseLoss(m.loss, where, attributes),
        strategy: (m.strategy as 'optimal' | 'k-minimal' | undefined) ?? 'optimal',
        preference: (m.preference as Preference | undefined) ?? 'min-absolute-distance',
        suppressed: (m.suppressed as 'mask' | 'remove' | undefined) ?? 'mask',
        ...(m.timeLimit === undefined ? {} : { timeLimit: m.timeLimit as number }),
        ...(m.nodeBudget === undefined ? {} : { nodeBudget: m.nodeBudget as number }),
        ...parseCellSuppression(m, where, attributes),
      };
    case 'mondrian':
      return {
        name,
        mode: (m.mode as 'strict' | 'relaxed' | undefined) ?? 'strict',
        measures: (m.measures as boolean | undefined) ?? true,
      };
    case 'anatomy':
      return { name };
    case 'slicing': {
      const groups = m.columnGroups as unknown[] | undefined;
      if (groups !== undefined) {
        const known = new Set(attributes.filter((a) => a.type !== 'identifying').map((a) => a.name));
        const ok = groups.every(
          (g) => Array.isArray(g) && g.length > 0 && g.every((x) => typeof x === 'string' && known.has(x)),
        );
        if (!ok) {
          throw new SpecError(
            'E_SPEC_VALUE',
            `${where}: method.columnGroups must be a list of non-empty lists of released attribute names`,
            'e.g. [["age", "sex"], ["education", "occupation"]]',
          );
        }
      }
      if (groups !== undefined && m.columns !== undefined) {
        throw new SpecError(
          'E_SPEC_CONFLICT',
          `${where}: method.columns and method.columnGroups both given`,
          'give one: a number of columns to cluster into, or the groups themselves',
        );
      }
      return {
        name,
        columns: m.columns as number | undefined,
        columnGroups: groups as string[][] | undefined,
        split: (m.split as 'mondrian' | 'random' | undefined) ?? 'mondrian',
      };
    }
    case 'randomization': {
      const retention = m.retention as Record<string, unknown> | undefined;
      if (retention !== undefined) {
        for (const [attr, p] of Object.entries(retention)) {
          if (!attributes.some((a) => a.name === attr) || typeof p !== 'number' || !(p >= 0 && p <= 1)) {
            throw new SpecError(
              'E_SPEC_VALUE',
              `${where}: method.retention.${attr} must name a spec attribute and be a probability in [0, 1]`,
              'e.g. "retention": { "occupation": 0.6 }',
            );
          }
        }
      }
      const discretize = m.discretize as Record<string, unknown> | undefined;
      for (const [attr, d] of Object.entries(discretize ?? {})) {
        const keys = d !== null && typeof d === 'object' ? Object.keys(d) : [];
        const v = keys.length === 1 ? (d as Record<string, unknown>)[keys[0]!] : undefined;
        const ok =
          attributes.some((a) => a.name === attr) &&
          ((keys[0] === 'level' && Number.isInteger(v) && (v as number) >= 0) ||
            (keys[0] === 'bins' && Number.isInteger(v) && (v as number) >= 1));
        if (!ok) {
          throw new SpecError(
            'E_SPEC_VALUE',
            `${where}: method.discretize.${attr} must name a spec attribute and be { "level": n ≥ 0 } or { "bins": n ≥ 1 }`,
            'e.g. "discretize": { "age": { "level": 1 } } or { "age": { "bins": 8 } }',
          );
        }
      }
      return {
        name,
        matrices: m.matrices === undefined ? undefined : ownRecord(m.matrices as Record<string, unknown>),
        discretize:
          discretize && ownRecord(discretize as Record<string, { level: number } | { bins: number }>),
        scenario: (m.scenario as 'rr-s' | 'rr-qi' | 'rr-both' | undefined) ?? 'rr-both',
        form: (m.form as 'retention' | 'uniform' | undefined) ?? 'retention',
        smallDomain: (m.smallDomain as boolean | undefined) ?? false,
        retention: retention && ownRecord(retention as Record<string, number>),
      };
    }
  }
}

/**
 * Resolves a spec path. A relative path must stay inside the spec's folder (or `root`, relative
 * to it): `../` cannot reach files the spec's author did not mean to expose. An absolute path is
 * taken as meant.
 */
type PathGuard = (field: string, path: string) => string;

function pathGuard(where: string, dir: string, root: string | undefined): PathGuard {
  const base = resolve(dir, root ?? '.');
  return (field, path) => {
    const abs = resolve(dir, path);
    if (isAbsolute(path)) return abs;
    const rel = relative(base, abs);
    if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw new SpecError(
        'E_SPEC_PATH',
        `${where}: ${field} '${path}' points outside ${root === undefined ? "the spec's folder" : `root '${root}'`} (${base})`,
        root === undefined
          ? 'put the file in the folder of release.json (or below it), or allow a wider folder explicitly with "root", e.g. "root": ".."'
          : `put the file inside ${base}, or change "root"`,
      );
    }
    return abs;
  };
}

const BUILDER_HINT =
  'use a CSV path or one builder: { "intervals": [5, 10] }, { "mask": "right" }, ' +
  '{ "date": "YYYY-MM-DD" }, { "groups": [{ "Flu": "Respiratory" }] }';

function parseHierarchy(raw: unknown, where: string, field: string, inside: PathGuard): HierarchySpec {
  if (typeof raw === 'string') return { kind: 'file', path: inside(field, raw), written: raw };
  const h = validateObject(
    raw,
    {
      intervals: { kind: 'array' },
      bottom: num(-Number.MAX_VALUE, Number.MAX_VALUE),
      top: num(-Number.MAX_VALUE, Number.MAX_VALUE),
      mask: str(['right', 'left']),
      date: str(),
      levels: { kind: 'array' },
      groups: { kind: 'array' },
    },
    where,
    field,
    'a CSV path or a builder object',
  );
  const builders = (['intervals', 'mask', 'date', 'groups'] as const).filter((b) => h[b] !== undefined);
  if (builders.length !== 1) {
    throw new SpecError(
      'E_SPEC_HIERARCHY',
      `${where}: ${field} must name exactly one builder (found ${builders.length === 0 ? 'none' : builders.join(', ')})`,
      BUILDER_HINT,
    );
  }
  const builder = builders[0]!;
  // Settings that belong to another builder are a mistake, not something to ignore.
  const own: Record<string, readonly string[]> = {
    intervals: ['bottom', 'top'],
    mask: [],
    date: ['levels'],
    groups: [],
  };
  for (const key of ['bottom', 'top', 'levels']) {
    if (h[key] !== undefined && !own[builder]!.includes(key)) {
      throw new SpecError(
        'E_SPEC_HIERARCHY',
        `${where}: ${field}.${key} does not apply to the ${builder} builder`,
        key === 'levels' ? 'levels belongs to { "date": … }' : `${key} belongs to { "intervals": … }`,
      );
    }
  }
  const bad = (setting: string, what: string, example: string): never => {
    throw new SpecError('E_SPEC_HIERARCHY', `${where}: ${field}.${setting} ${what}`, `e.g. ${example}`);
  };
  switch (builder) {
    case 'intervals': {
      const widths = h.intervals as unknown[];
      const ok =
        widths.length > 0 &&
        widths.every(
          (w, i) =>
            typeof w === 'number' && w > 0 && (i === 0 || isDecimalMultiple(w, widths[i - 1] as number)),
        );
      if (!ok) {
        bad(
          'intervals',
          'must be a non-empty list of positive widths, each a multiple of the one before',
          '{ "intervals": [5, 10, 20] } makes [20,25) → [20,30) → [20,40) → *',
        );
      }
      const bottom = h.bottom as number | undefined;
      const top = h.top as number | undefined;
      if (bottom !== undefined && top !== undefined && !(bottom < top)) {
        bad(
          'bottom',
          `(${bottom}) must be below top (${top})`,
          '{ "intervals": [10], "bottom": 18, "top": 90 }',
        );
      }
      return { kind: 'intervals', widths: widths as number[], bottom, top };
    }
    case 'mask':
      return { kind: 'mask', direction: h.mask as 'right' | 'left' };
    case 'date': {
      const format = h.date as string;
      if (!isDateFormat(format)) {
        bad(
          'date',
          `is '${format}': a date format needs YYYY, MM and DD once each, separated by anything but letters`,
          '{ "date": "YYYY-MM-DD" } or { "date": "DD/MM/YYYY" }',
        );
      }
      const levels = (h.levels as unknown[] | undefined) ?? ['month', 'year', 'decade'];
      const order = levels.map((l) => DATE_LEVELS.indexOf(l as DateLevel));
      if (levels.length === 0 || order.some((o, i) => o < 0 || (i > 0 && o <= order[i - 1]!))) {
        bad(
          'levels',
          `must list some of ${DATE_LEVELS.join(', ')}, each once, finest first`,
          '{ "date": "YYYY-MM-DD", "levels": ["month", "year"] }',
        );
      }
      return { kind: 'date', format, levels: levels as DateLevel[] };
    }
    case 'groups': {
      const levels = h.groups as unknown[];
      const ok =
        levels.length > 0 &&
        levels.every(
          (m) =>
            typeof m === 'object' &&
            m !== null &&
            !Array.isArray(m) &&
            Object.keys(m).length > 0 &&
            Object.values(m).every((v) => typeof v === 'string'),
        );
      if (!ok) {
        bad(
          'groups',
          'must be a non-empty list of mappings, one per level, each from the labels below to a label (a string)',
          '{ "groups": [{ "Flu": "Respiratory", "Asthma": "Respiratory", "Fracture": "Injury" }] }',
        );
      }
      return { kind: 'groups', levels: levels as Record<string, string>[] };
    }
  }
}

/** A date format: YYYY, MM and DD once each, with separators that are not letters. */
export function isDateFormat(format: string): boolean {
  const rest = format.replace('YYYY', '').replace('MM', '').replace('DD', '');
  return rest.length === format.length - 8 && !/[A-Za-z]/.test(rest);
}

function parseModel(
  raw: unknown,
  where: string,
  field: string,
  attributes: AttributeSpec[],
  inside: PathGuard,
): PrivacyModelSpec {
  const head = validateObject(
    raw,
    { model: { ...str(modelNames()), required: true } },
    where,
    field,
    undefined,
    true,
  );
  const model = findModel(head.model as string)!;
  const fields = validateObject(raw, { model: str(), ...modelFields(model) }, where, field);
  if (typeof fields.attribute === 'string') {
    const a = attributes.find((x) => x.name === fields.attribute);
    if (a?.type !== 'sensitive') {
      throw new SpecError(
        'E_SPEC_ATTRIBUTE',
        `${where}: ${field}.attribute names '${fields.attribute}', which is not a sensitive attribute of the spec${
          a === undefined ? '' : ` (it is ${a.type})`
        }`,
        `mark it "type": "sensitive" under attributes, or name one of: ${
          attributes
            .filter((x) => x.type === 'sensitive')
            .map((x) => x.name)
            .join(', ') || '(none)'
        }`,
      );
    }
  }
  // Defaults (until the input's values decide, withColumnDefaults), then the checks across fields.
  for (const [key, f] of Object.entries(model.fields)) {
    if (f.kind === 'string' && f.default !== undefined && fields[key] === undefined) fields[key] = f.default;
  }
  model.refine?.(fields, where, field);
  if (typeof fields.population === 'string') {
    fields.population = inside(`${field}.population`, fields.population);
  }
  return fields as unknown as PrivacyModelSpec;
}
