/**
 * The release audit behind the amber verdict (docs/release-spec.md, "The verdict"): what a
 * verified release may still give away beyond its models, measured on the staged release and
 * the spec alone (never on what the method says about itself):
 * - the release keeps (almost) nothing: a single class it made (mean NCP above 0), or a mean
 *   NCP ≥ KEEPS_NOTHING_NCP;
 * - a column released unchanged makes rows unique together with the quasi-identifiers as
 *   released (more than UNIQUE_ROWS_ALLOWED rows); for randomization, together with the
 *   quasi-identifiers it releases exactly (`classColumns`);
 * - a sensitive attribute no model names has a class where one value's share is ≥ REVEAL_SHARE;
 * - a column randomization was to perturb is released unperturbed (its matrix in matrices.json,
 *   as staged, is the identity, or it has none: `withUnperturbed`).
 * The rows generalization suppressed and masked (`*` in every quasi-identifier) are no class, as
 * in the privacy figures: the classes are measured without them, and they are measured as one
 * group of their own, named as the suppressed rows.
 * Deterministic: a pure function of the spec, the input and the staged table.
 */

import { findModel } from '../catalogue/catalogue.ts';
import { K_ANONYMITY } from '../catalogue/k-anonymity.ts';
import type { Caution, ReleaseAudit, ReleaseReport, VerdictLevel } from '../contracts/report.ts';
import type { EncodedTable } from '../data/table.ts';
import { utf8Buffers } from '../data/utf8.ts';
import { labelLoss } from '../metrics/label-loss.ts';
import { isReleasedType, type ReleaseSpec } from '../release-spec/spec.ts';
import { byCodeUnits, counted, printable } from '../util/format.ts';
import { gather, gatherPairs } from '../util/gather.ts';
import { Int32s, rowNumbers } from '../util/int32s.ts';
import { mix32, partitionOfLane } from '../util/keys.ts';
import { bytesHashes } from '../verify/fingerprint.ts';
import { verifierHierarchyRows } from '../verify/hierarchy.ts';
import { attributeOf } from '../verify/models.ts';
import { fmtInt, fmtNum, fmtPct } from './format.ts';
import { methodLimits } from './limits.ts';

/** Mean NCP over the quasi-identifier cells at or above which the release keeps almost nothing. */
export const KEEPS_NOTHING_NCP = 0.9;
/** Rows unique on (quasi-identifiers, an unchanged column) a release may have without amber. */
export const UNIQUE_ROWS_ALLOWED = 0;
/** A class where one value of an unbounded sensitive attribute has this share reveals it. */
export const REVEAL_SHARE = 0.9;

const THRESHOLDS = {
  keepsNothingNcp: KEEPS_NOTHING_NCP,
  uniqueRowsAllowed: UNIQUE_ROWS_ALLOWED,
  revealShare: REVEAL_SHARE,
};

/** Methods whose released rows carry the quasi-identifiers next to the other columns, row by row. */
const ROW_METHODS = new Set(['generalization', 'mondrian', 'randomization']);
/**
 * Of those, the methods whose classes are generalized quasi-identifiers: models bound them, NCP
 * measures them, and `ppdp evaluate` measures their releases.
 */
export const CLASS_METHODS: ReadonlySet<string> = new Set(['generalization', 'mondrian']);

/**
 * The released columns whose values form a row's class: the quasi-identifiers as released. For
 * randomization only those it releases exactly (scenario rr-s): a randomized value is the true
 * one only with its retention probability and singles no one out for certain. The audit then
 * counts the rows that values published exactly single out (an exact timestamp, say), which
 * the disclosure risk, computed per group of quasi-identifiers, does not see; linkage through
 * the randomized values is what the risk bounds.
 */
export function classColumns(spec: ReleaseSpec): string[] {
  const m = spec.method;
  if (m.name === 'randomization' && m.scenario !== 'rr-s') return [];
  return spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name);
}

/** What rows are unique with, in a caution: the class, or (`together`: columns) nothing else. */
function uniqueWith(spec: ReleaseSpec, together: boolean): string {
  if (classColumns(spec).length > 0)
    return together ? 'with the quasi-identifiers' : 'together with the quasi-identifiers';
  const m = spec.method;
  return `${together ? 'on their own' : 'on its own'}${m.name === 'randomization' ? ` (scenario ${m.scenario} randomizes the quasi-identifiers)` : ''}`;
}

/**
 * The columns a method releases with the input's values: the insensitive ones, and the sensitive
 * ones next to generalized QIs; Anatomy and Slicing publish every value exactly (in buckets or
 * permuted within them); randomization keeps what its scenario does not randomize.
 */
export function unchangedColumns(spec: ReleaseSpec): string[] {
  const m = spec.method;
  const exact = (type: string): boolean => {
    if (type === 'insensitive') return true;
    if (m.name === 'anatomy' || m.name === 'slicing') return true;
    if (m.name === 'randomization')
      return (
        (m.scenario === 'rr-s' && type === 'quasi-identifying') ||
        (m.scenario === 'rr-qi' && type === 'sensitive')
      );
    return type === 'sensitive';
  };
  return spec.attributes.filter((a) => isReleasedType(a.type) && exact(a.type)).map((a) => a.name);
}

/**
 * A release not measured row by row (in parts, or by a method that does not release rows with
 * their quasi-identifiers): its unchanged columns named, and amber when a release in parts has some.
 */
export function unmeasuredAudit(spec: ReleaseSpec, why: 'parts' | 'method'): ReleaseAudit {
  const unchanged = unchangedColumns(spec);
  return {
    unchanged,
    measured: false,
    thresholds: THRESHOLDS,
    cautions: [
      ...identityCautions(spec),
      ...(why === 'parts' && unchanged.length > 0
        ? [
            {
              cause: 'not-audited',
              message: `not audited: a release of more than ${AUDIT_MAX_ROWS} rows in parts is not measured for rows the unchanged columns (${unchanged.join(', ')}) make unique`,
            } satisfies Caution,
          ]
        : []),
    ],
  };
}

/** Releases up to this many rows are tallied at once; past it, in partitions of about this many rows. */
export const AUDIT_MAX_ROWS = 1_000_000;

/**
 * The audit of a release from its staged table: `released` as read from data.arrow, or from
 * each part's Arrow file in order. `input` needs the columns' values (its dictionaries), not
 * its rows; `inputRows` counts them.
 */
export function auditRelease(
  spec: ReleaseSpec,
  input: Pick<EncodedTable, 'columns'>,
  inputRows: number,
  released: EncodedTable | readonly EncodedTable[],
): ReleaseAudit {
  if (!ROW_METHODS.has(spec.method.name)) return unmeasuredAudit(spec, 'method');
  const auditor = new PartsAuditor(spec, 0, distinctColumns(input, inputRows));
  for (const part of Array.isArray(released) ? released : [released as EncodedTable]) auditor.add(part);
  return auditor.finish(input, inputRows, 1);
}

/**
 * The same audit of a release in parts too large to tally at once: each part read once
 * (`readPart`) and kept as its rows' compact keys, then measured partition by partition (the
 * classes whose number hashes to the partition: a class never spans two) and the partitions'
 * tallies added up. The figures are the ones `auditRelease` gives over all parts.
 */
