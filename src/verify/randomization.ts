/**
 * Independent verification of a randomized release. Shares no code with the
 * builder (src/methods/randomization/, src/kernels/): it re-reads the staged data.arrow,
 * data.csv and matrices.json, works on strings, and
 * - checks every published matrix (square, non-negative, columns summing to 1, invertible)
 *   and that the scenario randomized what it says;
 * - maps every input row to its categories from the published discretization;
 * - re-derives the keys from the seed and the input's cells and replays the documented
 *   stream (4-lane xoshiro128**, 31-bit thresholds, Fisher–Yates shuffle) from the published
 *   matrices: the release must be exactly that — one released row per input row, every
 *   column not randomized unchanged;
 * - checks the transitions against the matrices statistically (impossible transitions never
 *   occur, no count less likely than 1e-9 over all cells), so the matrices' orientation is right;
 * - recomputes the attribute disclosure risk from the input and the published matrices
 *   (max ≤ τ, and as reported) and, with ρ-privacy, γ and the exact posteriors;
 * - checks that the release is not the input when retention < 1.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { RandomizationClaims } from '../claims/index.ts';
import type { VerificationCheck } from '../contracts/report.ts';
import { readArrow } from '../data/arrow.ts';
import { readCsv } from '../data/csv.ts';
import { type EncodedTable, isMissing } from '../data/table.ts';
import { VerificationError } from '../errors.ts';
import type { ReleaseSpec } from '../release-spec/spec.ts';
import { ownRecord } from '../util/record.ts';
import { verifierHierarchyRows } from './hierarchy.ts';
import { randomizationRequirements } from './requirements.ts';
import { asCsvDecoded } from './staged-csv.ts';

interface Entry {
  categories: string[];
  matrix?: number[][];
  discretization: { kind: string; level?: number; edges?: number[] };
}

interface Published {
  scenario: string;
  rows: number;
  attributeOrder: string[];
  sensitive: string;
  attributes: Record<string, Entry & { matrix: number[][] }>;
  released: Record<string, Entry>;
  smallDomain?: { blocks: { categories: string[] }[] };
}

const SEP = '\u0000';

export interface RandomizationVerifyInput {
  spec: ReleaseSpec;
  input: EncodedTable;
  dataArrow: string;
  dataCsv: string;
  matrices: string;
  /** The risk the method measured (its requirements are read from the spec). */
  claims: Pick<RandomizationClaims, 'maxRisk' | 'meanRisk'>;
}

/** Collects checks; `stopIfFailed` ends verification with every failed check named. */
class Checks {
  readonly list: VerificationCheck[] = [];

  add(name: string, passed: boolean, detail: string): void {
    this.list.push({ name, passed, detail });
  }

  stopIfFailed(): void {
    const failed = this.list.filter((c) => !c.passed);
    if (failed.length === 0) return;
    throw new VerificationError(
      'E_VERIFY',
      `the randomized release failed verification: ${failed.map((c) => `${c.name} (${c.detail})`).join('; ')}`,
      'nothing was published; this is a bug in ppdp — please report it with the spec',
    );
  }
}

type Released = { names: string[]; columns: string[][] };

/**
 * The checks, in order: the files agree with each other and the input's shape, the published
 * matrices, every input row's categories, the release replayed from the input, the seed and
 * the matrices, the transitions, the risk, (ρ1, ρ2)-privacy.
 */
export function verifyRandomization(args: RandomizationVerifyInput): VerificationCheck[] {
  const checks = new Checks();
  const arrow = checkFiles(args, checks);
  const { pub, order, matrices } = checkMatrices(args, checks);
  const original = checkInputCategories(args, pub, order, checks);
  const releasedCode = checkReplay(args, arrow, pub, order, matrices, original, checks);
  checkTransitions(args.input.rowCount, pub, matrices, original, releasedCode, checks);
  checkRisk(args, pub, order, matrices, original, checks);
  checkRhoPrivacy(args, pub, matrices, original, checks);
  checks.stopIfFailed();
  return checks.list;
}