export function auditReleaseInPartitions(
  spec: ReleaseSpec,
  input: Pick<EncodedTable, 'columns'>,
  inputRows: number,
  parts: number,
  /** A part's rows; undefined for a part without rows (every row of it suppressed and removed). */
  readPart: (part: number) => EncodedTable | undefined,
  partitions: number,
  /** The rows of all parts, when known (sizes the keys' arrays once). */
  rows = 0,
): ReleaseAudit {
  const audit = partsAudit(spec, input, inputRows, rows);
  for (let i = 0; audit.readsParts && i < parts; i++) {
    const part = readPart(i);
    if (part) audit.add(part);
  }
  return audit.finish(partitions);
}

/** auditReleaseInPartitions fed one part at a time, for parts that are read asynchronously. */
export interface PartsAudit {
  /** Whether the audit reads the parts' rows (a method it measures row by row). */
  readonly readsParts: boolean;
  /**
   * Columns a part need not hold (a reader may leave them out, EncodedTable.omitted): those of
   * all distinct values, each released row's value its own, measured without being read.
   */
  readonly unread: ReadonlySet<string>;
  add(part: EncodedTable): void;
  /** The audit of the parts added, measured in `partitions` partitions of whole classes. */
  finish(partitions: number): ReleaseAudit;
}

export function partsAudit(
  spec: ReleaseSpec,
  input: Pick<EncodedTable, 'columns'>,
  inputRows: number,
  /** The rows of all parts, when known (sizes the keys' arrays once). */
  rows = 0,
): PartsAudit {
  if (!ROW_METHODS.has(spec.method.name)) {
    const unmeasured = unmeasuredAudit(spec, 'method');
    return { readsParts: false, unread: new Set(), add: () => {}, finish: () => unmeasured };
  }
  const distinct = distinctColumns(input, inputRows);
  const auditor = new PartsAuditor(spec, rows, distinct);
  return {
    readsParts: true,
    unread: distinct,
    add: (part) => auditor.add(part),
    finish: (partitions) => auditor.finish(input, inputRows, partitions),
  };
}

/**
 * The input's columns of all distinct values: those whose counted distinct values (a column
 * passed through as bytes, counted by a hash of each value, which can only undercount) are its
 * rows. Every method the audit measures releases each row at most once, values unchanged, so
 * their released values are all distinct too.
 */
function distinctColumns(input: Pick<EncodedTable, 'columns'>, inputRows: number): Set<string> {
  return new Set(input.columns.filter((c) => inputRows > 0 && c.distinct === inputRows).map((c) => c.name));
}

/**
 * The columns the audit reads from a staged Arrow file as bytes (readArrow's `raw`): those that
 * pass through unchanged (insensitive), often a distinct value a row (a note, a timestamp).
 */
export function auditRawColumns(spec: ReleaseSpec): Set<string> {
  return new Set(spec.attributes.filter((a) => a.type === 'insensitive').map((a) => a.name));
}

/** What generalization releases in every quasi-identifier of a suppressed row it masks. */
const SUPPRESSED = '*';

/** The two lanes' seeds of a class's hash. */
const CLASS_SEEDS = [0x811c9dc5, 0x2545f491] as const;

/** One round of a 32-bit hash of integers. */
function mix(h: number, x: number): number {
  let k = Math.imul(x, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  h = Math.imul(h ^ Math.imul(k, 0x1b873593), 0x01000193);
  return h ^ (h >>> 13);
}

/**
 * An unchanged column across parts: `dictionary`, each row's value id (its values interned by
 * their text, once per part's dictionary entry); `raw`, two lanes of a 64-bit hash of the row's
 * bytes (a column read as bytes: no string a value). Equal hashes are taken for equal values.
 * `distinct`: a column whose input values are all distinct (its counted distinct values are
 * the input's rows), so each released row's value is its own: nothing kept, nothing hashed.
 */
type AuditColumn =
  | { name: string; kind: 'dictionary'; index: Map<string, number>; ids: Int32s }
  | { name: string; kind: 'raw'; hashes: Int32s }
  | { name: string; kind: 'distinct' };

/**
 * The audit over parts added one at a time: per row only its class (the QI labels' tuple, named
 * across parts) and each unchanged column's value id or hash are kept, so each part is read
 * once; `finish` measures the rows partition by partition.
 */
class PartsAuditor {
  /** Per quasi-identifier: its labels' ids (across parts), the labels, and rows per label id. */
  private qis: { name: string; index: Map<string, number>; labels: string[]; rows: number[] }[] = [];
  private columns: AuditColumn[] = [];
  /**
   * Per row, two lanes of a 64-bit hash of its class (its labels' ids): a class is named alike
   * in every part without a table of every class (millions of them cost a cache miss each);
   * `finish` numbers them partition by partition. Equal hashes are taken for the same class.
   */
  private readonly classHashes = new Int32s();
  private rows = 0;
  private names: string[] | undefined;

  constructor(
    private readonly spec: ReleaseSpec,
    /** The rows the parts hold, when known: the keys' arrays are sized once. */
    rows = 0,
    /** Columns whose input values are all distinct (distinctColumns). */
    private readonly distinct: ReadonlySet<string> = new Set(),
  ) {
    this.classHashes.reserve(2 * rows);
    this.expected = rows;
  }

  private readonly expected: number;

  add(part: EncodedTable): void {
    const spec = this.spec;
    const at = (name: string) => part.columns.findIndex((c) => c.name === name);
    if (!this.names) {
      this.names = part.columns.map((c) => c.name);
      const classes = classColumns(spec);
      this.qis = classes
        .filter((name) => at(name) >= 0)
        .map((name) => ({ name, index: new Map(), labels: [], rows: [] }));
      // A column of all distinct values the reader left out is measured all the same.
      const left = new Set(part.omitted ?? []);
      // A quasi-identifier released unchanged (randomization's rr-s) is part of the class.
      this.columns = unchangedColumns(spec)
        .filter((name) => !classes.includes(name))
        .filter((name) => at(name) >= 0 || (left.has(name) && this.distinct.has(name)))
        .map((name): AuditColumn => {
          if (this.distinct.has(name)) return { name, kind: 'distinct' };
          return part.columns[at(name)]!.raw
            ? { name, kind: 'raw', hashes: Int32s.sized(2 * this.expected) }
            : { name, kind: 'dictionary', index: new Map(), ids: Int32s.sized(this.expected) };
        });
    } else if (
      part.columns.length !== this.names.length ||
      part.columns.some((c, i) => c.name !== this.names![i])
    )
      throw new RangeError('the parts of a release must have the same columns');
    const n = part.rowCount;
    // Each row's class: its labels' ids (interned once per dictionary entry, named as every
    // other part names them) hashed in QI order; and the rows per label.
    const qiColumns = this.qis.map((q) => part.columns[at(q.name)]!);
    const remaps = qiColumns.map((column, q) =>
      internAll(column.dictionary, this.qis[q]!.index, this.qis[q]!.labels),
    );
    this.classHashes.reserve(2 * n);
    classHashesInto(
      this.classHashes.data,
      this.classHashes.length,
      qiColumns.map((c) => c.codes),
      remaps,
      n,
    );
    this.classHashes.length += 2 * n;
    qiColumns.forEach((column, q) => {
      const perCode = new Float64Array(remaps[q]!.length);
      for (let r = 0; r < n; r++) perCode[column.codes[r]!]!++;
      const rowsOf = this.qis[q]!.rows;
      remaps[q]!.forEach((id, code) => {
        if (perCode[code]! > 0) rowsOf[id] = (rowsOf[id] ?? 0) + perCode[code]!;
      });
    });
    for (const col of this.columns) {
      const column = part.columns[at(col.name)]!;
      if (col.kind === 'distinct') continue;
      if (col.kind === 'dictionary') {
        if (column.raw) throw new RangeError(`column ${col.name} is read as bytes in one part only`);
        const remap = internAll(column.dictionary, col.index);
        col.ids.reserve(n);
        mapInto(col.ids.data, col.ids.length, remap, column.codes);
        col.ids.length += n;
      } else {
        col.hashes.reserve(2 * n);
        const into = col.hashes.data;
        const base = col.hashes.length;
        if (column.raw) into.set(bytesHashes(0, column.raw), base);
        else {
          // A part read without `raw`: its entries hashed from their bytes, as raw rows are.
          const entries = bytesHashes(0, utf8Buffers(column.dictionary));
          for (let r = 0; r < n; r++) {
            const code = column.codes[r]!;
            into[base + 2 * r] = entries[2 * code]!;
            into[base + 2 * r + 1] = entries[2 * code + 1]!;
          }
        }
        col.hashes.length += 2 * n;
      }
    }
    this.rows += n;
  }

  /** The audit of the rows added, measured in `partitions` partitions of whole classes. */
  finish(input: Pick<EncodedTable, 'columns'>, inputRows: number, partitions: number): ReleaseAudit {
    const rows = this.rows;
    // The suppressed rows are no class (as the privacy figures count them): measured apart.
    const masked = this.maskedRows();
    const { starts, order } = rowsByPartition(this.classHashes.data, rows, partitions, masked?.flags);
    const tallies: Omit<Tally, 'labels'>[] = [];
    for (let p = 0; p < partitions; p++) {
      // One partition at a time: the whole release's rows need only their keys at once.
      const these = order.subarray(starts[p]!, starts[p + 1]!);
      // The partition's rows numbered 0 … m − 1 (read only, by every use below), and its
      // classes' hashes side by side: each later pass over them reads in turn.
      const positions = rowNumbers(these.length);
      const classes = hashIds(gatherPairs(this.classHashes.data, these), positions);
      tallies.push(
        tallyClasses(this.spec, classes.codes, classes.width, this.auditedColumns(these, positions)),
      );
    }
    // Rows per label of each QI, labels no row holds left out.
    const labels = new Map(
      this.qis.map((q) => {
        const counts = new Map<string, number>();
        q.labels.forEach((label, id) => {
          if ((q.rows[id] ?? 0) > 0) counts.set(label, q.rows[id]!);
        });
        return [q.name, counts];
      }),
    );
    const suppressed = masked
      ? tallyClasses(this.spec, new Int32Array(masked.rows.length), 1, this.auditedColumns(masked.rows), true)
      : undefined;
    return finish(this.spec, input, inputRows, { ...mergeTallies(tallies), labels }, suppressed);
  }

  /**
   * The unchanged columns of the rows `these`, as tallyClasses measures them (`positions`: the
   * rows numbered 0 … m − 1, read only).
   */
  private auditedColumns(these: Int32Array, positions = rowNumbers(these.length)): AuditedColumn[] {
    return this.columns.map((col) => {
      if (col.kind === 'dictionary')
        return { name: col.name, codes: gather(col.ids.data, these), width: col.index.size };
      if (col.kind === 'raw') return { name: col.name, ...idsBesideOnce(col.hashes.data, these) };
      return {
        name: col.name,
        codes: positions,
        width: these.length,
        once: new Uint8Array(these.length).fill(1),
      };
    });
  }

  /**
   * The suppressed rows generalization released masked (`*` in every quasi-identifier: their
   * class's hash is the all-`*` labels'), flagged and listed; undefined when there are none, or
   * when every row is `*` in every QI: the one class of a release at the top of every hierarchy
   * (no row can be told apart from a suppressed one there).
   */
  private maskedRows(): { flags: Uint8Array; rows: Int32Array } | undefined {
    const m = this.spec.method;
    if (m.name !== 'generalization' || m.suppressed === 'remove' || this.qis.length === 0) return;
    const ids = this.qis.map((q) => q.index.get(SUPPRESSED));
    if (ids.some((id) => id === undefined)) return;
    const star = new Int32Array(2);
    classHashesInto(
      star,
      0,
      ids.map(() => Int32Array.of(0)),
      ids.map((id) => Int32Array.of(id!)),
      1,
    );
    const hashes = this.classHashes.data;
    const flags = new Uint8Array(this.rows);
    let n = 0;
    for (let r = 0; r < this.rows; r++)
      if (hashes[2 * r] === star[0] && hashes[2 * r + 1] === star[1]) {
        flags[r] = 1;
        n++;
      }
    if (n === 0 || n === this.rows) return;
    const rows = new Int32Array(n);
    for (let r = 0, k = 0; r < this.rows; r++) if (flags[r] === 1) rows[k++] = r;
    return { flags, rows };
  }
}

/**
 * The rows grouped by their class's partition (partitionOfLane of its hash's first lane; a counting
 * sort): partition p's are order[starts[p] …], in row order; rows flagged in `skip` left out.
 */
function rowsByPartition(
  classHashes: Int32Array,
  rows: number,
  partitions: number,
  skip?: Uint8Array,
): { starts: Int32Array; order: Int32Array } {
  const kept = (r: number) => skip === undefined || skip[r] === 0;
  let n = 0;
  for (let r = 0; r < rows; r++) if (kept(r)) n++;
  const starts = new Int32Array(partitions + 1);
  const order = new Int32Array(n);
  if (partitions === 1) {
    starts[1] = n;
    for (let r = 0, k = 0; r < rows; r++) if (kept(r)) order[k++] = r;
    return { starts, order };
  }
  for (let r = 0; r < rows; r++) if (kept(r)) starts[partitionOfLane(classHashes[2 * r]!, partitions) + 1]!++;
  for (let p = 0; p < partitions; p++) starts[p + 1]! += starts[p]!;
  const next = starts.slice(0, partitions);
  for (let r = 0; r < rows; r++)
    if (kept(r)) order[next[partitionOfLane(classHashes[2 * r]!, partitions)]!++] = r;
  return { starts, order };
}

/** `into[base + r] = map[of[r]]` for every r (small functions: the JIT compiles each loop alone). */
function mapInto(into: Int32Array, base: number, map: Int32Array, of: Int32Array): void {
  for (let r = 0; r < of.length; r++) into[base + r] = map[of[r]!]!;
}

/**
 * Each of `n` rows' class hash, two lanes at `into[base + 2r]`: its QI codes' label ids
 * (`remaps[q][code]`) folded in QI order under two seeds, then mixed through.
 */
function classHashesInto(
  into: Int32Array,
  base: number,
  codes: readonly Int32Array[],
  remaps: readonly Int32Array[],
  n: number,
): void {
  const q = codes.length;
  for (let r = 0; r < n; r++) {
    let a: number = CLASS_SEEDS[0];
    let b: number = CLASS_SEEDS[1];
    for (let c = 0; c < q; c++) {
      const id = remaps[c]![codes[c]![r]!]!;
      a = mix(a, id);
      b = mix(b, id);
    }
    into[base + 2 * r] = mix32(a);
    into[base + 2 * r + 1] = mix32(b);
  }
}

/** A dictionary's entries as ids in `index` (entries new to it added; `values`: their list). */
function internAll(dictionary: readonly string[], index: Map<string, number>, values?: string[]): Int32Array {
  return Int32Array.from(dictionary, (v) => {
    let id = index.get(v);
    if (id === undefined) {
      index.set(v, (id = index.size));
      values?.push(v);
    }
    return id;
  });
}

/**
 * Dense ids (in order of first appearance) of the hashes (two lanes a row) of the rows `rows`,
 * and how many there are. The rows are first split by their hash's high bits into buckets of
 * at most `bucketRows`, each numbered in a table that stays in cache (one table of millions of
 * hashes costs a cache miss a row), then the ids renumbered by first appearance, which keeps a
 * column of nearly distinct values' ids in row order for the pairs counted after.
 */
export function hashIds(
  hashes: Int32Array,
  rows: Int32Array,
  bucketRows = BUCKET_ROWS,
): { codes: Int32Array; width: number } {
  const m = rows.length;
  let bits = 0;
  while (m >>> bits > bucketRows && bits < 24) bits++;
  const buckets = 1 << bits;
  const bucketOf = (hi: number) => (bits === 0 ? 0 : hi >>> (32 - bits));
  const starts = new Int32Array(buckets + 1);
  for (let i = 0; i < m; i++) starts[bucketOf(hashes[2 * rows[i]! + 1]!) + 1]!++;
  for (let b = 0; b < buckets; b++) starts[b + 1]! += starts[b]!;
  // Each row's (lo, hi, position), bucket by bucket, in row order inside each.
  const split = new Int32Array(3 * m);
  const next = starts.slice(0, buckets);
  for (let i = 0; i < m; i++) {
    const r = rows[i]!;
    const hi = hashes[2 * r + 1]!;
    const at = 3 * next[bucketOf(hi)]!++;
    split[at] = hashes[2 * r]!;
    split[at + 1] = hi;
    split[at + 2] = i;
  }
  let largest = 0;
  for (let b = 0; b < buckets; b++) largest = Math.max(largest, starts[b + 1]! - starts[b]!);
  let capacity = 64;
  while (capacity < 2 * largest) capacity *= 2;
  // Per slot (lo, hi, id + 1; 0: empty) side by side: a probe reads one cache line.
  const slots = new Int32Array(3 * capacity);
  const codes = new Int32Array(m);
  // A row that is the first of its hash (its bucket is read in row order): ids renumbered below.
  const first = new Uint8Array(m);
  let width = 0;
  for (let b = 0; b < buckets; b++) {
    const from = starts[b]!;
    const to = starts[b + 1]!;
    let size = 64;
    while (size < 2 * (to - from)) size *= 2;
    slots.fill(0, 0, 3 * size);
    for (let k = from; k < to; k++) {
      const lo = split[3 * k]!;
      const hi = split[3 * k + 1]!;
      const i = split[3 * k + 2]!;
      let at = 3 * (mix(lo, hi) & (size - 1));
      for (;;) {
        const id = slots[at + 2]!;
        if (id === 0) {
          slots[at] = lo;
          slots[at + 1] = hi;
          slots[at + 2] = ++width;
          codes[i] = width - 1;
          first[i] = 1;
          break;
        }
        if (slots[at] === lo && slots[at + 1] === hi) {
          codes[i] = id - 1;
          break;
        }
        at += 3;
        if (at === 3 * size) at = 0;
      }
    }
  }
  const renumbered = new Int32Array(width);
  for (let i = 0, id = 0; i < m; i++) if (first[i] === 1) renumbered[codes[i]!] = id++;
  for (let i = 0; i < m; i++) codes[i] = renumbered[codes[i]!]!;
  return { codes, width };
}

/**
 * Per row of `hashes` (two lanes a row, side by side: gatherPairs), 1 when no other row has its
 * hash: each hash is marked in a bitmap of at least `bitsPerRow` bits a row, and again in a
 * second when its bit was already set. A row whose bit was set once has a hash of its own; one
 * that shares its bit with another row (the same hash, or another one on the same bit: about
 * one row in 16) is marked 0 and left to an exact count. Two passes over bitmaps of a few MiB,
 * where numbering a million nearly distinct hashes costs a cache miss a row.
 */
export function hashesOnce(hashes: Int32Array, bitsPerRow = 16): Uint8Array {
  const m = hashes.length >>> 1;
  let bits = 6;
  while (2 ** bits < bitsPerRow * m && bits < 31) bits++;
  const mask = 2 ** bits - 1;
  const seen = new Int32Array(2 ** (bits - 5));
  const again = new Int32Array(2 ** (bits - 5));
  for (let r = 0; r < m; r++) {
    const b = bitOf(hashes, r, mask);
    const word = b >>> 5;
    const bit = 1 << (b & 31);
    if ((seen[word]! & bit) !== 0) again[word]! |= bit;
    else seen[word]! |= bit;
  }
  const once = new Uint8Array(m);
  for (let r = 0; r < m; r++) {
    const b = bitOf(hashes, r, mask);
    once[r] = (again[b >>> 5]! & (1 << (b & 31))) === 0 ? 1 : 0;
  }
  return once;
}

/** Row r's bit in hashesOnce's bitmaps: its hash is mixed already, its lanes folded together. */
function bitOf(hashes: Int32Array, r: number, mask: number): number {
  return (hashes[2 * r]! ^ Math.imul(hashes[2 * r + 1]!, 0x9e3779b1)) & mask;
}

/** The positions whose flag is below `limit`, in order. */
function positionsBelow(flags: Uint8Array, limit: number): Int32Array {
  let n = 0;
  for (let i = 0; i < flags.length; i++) if (flags[i]! < limit) n++;
  const out = new Int32Array(n);
  for (let i = 0, k = 0; i < flags.length; i++) if (flags[i]! < limit) out[k++] = i;
  return out;
}

/**
 * Value ids of the rows `rows` (hashes two lanes a row): a row whose hash no other of them has
 * (hashesOnce) takes an id of its own, the others are numbered by hashIds. Each class lies in
 * one partition, so a value held once in its partition makes its row unique with its class.
 */
function idsBesideOnce(
  hashes: Int32Array,
  rows: Int32Array,
): { codes: Int32Array; width: number; once: Uint8Array } {
  const m = rows.length;
  // The rows' hashes side by side, read at random once: both passes then read them in turn.
  const own = gatherPairs(hashes, rows);
  const once = hashesOnce(own);
  const numbered = hashIds(own, positionsBelow(once, 1));
  const codes = new Int32Array(m);
  let width = numbered.width;
  for (let i = 0, k = 0; i < m; i++) codes[i] = once[i] === 1 ? width++ : numbered.codes[k++]!;
  return { codes, width, once };
}

/** Rows per bucket of hashIds: its table (three words a slot, at most half full) fits in 1 MiB. */
const BUCKET_ROWS = 1 << 15;

/** What the audit counts over a set of whole classes; tallies of disjoint classes add up. */
interface Tally {
  rows: number;
  classes: number;
  /** Per quasi-identifier: rows per released label. */
  labels: Map<string, Map<string, number>>;
  /** Per linkable unchanged column: rows it alone makes unique with the class. */
  unique: Map<string, number>;
  /** Per unbounded sensitive column: the class where one value's share is largest. */
  worst: Map<string, { share: number; size: number }>;
  linkable: string[];
  linkage?: { uniqueRows: number; contributions: Map<string, number> };
}

/**
 * What the audit counts over whole classes (`classOf` each row's, of `classes`), but the labels.
 * `suppressed`: the rows are the suppressed ones, masked, which are no class: no model bounds
 * their sensitive values, so a sensitive attribute a model names is measured as an unbounded one.
 */
function tallyClasses(
  spec: ReleaseSpec,
  classOf: Int32Array,
  classes: number,
  columns: readonly AuditedColumn[],
  suppressed = false,
): Omit<Tally, 'labels'> {
  const rows = classOf.length;
  const bounded = boundedAttributes(spec);
  const typeOf = (name: string) => spec.attributes.find((a) => a.name === name)!.type;
  const linkable = columns
    .map((c) => c.name)
    .filter((name) => !(typeOf(name) === 'sensitive' && bounded.has(name)));
  const unique = new Map<string, number>();
  const worst = new Map<string, { share: number; size: number }>();
  // Per row, the linkable columns that alone make it unique with its class.
  const uniqueOn = new Uint8Array(rows);
  for (const column of columns) {
    const { name, codes, width } = column;
    const revealing = typeOf(name) === 'sensitive' && (suppressed || !bounded.has(name));
    if (!linkable.includes(name)) {
      if (revealing)
        worst.set(name, worstShare(classOf, classes, pairCounts(classOf, classes, codes, width)));
      continue;
    }
    const pairs = revealing ? pairCounts(classOf, classes, codes, width) : undefined;
    const alone = pairs ? uniquePairs(pairs) : uniqueWithClass(classOf, classes, column);
    let n = 0;
    for (let r = 0; r < rows; r++) {
      n += alone[r]!;
      uniqueOn[r]! += alone[r]!;
    }
    unique.set(name, n);
    if (revealing) worst.set(name, worstShare(classOf, classes, pairs!));
  }
  const linked = columns.filter((c) => linkable.includes(c.name));
  const linkage =
    linked.length === 1
      ? aloneLinkage(linked[0]!.name, unique.get(linked[0]!.name)!, classOf, classes)
      : linked.length > 1
        ? linkageOf(linked, classOf, classes, uniqueOn)
        : undefined;
  return { rows, classes, unique, worst, linkable, ...(linkage ? { linkage } : {}) };
}

/**
 * An unchanged column of the rows tallied: each row's value id, of `width`; `once`, when known,
 * 1 for a row whose value no other row tallied holds (it is then unique with its class).
 */
interface AuditedColumn {
  readonly name: string;
  readonly codes: Int32Array;
  readonly width: number;
  readonly once?: Uint8Array;
}

/**
 * The joint uniqueness of the linked columns (jointUniqueness), counted over the rows fewer than
 * two columns alone make unique with their class (`uniqueOn`, per row): a row two columns make
 * unique stays unique whichever one column is left out, so it adds to the unique rows and to no
 * contribution; and a row that shares its class and every column but one with another row
 * shares all but that one column's pairs with it, so neither is made unique by two columns:
 * the rows the others are compared with are all among those counted.
 */
function linkageOf(
  linked: readonly AuditedColumn[],
  classOf: Int32Array,
  classes: number,
  uniqueOn: Uint8Array,
): { uniqueRows: number; contributions: Map<string, number> } {
  const rows = classOf.length;
  const these = positionsBelow(uniqueOn, 2);
  const kept = these.length;
  if (kept === rows) return jointUniqueness(linked, classOf, classes);
  const theirClasses = denseIds(gather(classOf, these));
  const { uniqueRows, contributions } = jointUniqueness(
    linked.map((c) => ({ name: c.name, ...denseIds(gather(c.codes, these)) })),
    theirClasses.codes,
    theirClasses.width,
  );
  return { uniqueRows: uniqueRows + rows - kept, contributions };
}

/** Ids renumbered densely by first appearance: the count of a subset's ids is its own. */
function denseIds(ids: Int32Array): { codes: Int32Array; width: number } {
  let width = 0;
  let max = 0;
  for (let i = 0; i < ids.length; i++) if (ids[i]! > max) max = ids[i]!;
  const named = new Int32Array(max + 1).fill(-1);
  const codes = new Int32Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (named[id] === -1) named[id] = width++;
    codes[i] = named[id]!;
  }
  return { codes, width };
}