/** The two data files hold the same table: the input's columns (identifying ones dropped), one row per input row. */
function checkFiles({ spec, input, dataArrow, dataCsv }: RandomizationVerifyInput, checks: Checks): Released {
  const add = checks.add.bind(checks);
  const arrow = strings(readArrow(dataArrow));
  const csv = strings(readCsv(dataCsv, { delimiter: input.delimiter }));
  const written = asCsvDecoded(arrow, spec.format.escapeFormulas === true);
  const sameFiles =
    written.names.join(SEP) === csv.names.join(SEP) &&
    written.columns.every(
      (col, j) => col.length === csv.columns[j]!.length && col.every((v, r) => v === csv.columns[j]![r]),
    );
  add(
    'data.arrow equals data.csv',
    sameFiles,
    sameFiles ? `${arrow.names.length} columns` : 'the two files differ',
  );

  const typeOf = new Map(spec.attributes.map((a) => [a.name, a.type]));
  const expectedNames = input.columns.map((c) => c.name).filter((name) => typeOf.get(name) !== 'identifying');
  const namesOk = arrow.names.join(SEP) === expectedNames.join(SEP);
  add(
    'released columns',
    namesOk,
    namesOk ? 'the input columns, identifying ones dropped' : 'columns differ from the input’s',
  );
  const rows = input.rowCount;
  const rowsOk = arrow.columns.every((c) => c.length === rows);
  add(
    'one released row per input row',
    rowsOk,
    `${rows} input rows, ${arrow.columns[0]?.length ?? 0} released`,
  );
  checks.stopIfFailed();
  return arrow;
}

/** matrices.json: the attribute order, each attribute randomized or released, every matrix valid. */
function checkMatrices({ spec, input, matrices: path }: RandomizationVerifyInput, checks: Checks) {
  const add = checks.add.bind(checks);
  const rows = input.rowCount;
  const typeOf = new Map(spec.attributes.map((a) => [a.name, a.type]));
  let pub: Published;
  try {
    pub = JSON.parse(readFileSync(path, 'utf8')) as Published;
    // Keyed by attribute names: one named `constructor` is not Object.prototype's.
    pub.attributes = ownRecord(pub.attributes ?? {});
    pub.released = ownRecord(pub.released ?? {});
  } catch {
    add('matrices.json readable', false, 'not valid JSON');
    checks.stopIfFailed();
    throw new Error('unreachable');
  }
  const qis = spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name);
  // The sensitive attribute the spec's models protect, not the one the file names.
  const { sensitive } = randomizationRequirements(spec);
  const order = [...qis, sensitive];
  const orderOk =
    Array.isArray(pub.attributeOrder) &&
    pub.attributeOrder.join(SEP) === order.join(SEP) &&
    typeOf.get(sensitive) === 'sensitive' &&
    pub.sensitive === sensitive &&
    pub.rows === rows;
  add(
    'matrices.json attribute order',
    orderOk,
    orderOk
      ? order.join(', ')
      : `does not list the QIs then the sensitive attribute the spec protects (${sensitive}; the file names ${JSON.stringify(pub.sensitive)})`,
  );
  if (!orderOk) checks.stopIfFailed();
  const matrices = new Map<string, Float64Array>();
  const problems: string[] = [];
  for (const name of order) {
    const e = pub.attributes[name];
    const r = pub.released[name];
    if ((e === undefined) === (r === undefined)) {
      problems.push(`${name} must be either randomized or released`);
      continue;
    }
    const cats = (e ?? r)!.categories;
    if (!Array.isArray(cats) || cats.length === 0 || new Set(cats).size !== cats.length)
      problems.push(`${name}: categories not a list of distinct labels`);
    if (!e) continue;
    const role = name === pub.sensitive ? 'sensitive' : 'quasi-identifying';
    const scenarioOk = pub.scenario === 'rr-both' || (pub.scenario === 'rr-s') === (role === 'sensitive');
    if (!scenarioOk)
      problems.push(
        `${name} is randomized, but scenario ${pub.scenario} does not randomize ${role} attributes`,
      );
    const problem = matrixProblem(e.matrix, cats.length);
    if (problem) problems.push(`${name}: ${problem}`);
    else matrices.set(name, flat(e.matrix));
  }
  add(
    'every matrix valid',
    problems.length === 0,
    problems.length === 0
      ? `${matrices.size} matrices: square, non-negative, columns sum to 1, invertible`
      : problems.join('; '),
  );
  checks.stopIfFailed();
  return { pub, order, matrices };
}