/** Per row, 1 when its (class, value) pair is its own. */
function uniquePairs(pairs: Pairs): Uint8Array {
  const alone = new Uint8Array(pairs.of.length);
  for (let r = 0; r < alone.length; r++) alone[r] = pairs.rows[pairs.of[r]!] === 1 ? 1 : 0;
  return alone;
}

/**
 * Per row, 1 when no other row has its class and its value of `column`: a row whose value is
 * its own (`once`) is; the others are paired with their class among themselves (a value held
 * once is held by no row among them).
 */
function uniqueWithClass(classOf: Int32Array, classes: number, column: AuditedColumn): Uint8Array {
  const { once } = column;
  if (!once) return uniquePairs(pairCounts(classOf, classes, column.codes, column.width));
  const alone = Uint8Array.from(once);
  const these = positionsBelow(once, 1);
  const shared = these.length;
  if (shared === 0) return alone;
  const values = denseIds(gather(column.codes, these));
  const sub = denseIds(gather(classOf, these));
  const pairs = pairCounts(sub.codes, sub.width, values.codes, values.width);
  for (let i = 0; i < shared; i++) if (pairs.rows[pairs.of[i]!] === 1) alone[these[i]!] = 1;
  return alone;
}

function mergeTallies(tallies: readonly Omit<Tally, 'labels'>[]): Omit<Tally, 'labels'> {
  const [first, ...rest] = tallies;
  const merged: Omit<Tally, 'labels'> = {
    rows: 0,
    classes: 0,
    unique: new Map(),
    worst: new Map(),
    linkable: first?.linkable ?? [],
    ...(first?.linkage ? { linkage: { uniqueRows: 0, contributions: new Map() } } : {}),
  };
  for (const t of [first!, ...rest]) {
    merged.rows += t.rows;
    merged.classes += t.classes;
    for (const [c, n] of t.unique) merged.unique.set(c, (merged.unique.get(c) ?? 0) + n);
    for (const [c, w] of t.worst) {
      const m = merged.worst.get(c);
      if (!m || w.share > m.share || (w.share === m.share && w.size > m.size)) merged.worst.set(c, w);
    }
    if (merged.linkage && t.linkage) {
      merged.linkage.uniqueRows += t.linkage.uniqueRows;
      const into = merged.linkage.contributions;
      for (const [c, n] of t.linkage.contributions) into.set(c, (into.get(c) ?? 0) + n);
    }
  }
  return merged;
}

/**
 * The audit from its tally: the cautions in a fixed order, the same whatever the partitions.
 * `t` tallies the released classes; `suppressed`, the rows generalization suppressed and masked
 * (no class: measured as one group, and named as the suppressed rows in the cautions).
 */
function finish(
  spec: ReleaseSpec,
  input: Pick<EncodedTable, 'columns'>,
  inputRows: number,
  t: Tally,
  suppressed?: Omit<Tally, 'labels'>,
): ReleaseAudit {
  const { rows, classes } = t;
  const masked = suppressed?.rows ?? 0;
  const cautions: Caution[] = identityCautions(spec);
  // The rows of the classes, as the cautions count them (the suppressed rows apart).
  const ofRows = (n: number) => `${counted(n, 'row')}${masked > 0 ? ' not suppressed' : ''}`;
  // Whoever can tell who was suppressed (from the quasi-identifiers of the classes released)
  // looks among the suppressed rows alone.
  const theSuppressed = `the ${counted(masked, 'suppressed row')} (every quasi-identifier masked)`;
  // Randomization keeps what its matrices let be reconstructed: no NCP, no class to keep.
  const generalized = CLASS_METHODS.has(spec.method.name);
  const ncp = generalized ? meanNcp(spec, input, inputRows, rows + masked, t.labels) : 0;
  // One class keeps nothing only when the release made it (NCP above 0): rows alike on every
  // quasi-identifier in the input are one class as they are, and keep all they had.
  if (generalized && rows > 1 && classes === 1 && ncp > 0) {
    cautions.push({
      cause: 'keeps-nothing',
      value: ncp,
      rows,
      message: `the release keeps almost nothing: all ${rows} released rows${masked > 0 ? ' not suppressed' : ''} form a single class, the quasi-identifiers as released telling no row from another (mean NCP ${fmtNum(ncp)})`,
    });
  } else if (generalized && (rows === 0 || ncp >= KEEPS_NOTHING_NCP)) {
    cautions.push({
      cause: 'keeps-nothing',
      value: ncp,
      rows,
      message:
        rows === 0
          ? 'the release keeps nothing: no row was released'
          : `the release keeps almost nothing: mean NCP ${fmtNum(ncp)} ≥ ${KEEPS_NOTHING_NCP} over the quasi-identifiers`,
    });
  }
  for (const name of unchangedColumns(spec)) {
    const unique = t.unique.get(name);
    // A sensitive attribute a model names is what that model bounds; the others can link.
    if (unique !== undefined && unique > UNIQUE_ROWS_ALLOWED) {
      cautions.push({
        cause: 'unique-with-unchanged-column',
        column: name,
        value: unique / rows,
        rows: unique,
        message: `${name} is released unchanged and makes ${fmtInt(unique)} of ${ofRows(rows)} (${fmtPct(unique / rows)}) unique ${uniqueWith(spec, false)}`,
      });
    }
    const worst = t.worst.get(name);
    if (worst && worst.share >= REVEAL_SHARE) {
      cautions.push({
        cause: 'sensitive-revealed',
        column: name,
        value: worst.share,
        rows: worst.size,
        message: `${name} is sensitive and no privacy model bounds it: in a class of ${counted(worst.size, 'row')} one value has a share of ${fmtPct(worst.share)} (≥ ${fmtPct(REVEAL_SHARE)})`,
      });
    }
    const apart = suppressed?.unique.get(name);
    if (apart !== undefined && apart > UNIQUE_ROWS_ALLOWED) {
      cautions.push({
        cause: 'unique-with-unchanged-column',
        column: name,
        value: apart / masked,
        rows: apart,
        message: `${name} is released unchanged and makes ${fmtInt(apart)} of ${theSuppressed} unique among them (${fmtPct(apart / masked)}): whoever can tell who was suppressed can single them out by it`,
      });
    }
    const share = suppressed?.worst.get(name)?.share;
    if (share !== undefined && share >= REVEAL_SHARE) {
      // A model that names the attribute bounds it in the classes; the suppressed rows are none.
      const model = spec.privacy.find((m) => attributeOf(m) === name)?.model;
      cautions.push({
        cause: 'sensitive-revealed',
        column: name,
        value: share,
        rows: masked,
        message: `${name} is sensitive and ${model ? `${model} bounds it in the released classes only` : 'no privacy model bounds it'}: among ${theSuppressed} one value has a share of ${fmtPct(share)} (≥ ${fmtPct(REVEAL_SHARE)}), which whoever can tell who was suppressed learns`,
      });
    }
  }
  // What an attacker sees: every linkable unchanged column at once, next to the quasi-identifiers.
  const linkage = t.linkage
    ? {
        columns: [...t.linkable],
        uniqueRows: t.linkage.uniqueRows,
        share: rows > 0 ? t.linkage.uniqueRows / rows : 0,
        contributions: Object.fromEntries(t.linkable.map((c) => [c, t.linkage!.contributions.get(c) ?? 0])),
      }
    : undefined;
  const contributions = (of: NonNullable<Tally['linkage']>) =>
    t.linkable.map((c) => `${c} ${fmtInt(of.contributions.get(c) ?? 0)}`).join(', ');
  if (linkage && t.linkable.length > 1 && linkage.uniqueRows > UNIQUE_ROWS_ALLOWED) {
    cautions.push({
      cause: 'unique-with-unchanged-columns',
      value: linkage.share,
      rows: linkage.uniqueRows,
      message: `together, the columns released unchanged (${t.linkable.join(', ')}) make ${fmtInt(linkage.uniqueRows)} of ${ofRows(rows)} (${fmtPct(linkage.share)}) unique ${uniqueWith(spec, true)}; rows that stop being unique when one column alone is left out: ${contributions(t.linkage!)}`,
    });
  }
  const apart = suppressed?.linkage;
  if (apart && t.linkable.length > 1 && apart.uniqueRows > UNIQUE_ROWS_ALLOWED) {
    cautions.push({
      cause: 'unique-with-unchanged-columns',
      value: apart.uniqueRows / masked,
      rows: apart.uniqueRows,
      message: `together, the columns released unchanged (${t.linkable.join(', ')}) make ${fmtInt(apart.uniqueRows)} of ${theSuppressed} unique among them (${fmtPct(apart.uniqueRows / masked)}): whoever can tell who was suppressed can single them out by these columns; rows that stop being unique when one column alone is left out: ${contributions(apart)}`,
    });
  }
  return {
    unchanged: unchangedColumns(spec),
    measured: true,
    thresholds: THRESHOLDS,
    classes,
    ...(generalized ? { ncp } : {}),
    ...(linkage ? { linkage } : {}),
    cautions,
  };
}