/** Every input row's categories, from the published discretization. */
function checkInputCategories(
  { spec, input }: RandomizationVerifyInput,
  pub: Published,
  order: string[],
  checks: Checks,
): Map<string, Int32Array> {
  const add = checks.add.bind(checks);
  const original = new Map<string, Int32Array>();
  const unmapped: string[] = [];
  for (const name of order) {
    const entry = (pub.attributes[name] ?? pub.released[name])!;
    const col = input.columns.find((c) => c.name === name)!;
    const index = new Map(entry.categories.map((c, i) => [c, i]));
    const a = spec.attributes.find((x) => x.name === name)!;
    const labelOf = labeler(
      entry,
      col.dictionary,
      a.hierarchy ? () => verifierHierarchyRows(col, a.hierarchy!) : undefined,
    );
    const codeOfValue = col.dictionary.map((v) => {
      const label = labelOf(v);
      return label === undefined ? -1 : (index.get(label) ?? -1);
    });
    const codes = Int32Array.from(col.codes, (c) => codeOfValue[c]!);
    if (codes.some((c) => c < 0)) unmapped.push(name);
    original.set(name, codes);
  }
  add(
    'input rows map to published categories',
    unmapped.length === 0,
    unmapped.length === 0 ? 'every row of every attribute' : `unmapped values in ${unmapped.join(', ')}`,
  );
  checks.stopIfFailed();
  return original;
}

/** The documented stream key: SHA-256("ppdp/stream/v1" ‖ 0x00 ‖ purpose ‖ 0x00 ‖ seed u32 LE ‖ digest)[0..16). */
function streamKeys(spec: ReleaseSpec, input: EncodedTable): (purpose: string) => number[] {
  const digest = documentedTableDigest(input);
  const seedBytes = Buffer.alloc(4);
  seedBytes.writeUInt32LE(spec.seed >>> 0);
  return (purpose: string) => {
    const h = createHash('sha256')
      .update('ppdp/stream/v1')
      .update(Buffer.from([0]))
      .update(purpose, 'utf8')
      .update(Buffer.from([0]))
      .update(seedBytes)
      .update(digest)
      .digest();
    return [0, 1, 2, 3].map((i) => h.readUInt32LE(4 * i));
  };
}

/**
 * The table digest (docs/definitions.md, "Table digest"), recomputed here from its definition,
 * row by row and cell by cell, apart from the code that keyed the release.
 */
export function documentedTableDigest(input: EncodedTable): Buffer {
  const mix = (x: number) => {
    let h = x | 0;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return (h ^ (h >>> 16)) >>> 0;
  };
  const C = [0, 1, 2, 3].map((l) => (0x85ebca6b + l * 0x27d4eb2f) >>> 0);
  const cellHash = (c: number, v: string): number[] => {
    let a = (0x811c9dc5 ^ c) >>> 0;
    let b = (0x01000193 ^ Math.imul(c + 1, 0x9e3779b9)) >>> 0;
    for (let k = 0; k < v.length; k++) {
      const u = v.charCodeAt(k);
      a = Math.imul(a ^ u, 0x01000193) >>> 0;
      b = Math.imul(b ^ u, 0x5bd1e995) >>> 0;
      b = (b ^ (b >>> 15)) >>> 0;
    }
    a = mix(a ^ v.length);
    b = mix(b ^ Math.imul(v.length, 0xcc9e2d51));
    return C.map((cl, l) => mix((a + Math.imul(l + 1, b) + cl) >>> 0));
  };
  const cache = input.columns.map(() => new Map<string, number[]>());
  const sums = [0, 0, 0, 0];
  for (let row = 0; row < input.rowCount; row++) {
    const r = [0, 1, 2, 3].map((l) => mix((0x9e3779b9 + l * 0x632be5ab) >>> 0));
    input.columns.forEach((col, c) => {
      const v = col.dictionary[col.codes[row]!]!;
      let h = cache[c]!.get(v);
      if (!h) cache[c]!.set(v, (h = cellHash(c, v)));
      for (let l = 0; l < 4; l++) r[l] = mix(r[l]! ^ h[l]! ^ (r[(l + 1) % 4]! >>> 7));
    });
    for (let l = 0; l < 4; l++) sums[l] = (sums[l]! + mix(r[l]! ^ C[l]!)) >>> 0;
  }
  const hash = createHash('sha256')
    .update('ppdp/table/v2')
    .update(Buffer.from([0]));
  for (const col of input.columns) hash.update(Buffer.from(`${col.name}\u0000`, 'utf8'));
  const tail = Buffer.alloc(8 + 16);
  tail.writeBigUInt64LE(BigInt(input.rowCount), 0);
  for (const [l, x] of sums.entries()) tail.writeUInt32LE(x, 8 + 4 * l);
  return hash
    .update(Buffer.from([0]))
    .update(tail)
    .digest();
}