/** The sensitive attributes a privacy model names. */
function boundedAttributes(spec: ReleaseSpec): Set<string> {
  return new Set(spec.privacy.flatMap((m) => attributeOf(m) ?? []));
}

/**
 * The first model that bounds identity disclosure (re-identification by linkage on the
 * quasi-identifiers), as the catalogue declares it (`boundsIdentity`: k-anonymity or k-map with
 * k ≥ 2, an l-diversity with l ≥ 2, average risk below 1, (ε, δ)-differential privacy).
 * Undefined when none does.
 */
export function identityBoundBy(spec: Pick<ReleaseSpec, 'privacy'>): string | undefined {
  return spec.privacy.find((m) =>
    findModel(m.model)?.boundsIdentity?.(m as Readonly<Record<string, unknown>>),
  )?.model;
}

/** Amber for a row-releasing method whose models bound no re-identification (e.g. k = 1 alone). */
function identityCautions(spec: ReleaseSpec): Caution[] {
  if (!CLASS_METHODS.has(spec.method.name) || identityBoundBy(spec)) return [];
  const models = spec.privacy.map((m) => m.model);
  return [
    {
      cause: 'identity-unbounded',
      message: `no privacy model bounds identity disclosure (${
        models.length > 0 ? models.join(', ') : 'no model'
      }${models.includes(K_ANONYMITY.name) ? ' with k = 1' : ''}): rows may be unique on the quasi-identifiers as released`,
    },
  ];
}

/**
 * Rows unique on (the row's class, every given column) at once, and each column's contribution:
 * the unique rows that stop being unique when that column alone is left out (docs/definitions.md).
 */
function jointUniqueness(
  cols: readonly AuditedColumn[],
  classOf: Int32Array,
  classes: number,
): { uniqueRows: number; contributions: Map<string, number> } {
  const rows = classOf.length;
  // suffix[i]: ids over (columns ≥ i); the prefix over (class, columns < i) is rolled forward,
  // so each leave-one-out grouping is one pass and only the suffixes are held.
  const refine = (ids: { of: Int32Array; count: number }, col: (typeof cols)[number]) =>
    combine(ids, { of: col.codes, count: Math.max(1, col.width) }, rows);
  const suffix: { of: Int32Array; count: number }[] = new Array(cols.length + 1);
  suffix[cols.length] = { of: new Int32Array(rows), count: 1 };
  for (let i = cols.length - 1; i >= 0; i--) suffix[i] = refine(suffix[i + 1]!, cols[i]!);
  const all = uniqueRows(combine({ of: classOf, count: Math.max(1, classes) }, suffix[0]!, rows), rows);
  const contributions = new Map<string, number>();
  let prefix = { of: classOf, count: Math.max(1, classes) };
  cols.forEach(({ name }, i) => {
    contributions.set(name, all - uniqueRows(combine(prefix, suffix[i + 1]!, rows), rows));
    prefix = refine(prefix, cols[i]!);
  });
  return { uniqueRows: all, contributions };
}

/**
 * jointUniqueness of one column, from the rows it makes unique (`unique`): leaving it out
 * leaves the rows unique on their class alone, the classes of one row.
 */
function aloneLinkage(
  name: string,
  unique: number,
  classOf: Int32Array,
  classes: number,
): { uniqueRows: number; contributions: Map<string, number> } {
  return {
    uniqueRows: unique,
    contributions: new Map([
      [name, unique - uniqueRows({ of: classOf, count: Math.max(1, classes) }, classOf.length)],
    ]),
  };
}

/**
 * Ids of the pairs (a[r], b[r]), each below `count` (the same pair, the same id; the figures
 * count groups, never read an id's number): one side's ids when they already group the pairs,
 * else numbered by first appearance, from a direct table when the pairs' span is small or by
 * open addressing over typed arrays (a Map of 10⁶ numbers costs seconds).
 */
function combine(
  a: { of: Int32Array; count: number },
  b: { of: Int32Array; count: number },
  rows: number,
): { of: Int32Array; count: number } {
  // A side with one id, or that gives every row its own id (a column of distinct values, a
  // note), is already the grouping of the pairs, up to the ids' names: nothing to hash.
  if (b.count === 1) return a;
  if (a.count === 1) return b;
  if (allDistinct(a, rows)) return a;
  if (allDistinct(b, rows)) return b;
  const span = a.count * b.count;
  if (span <= Math.max(4 * rows, 1 << 16)) {
    const of = new Int32Array(rows);
    let next = 0;
    const ids = new Int32Array(span).fill(-1);
    for (let r = 0; r < rows; r++) {
      const key = a.of[r]! * b.count + b.of[r]!;
      let id = ids[key]!;
      if (id < 0) ids[key] = id = next++;
      of[r] = id;
    }
    return { of, count: Math.max(1, next) };
  }
  // The side with more ids indexes the pairs.
  return b.count >= a.count ? pairsByKey(b.of, b.count, a.of, rows) : pairsByKey(a.of, a.count, b.of, rows);
}

/**
 * combine's ids of the pairs (other[r], key[r]), numbered by first appearance: per key id, the
 * other side and id of its first pair, side by side (one cache line, in an array of 8 bytes a
 * key id, smaller than a table of pairs); a pair whose key id is taken by another pair (rare
 * when the key side is nearly distinct per row) goes to a table of pairs by open addressing.
 */
function pairsByKey(
  key: Int32Array,
  keyCount: number,
  other: Int32Array,
  rows: number,
): { of: Int32Array; count: number } {
  const of = new Int32Array(rows);
  const first = new Int32Array(2 * keyCount);
  let next = 0;
  let capacity = 1024;
  while (capacity < 2 * rows) capacity *= 2;
  const mask = capacity - 1;
  // Per slot (x, y, id + 1; 0: empty) side by side; allocated at the first pair it takes.
  let slots: Int32Array | undefined;
  for (let r = 0; r < rows; r++) {
    const y = key[r]!;
    const x = other[r]!;
    const taken = first[2 * y + 1]!;
    if (taken === 0) {
      first[2 * y] = x;
      first[2 * y + 1] = ++next;
      of[r] = next - 1;
      continue;
    }
    if (first[2 * y] === x) {
      of[r] = taken - 1;
      continue;
    }
    slots ??= new Int32Array(3 * capacity);
    let h = Math.imul(x, 0x9e3779b1) ^ Math.imul(y + 0x7f4a7c15, 0x85ebca77);
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
    let slot = (h ^ (h >>> 13)) & mask;
    let at = 3 * slot;
    while (slots[at + 2] !== 0 && (slots[at] !== x || slots[at + 1] !== y)) {
      slot = (slot + 1) & mask;
      at = 3 * slot;
    }
    if (slots[at + 2] === 0) {
      slots[at] = x;
      slots[at + 1] = y;
      slots[at + 2] = ++next;
    }
    of[r] = slots[at + 2]! - 1;
  }
  return { of, count: Math.max(1, next) };
}

/** Whether no two of the first `rows` ids are equal (checked only when there are ids enough). */
function allDistinct(ids: { of: Int32Array; count: number }, rows: number): boolean {
  if (ids.count < rows || rows === 0) return false;
  const seen = new Uint8Array(ids.count);
  for (let r = 0; r < rows; r++) {
    if (seen[ids.of[r]!] === 1) return false;
    seen[ids.of[r]!] = 1;
  }
  return true;
}

function uniqueRows(ids: { of: Int32Array; count: number }, rows: number): number {
  const n = new Int32Array(ids.count);
  for (let r = 0; r < rows; r++) n[ids.of[r]!]!++;
  let unique = 0;
  for (let r = 0; r < rows; r++) if (n[ids.of[r]!] === 1) unique++;
  return unique;
}

/** A column randomization was to perturb, released unperturbed. */
export interface Unperturbed {
  readonly column: string;
  /** Perturbed by the identity matrix, rather than left without a matrix (retention 1). */
  readonly matrix: boolean;
  /** Released as its input values (not binned or grouped to a hierarchy level). */
  readonly exact: boolean;
}

/**
 * The columns the spec's scenario randomizes that a randomized release's matrices.json (as
 * staged, parsed) leaves unperturbed: perturbed by the identity matrix, or listed among the
 * attributes released unrandomized (retention 1: τ = 1, say). A column of one category has
 * nothing to perturb and is left out.
 */