/** Replays the documented streams and compares with the release, cell by cell. Returns each attribute's released codes in input order. */
function checkReplay(
  { spec, input }: RandomizationVerifyInput,
  arrow: Released,
  pub: Published,
  order: string[],
  matrices: Map<string, Float64Array>,
  original: Map<string, Int32Array>,
  checks: Checks,
): Map<string, Int32Array> {
  const add = checks.add.bind(checks);
  const rows = input.rowCount;
  const keyOf = streamKeys(spec, input);
  const stream = new Lanes(keyOf('perturb'));
  const releasedCode = new Map<string, Int32Array>();
  for (const name of order) {
    const orig = original.get(name)!;
    const m = matrices.get(name);
    if (!m) {
      releasedCode.set(name, orig);
      continue;
    }
    const d = pub.attributes[name]!.categories.length;
    const out = new Int32Array(rows);
    const block: number[] = [];
    for (let r = 0; r < rows; r++) {
      if (r % 4 === 0) block.splice(0, 4, ...stream.block());
      const x = block[r % 4]! >>> 1;
      const v = orig[r]!;
      let cum = 0;
      let u = 0;
      for (let j = 0; j < d - 1; j++) {
        cum += m[j * d + v]!;
        if (Math.min(2 ** 31, Math.max(0, Math.round(cum * 2 ** 31))) <= x) u++;
      }
      out[r] = u;
    }
    releasedCode.set(name, out);
  }
  const shuffle = new Lanes(keyOf('shuffle'));
  const perm = Array.from({ length: rows }, (_, i) => i);
  for (let i = rows - 1; i > 0; i--) {
    const j = shuffle.below(i + 1);
    [perm[i], perm[j]] = [perm[j]!, perm[i]!];
  }
  let mismatches = 0;
  let firstMismatch = '';
  arrow.names.forEach((name, j) => {
    const col = arrow.columns[j]!;
    const codes = releasedCode.get(name);
    const cats = codes ? (pub.attributes[name] ?? pub.released[name])!.categories : undefined;
    const inCol = input.columns.find((c) => c.name === name)!;
    for (let r = 0; r < rows; r++) {
      const source = perm[r]!;
      const want = codes ? cats![codes[source]!]! : inCol.dictionary[inCol.codes[source]!]!;
      if (col[r] !== want) {
        if (mismatches++ === 0) firstMismatch = `column ${name}, released row ${r + 1}`;
      }
    }
  });
  add(
    'release reproduced from the input, the seed and matrices.json',
    mismatches === 0,
    mismatches === 0
      ? `${rows} rows × ${arrow.names.length} columns, each released row from exactly one input row`
      : `${mismatches} cells differ (first: ${firstMismatch})`,
  );

  return releasedCode;
}

/** Transitions against the matrices: none impossible, every count plausible; something changed. */
function checkTransitions(
  rows: number,
  pub: Published,
  matrices: Map<string, Float64Array>,
  original: Map<string, Int32Array>,
  releasedCode: Map<string, Int32Array>,
  checks: Checks,
): void {
  const add = checks.add.bind(checks);
  const transitionProblems: string[] = [];
  let expectedChanges = 0;
  let changed = 0;
  for (const [name, m] of matrices) {
    const d = pub.attributes[name]!.categories.length;
    const orig = original.get(name)!;
    const rel = releasedCode.get(name)!;
    const counts = new Float64Array(d * d);
    const perOriginal = new Float64Array(d);
    for (let r = 0; r < rows; r++) {
      counts[rel[r]! * d + orig[r]!]!++;
      perOriginal[orig[r]!]!++;
      expectedChanges += 1 - m[orig[r]! * d + orig[r]!]!;
      if (rel[r] !== orig[r]) changed++;
    }
    // A cell is flagged when its count is less likely than 1e-9 over all d² cells together: a
    // fixed number of standard deviations flags cells of tiny expected counts by chance once
    // there are many (2 rows where 0.004 were expected, among a million cells).
    const surprise = Math.log(d * d * 1e9);
    for (let v = 0; v < d; v++) {
      for (let u = 0; u < d; u++) {
        const p = m[u * d + v]!;
        const c = counts[u * d + v]!;
        const n = perOriginal[v]!;
        const mean = n * p;
        if ((p === 0 && c > 0) || binomialSurprise(c, n, p) > surprise) {
          transitionProblems.push(
            `${name}: ${c} of ${perOriginal[v]} rows from category ${v + 1} released as ${u + 1}, expected ${mean.toFixed(1)}`,
          );
        }
      }
    }
  }
  add(
    'transitions follow the matrices',
    transitionProblems.length === 0,
    transitionProblems.length === 0
      ? 'no impossible transition; every count plausible (each below one chance in 10⁹ over all cells)'
      : transitionProblems.slice(0, 3).join('; '),
  );
  const sanityOk = expectedChanges < 20 || changed > 0;
  add(
    'release differs from the input',
    sanityOk,
    `${changed} randomized cells changed (${expectedChanges.toFixed(1)} expected)`,
  );
}

/**
 * −ln of the Chernoff bound on the chance that Binomial(n, p) lands as far from its mean as c:
 * n·KL(c/n ‖ p), 0 when c is the mean. The bound is above the true tail, so a count is flagged
 * only when it is rarer still.
 */
function binomialSurprise(c: number, n: number, p: number): number {
  if (n === 0) return 0;
  const a = c / n;
  const term = (x: number, y: number) =>
    x === 0 ? 0 : y === 0 ? Number.POSITIVE_INFINITY : x * Math.log(x / y);
  return n * (term(a, p) + term(1 - a, 1 - p));
}

/** Attribute disclosure risk, recomputed from the input and the published matrices. */
function checkRisk(
  { spec, claims }: RandomizationVerifyInput,
  pub: Published,
  order: string[],
  matrices: Map<string, Float64Array>,
  original: Map<string, Int32Array>,
  checks: Checks,
): void {
  const add = checks.add.bind(checks);
  const risk = recomputeRisk(order, original, matrices, pub);
  const { tau } = randomizationRequirements(spec);
  if (risk) {
    const tol = 1e-9 * Math.max(1, claims.maxRisk);
    const agrees = Math.abs(risk.max - claims.maxRisk) <= tol && Math.abs(risk.mean - claims.meanRisk) <= tol;
    add(
      'risk as reported',
      agrees,
      `max ${risk.max.toPrecision(8)}, mean ${risk.mean.toPrecision(8)} recomputed`,
    );
    if (tau !== null) {
      add('max risk ≤ τ', risk.max <= tau * (1 + 1e-12), `max risk ${risk.max.toPrecision(8)} ≤ τ = ${tau}`);
    }
  } else {
    add('risk as reported', tau === null, 'the QI table is too large to recompute the risk densely');
  }
}

/** (ρ1, ρ2)-privacy of the sensitive attribute: γ or the sub-domains, and the exact posteriors. */
function checkRhoPrivacy(
  { spec, input }: RandomizationVerifyInput,
  pub: Published,
  matrices: Map<string, Float64Array>,
  original: Map<string, Int32Array>,
  checks: Checks,
): void {
  const add = checks.add.bind(checks);
  const rows = input.rowCount;
  const { rho, gamma } = randomizationRequirements(spec);
  if (rho && gamma !== null) {
    const { rho1, rho2 } = rho;
    const m = matrices.get(pub.sensitive);
    const d = (pub.attributes[pub.sensitive] ?? pub.released[pub.sensitive])!.categories.length;
    const identity = new Float64Array(d * d);
    for (let i = 0; i < d; i++) identity[i * d + i] = 1;
    const matrix = m ?? identity;
    if (!pub.smallDomain) {
      const g = amplification(matrix, d);
      add(
        'γ-amplification',
        g <= gamma * (1 + 1e-9),
        `γ = ${g.toPrecision(6)}, allowed ${gamma.toPrecision(6)}`,
      );
    } else {
      const blocksOk = blocksMatch(matrix, d, pub);
      add(
        'sub-domains match the matrix',
        blocksOk,
        blocksOk
          ? `${pub.smallDomain.blocks.length} sub-domains`
          : 'the matrix moves values across sub-domains',
      );
    }
    const prior = new Float64Array(d);
    for (const c of original.get(pub.sensitive)!) prior[c]! += 1 / rows;
    const exact = exactPosteriors(matrix, d, prior, rho1, rho2);
    add(
      'posteriors within (ρ1, ρ2)',
      exact.ok,
      exact.checked
        ? `worst posterior of a property with prior ≤ ${rho1}: ${exact.up.toPrecision(6)} (≤ ${rho2}); with prior ≤ ${(1 - rho2).toPrecision(6)}: ${exact.down.toPrecision(6)} (≤ ${(1 - rho1).toPrecision(6)})`
        : 'too many values to enumerate properties; covered by the γ check',
    );
  }
}