export function unperturbedColumns(spec: ReleaseSpec, matrices: unknown): Unperturbed[] {
  type Entry = { matrix?: unknown; categories?: unknown; discretization?: { kind?: unknown } };
  const file = matrices as { attributes?: Record<string, Entry>; released?: Record<string, Entry> } | null;
  const entries = (x: Record<string, Entry> | undefined) =>
    Object.entries(typeof x === 'object' && x !== null ? x : {});
  const exact = (e: Entry) => e?.discretization?.kind === 'values';
  const identity = entries(file?.attributes).filter(([, a]) => {
    const m = a?.matrix;
    return (
      Array.isArray(m) &&
      m.length > 1 &&
      m.every(
        (row, u) =>
          Array.isArray(row) && row.length === m.length && row.every((x, v) => x === (u === v ? 1 : 0)),
      )
    );
  });
  // What the scenario releases as it is (unchangedColumns) is no surprise: only the others.
  const kept = new Set(unchangedColumns(spec));
  const released = entries(file?.released).filter(
    ([name, r]) => !kept.has(name) && Array.isArray(r?.categories) && r.categories.length > 1,
  );
  return [
    ...identity.map(([column, e]) => ({ column, matrix: true, exact: exact(e) })),
    ...released.map(([column, e]) => ({ column, matrix: false, exact: exact(e) })),
  ];
}

/**
 * The audit with the columns randomization released unperturbed (`unperturbedColumns`): listed
 * as unchanged, each with a caution, since the release calls them randomized in its spec while
 * they are the input's values (or their categories) exactly (a model's bound that holds without
 * perturbation, as (ρ1, ρ2) does over frequent values or τ = 1 always, leaves nothing to perturb).
 */
export function withUnperturbed(
  spec: ReleaseSpec,
  audit: ReleaseAudit,
  columns: readonly Unperturbed[],
): ReleaseAudit {
  if (columns.length === 0) return audit;
  const rho = spec.privacy.some((m) => m.model === 'rho-privacy');
  const bound = rho ? 'the (ρ1, ρ2) bound holds' : "the privacy models' bounds hold";
  const names = columns.map((c) => c.column);
  return {
    ...audit,
    unchanged: [...audit.unchanged, ...names.filter((c) => !audit.unchanged.includes(c))],
    cautions: [
      ...audit.cautions,
      ...columns.map(
        ({ column, matrix, exact }): Caution => ({
          cause: 'released-unperturbed',
          column,
          message: `${column} is released unperturbed, ${exact ? 'exactly as in the input' : 'its input values only discretized'} (${matrix ? 'its matrix keeps every value' : 'it has no matrix'}: retention 1), because ${bound} without perturbing it`,
        }),
      ),
    ],
  };
}

/**
 * The verdict report.json states and report.html shows: red unless verified; amber when the
 * method leaves identity disclosure open (Anatomy, Slicing, randomization) or on a caution.
 */
export function verdictOf(report: Pick<ReleaseReport, 'verification' | 'privacy' | 'audit' | 'spec'>): {
  level: VerdictLevel;
  causes: string[];
} {
  if (!(report.verification.verified && report.privacy.satisfied))
    return { level: 'not-verified', causes: [] };
  const causes = [
    ...(methodLimits(report as ReleaseReport).identityOpen
      ? [
          `identity disclosure is not prevented: ${report.spec.method} leaves rows linkable on the values it publishes exactly`,
        ]
      : []),
    ...(report.audit?.cautions ?? []).map((c) => c.message),
  ];
  return { level: causes.length > 0 ? 'caution' : 'verified', causes };
}

/** The amber verdict's causes as the CLI prints them after its verified line, one a line. */
export function cautionLines(report: Pick<ReleaseReport, 'verdict'>): string {
  // A cause names columns: their control characters are shown, not obeyed by the terminal.
  return (report.verdict?.causes ?? []).map((cause) => `  caution: ${printable(cause)}\n`).join('');
}

/** Each row's (class, value) pair, and per pair its class and its rows. */
interface Pairs {
  readonly of: Int32Array;
  readonly classOf: Int32Array;
  readonly rows: Int32Array;
}

function pairCounts(classOf: Int32Array, classes: number, column: Int32Array, width: number): Pairs {
  const rows = classOf.length;
  const pairs = combine(
    { of: classOf, count: Math.max(1, classes) },
    { of: column, count: Math.max(1, width) },
    rows,
  );
  const rowsOf = new Int32Array(pairs.count);
  const classOfPair = new Int32Array(pairs.count);
  for (let r = 0; r < rows; r++) {
    rowsOf[pairs.of[r]!]!++;
    classOfPair[pairs.of[r]!] = classOf[r]!;
  }
  return { of: pairs.of, classOf: classOfPair, rows: rowsOf };
}

/** The class where one value has the largest share (ties: the larger class). */
function worstShare(classOf: Int32Array, classes: number, pairs: Pairs): { share: number; size: number } {
  const size = new Int32Array(classes);
  for (let r = 0; r < classOf.length; r++) size[classOf[r]!]!++;
  const top = new Int32Array(classes);
  for (let p = 0; p < pairs.rows.length; p++) {
    const cls = pairs.classOf[p]!;
    if (pairs.rows[p]! > top[cls]!) top[cls] = pairs.rows[p]!;
  }
  let worst = { share: 0, size: 0 };
  for (let c = 0; c < classes; c++) {
    const share = top[c]! / size[c]!;
    if (share > worst.share || (share === worst.share && size[c]! > worst.size))
      worst = { share, size: size[c]! };
  }
  return worst;
}

/**
 * Mean NCP over the quasi-identifier cells of the input's rows: a released cell costs
 * (values its label covers − 1) / (the attribute's distinct values − 1), a `[lo-hi]` range
 * its width over the attribute's range, `*` costs 1; rows left out of the release cost 1 a cell.
 * From the rows per released label, summed in label order: the same figure whatever order the
 * rows are in (a release in parts holds them in another order than the release in one file).
 */
function meanNcp(
  spec: ReleaseSpec,
  input: Pick<EncodedTable, 'columns'>,
  inputRows: number,
  rows: number,
  labels: ReadonlyMap<string, ReadonlyMap<string, number>>,
): number {
  const qis = spec.attributes.filter((a) => a.type === 'quasi-identifying');
  if (qis.length === 0 || inputRows === 0) return 0;
  let total = (inputRows - rows) * qis.length;
  for (const a of qis) {
    const counts = labels.get(a.name);
    const column = input.columns.find((x) => x.name === a.name);
    if (!counts || !column) {
      total += rows;
      continue;
    }
    const cost = labelCost(column, a.hierarchy);
    for (const label of [...counts.keys()].sort(byCodeUnits)) total += counts.get(label)! * cost(label);
  }
  return Math.min(1, total / (inputRows * qis.length));
}

/** The NCP of one released label of an input column (a label nothing explains: its own value). */
function labelCost(
  column: EncodedTable['columns'][number],
  hierarchy: ReleaseSpec['attributes'][number]['hierarchy'],
): (label: string) => number {
  // The input's dictionaries hold exactly the values its rows hold.
  const values = [...new Set(column.dictionary)];
  if (values.length <= 1) return () => 0;
  const loss = labelLoss(values, hierarchy ? verifierHierarchyRows(column, hierarchy) : undefined);
  return (label) => loss(label) ?? 0;
}