function strings(t: EncodedTable): { names: string[]; columns: string[][] } {
  return {
    names: t.columns.map((c) => c.name),
    columns: t.columns.map((c) => Array.from(c.codes, (x) => c.dictionary[x]!)),
  };
}

function flat(rows: number[][]): Float64Array {
  const d = rows.length;
  const out = new Float64Array(d * d);
  for (let u = 0; u < d; u++) for (let v = 0; v < d; v++) out[u * d + v] = rows[u]![v]!;
  return out;
}

function matrixProblem(rows: unknown, d: number): string | undefined {
  if (!Array.isArray(rows) || rows.length !== d) return `not ${d} rows`;
  for (const row of rows) {
    if (!Array.isArray(row) || row.length !== d) return 'not square';
    for (const x of row)
      if (typeof x !== 'number' || !Number.isFinite(x) || x < 0)
        return 'an entry is negative or not a number';
  }
  const m = flat(rows as number[][]);
  for (let v = 0; v < d; v++) {
    let s = 0;
    for (let u = 0; u < d; u++) s += m[u * d + v]!;
    if (Math.abs(s - 1) > 1e-9) return `column ${v + 1} sums to ${s}`;
  }
  // Invertible: LU with partial pivoting, no pivot below 1e-12.
  const a = Array.from({ length: d }, (_, u) => Array.from({ length: d }, (_, v) => m[u * d + v]!));
  for (let c = 0; c < d; c++) {
    let p = c;
    for (let r = c + 1; r < d; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r;
    if (Math.abs(a[p]![c]!) < 1e-12) return 'singular';
    [a[c], a[p]] = [a[p]!, a[c]!];
    for (let r = c + 1; r < d; r++) {
      const f = a[r]![c]! / a[c]![c]!;
      for (let k = c; k < d; k++) a[r]![k]! -= f * a[c]![k]!;
    }
  }
  return undefined;
}

/** Input value → published category label, per the published discretization. */
function labeler(
  entry: Entry,
  dictionary: string[],
  rowsOfHierarchy: (() => string[][]) | undefined,
): (v: string) => string | undefined {
  const disc = entry.discretization;
  if (disc.kind === 'values') return (v) => v;
  if (disc.kind === 'level' && rowsOfHierarchy) {
    const map = new Map(rowsOfHierarchy().map((r) => [r[0]!, r[disc.level!]]));
    return (v) => map.get(v);
  }
  if (disc.kind === 'bins') {
    // Parse each published label "[lo,hi)" / "[lo,hi]" and find the interval holding the value.
    const intervals = entry.categories.map((label) => {
      const m = /^\[([^,]+),([^\])]+)([)\]])$/.exec(label);
      return m ? { label, lo: Number(m[1]), hi: Number(m[2]), closed: m[3] === ']' } : undefined;
    });
    return (v) => {
      if (isMissing(v)) return entry.categories.includes('') ? '' : undefined; // its own category
      const x = Number(v);
      const hit = intervals.find((i) => i && x >= i.lo && (x < i.hi || (i.closed && x <= i.hi)));
      return hit?.label;
    };
  }
  void dictionary;
  return () => undefined;
}

/** The documented 4-lane xoshiro128** stream. */
class Lanes {
  private readonly s: number[][] = [];
  // state words per lane: s[l] = [s0, s1, s2, s3]
  private pending: number[] = [];
  constructor(key: number[]) {
    for (let l = 0; l < 4; l++) this.s.push(new Array<number>(4).fill(0));
    for (let w = 0; w < 4; w++) {
      let x = key[w]! >>> 0;
      for (let l = 0; l < 4; l++) {
        x = (x + 0x9e3779b9) >>> 0;
        let z = x;
        z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
        z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
        this.s[l]![w] = (z ^ (z >>> 16)) >>> 0;
      }
    }
    for (const lane of this.s) if (!lane.some((x) => x !== 0)) lane[0] = 0x9e3779b9;
  }
  block(): number[] {
    return this.s.map((st) => {
      const rotl = (x: number, k: number) => ((x << k) | (x >>> (32 - k))) >>> 0;
      const out = Math.imul(rotl(Math.imul(st[1]!, 5) >>> 0, 7), 9) >>> 0;
      const t = (st[1]! << 9) >>> 0;
      st[2] = (st[2]! ^ st[0]!) >>> 0;
      st[3] = (st[3]! ^ st[1]!) >>> 0;
      st[1] = (st[1]! ^ st[2]!) >>> 0;
      st[0] = (st[0]! ^ st[3]!) >>> 0;
      st[2] = (st[2]! ^ t) >>> 0;
      st[3] = rotl(st[3]!, 11);
      return out;
    });
  }
  next(): number {
    if (this.pending.length === 0) this.pending = this.block();
    return this.pending.shift()!;
  }
  below(n: number): number {
    const limit = 2 ** 32 - (2 ** 32 % n);
    for (;;) {
      const x = this.next();
      if (x < limit) return x % n;
    }
  }
}

const MAX_VERIFY_QI_CELLS = 2 ** 22;

/** risk(α,u) = (n_{α,u}/n_α)·r_QI(α)·r_S(u|α), written out with plain dense loops. */
function recomputeRisk(
  order: string[],
  original: Map<string, Int32Array>,
  matrices: Map<string, Float64Array>,
  pub: Published,
): { max: number; mean: number } | undefined {
  const qiNames = order.slice(0, -1);
  const saName = order[order.length - 1]!;
  const dims = qiNames.map((n) => (pub.attributes[n] ?? pub.released[n])!.categories.length);
  const dS = (pub.attributes[saName] ?? pub.released[saName])!.categories.length;
  const rows = original.get(saName)!.length;
  const cells = dims.reduce((a, b) => a * b, 1);
  const qiRandomized = qiNames.some((n) => matrices.has(n));
  const alphaOf = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let a = 0;
    qiNames.forEach((n, i) => {
      a = a * dims[i]! + original.get(n)![r]!;
    });
    alphaOf[r] = a;
  }
  // group rows by α: SA counts per α
  const groups = new Map<number, Float64Array>();
  const sa = original.get(saName)!;
  for (let r = 0; r < rows; r++) {
    let g = groups.get(alphaOf[r]!);
    if (!g) groups.set(alphaOf[r]!, (g = new Float64Array(dS)));
    g[sa[r]!]!++;
  }
  const rQI = new Map<number, number>();
  if (qiRandomized) {
    if (cells > MAX_VERIFY_QI_CELLS) return undefined;
    const pi = new Float64Array(cells);
    for (const [a, g] of groups) pi[a] = g.reduce((s, x) => s + x, 0) / rows;
    const modeApply = (
      x: Float64Array,
      pick: (i: number) => ((u: number, v: number) => number) | undefined,
    ) => {
      let cur = x;
      let stride = cells;
      for (let i = 0; i < dims.length; i++) {
        const d = dims[i]!;
        stride /= d;
        const f = pick(i);
        if (!f) continue;
        const next = new Float64Array(cells);
        for (let idx = 0; idx < cells; idx++) {
          const u = Math.floor(idx / stride) % d;
          const base = idx - u * stride;
          let s = 0;
          for (let v = 0; v < d; v++) s += f(u, v) * cur[base + v * stride]!;
          next[idx] = s;
        }
        cur = next;
      }
      return cur;
    };
    const lambda = modeApply(pi, (i) => {
      const m = matrices.get(qiNames[i]!);
      const d = dims[i]!;
      return m ? (u, v) => m[u * d + v]! : undefined;
    });
    const inv = lambda.map((x) => (x > 0 ? 1 / x : 0));
    const w = modeApply(inv, (i) => {
      const m = matrices.get(qiNames[i]!);
      const d = dims[i]!;
      return m ? (u, v) => m[v * d + u]! ** 2 : undefined;
    });
    for (const a of groups.keys()) rQI.set(a, pi[a]! * w[a]!);
  }
  const mS = matrices.get(saName);
  let max = 0;
  let total = 0;
  for (const [a, g] of groups) {
    const nA = g.reduce((s, x) => s + x, 0);
    const rq = qiRandomized ? rQI.get(a)! : 1;
    let lambdaS: Float64Array | undefined;
    if (mS) {
      // Over the group's own values only: a group of a few rows among a thousand values
      // would otherwise cost dS² each.
      const present: number[] = [];
      for (let u = 0; u < dS; u++) if (g[u]! > 0) present.push(u);
      lambdaS = new Float64Array(dS);
      for (let nu = 0; nu < dS; nu++)
        for (const u of present) lambdaS[nu]! += mS[nu * dS + u]! * (g[u]! / nA);
    }
    for (let u = 0; u < dS; u++) {
      if (g[u] === 0) continue;
      const share = g[u]! / nA;
      let rs = 1;
      if (mS) {
        rs = 0;
        for (let nu = 0; nu < dS; nu++) {
          const p = mS[nu * dS + u]!;
          if (p > 0) rs += (p * p) / lambdaS![nu]!;
        }
        rs *= share;
      }
      const risk = share * rq * rs;
      max = Math.max(max, risk);
      total += risk * g[u]!;
    }
  }
  return { max, mean: total / rows };
}

function amplification(m: Float64Array, d: number): number {
  let g = 1;
  for (let u = 0; u < d; u++) {
    const row = Array.from(m.subarray(u * d, u * d + d));
    const hi = Math.max(...row);
    const lo = Math.min(...row);
    if (hi === 0) continue;
    g = Math.max(g, lo === 0 ? Number.POSITIVE_INFINITY : hi / lo);
  }
  return g;
}

function blocksMatch(m: Float64Array, d: number, pub: Published): boolean {
  const cats = (pub.attributes[pub.sensitive] ?? pub.released[pub.sensitive])!.categories;
  const blockOf = new Map<string, number>();
  pub.smallDomain!.blocks.forEach((b, i) => {
    for (const c of b.categories) blockOf.set(c, i);
  });
  if (blockOf.size !== d || !cats.every((c) => blockOf.has(c))) return false;
  for (let u = 0; u < d; u++) {
    for (let v = 0; v < d; v++) {
      if (m[u * d + v]! > 0 && blockOf.get(cats[u]!) !== blockOf.get(cats[v]!)) return false;
    }
  }
  return true;
}

const MAX_ENUMERATED = 20;

/** Worst posteriors over every property, by enumerating the subsets of each released value's support. */
function exactPosteriors(
  m: Float64Array,
  d: number,
  prior: Float64Array,
  rho1: number,
  rho2: number,
): { ok: boolean; checked: boolean; up: number; down: number } {
  let up = 0;
  let down = 0;
  for (let y = 0; y < d; y++) {
    let lambda = 0;
    for (let x = 0; x < d; x++) lambda += m[y * d + x]! * prior[x]!;
    if (lambda <= 0) continue;
    const support: { post: number; prior: number }[] = [];
    for (let x = 0; x < d; x++) {
      const post = (m[y * d + x]! * prior[x]!) / lambda;
      if (post > 0) support.push({ post, prior: prior[x]! });
    }
    if (support.length > MAX_ENUMERATED) return { ok: true, checked: false, up, down };
    for (let mask = 1; mask < 1 << support.length; mask++) {
      let post = 0;
      let pri = 0;
      for (let i = 0; i < support.length; i++) {
        if (mask & (1 << i)) {
          post += support[i]!.post;
          pri += support[i]!.prior;
        }
      }
      if (pri <= rho1 + 1e-15) up = Math.max(up, post);
      if (pri <= 1 - rho2 + 1e-15) down = Math.max(down, post);
    }
  }
  return { ok: up <= rho2 + 1e-12 && down <= 1 - rho1 + 1e-12, checked: true, up, down };
}
