/**
 * Admission of a release read in shards: from the shards a scan has read so far, what the
 * largest invocation of each state will hold once its file is read — its distinct values (every
 * state decodes the input's dictionaries) and, for Search, the distinct quasi-identifier tuples
 * — against the memory of the function (or machine) that runs it; then, in Combine, the same for
 * the whole input from every file's summary (`admitWhole`). A release that would not fit is
 * refused after a shard or two, or before any state after the scan starts, with the setting to
 * change, instead of running out of memory in a later state. The costs per row, value and tuple are measured (docs/deploy.md,
 * "Memory per state"); projections extrapolate the latest shard's rate of new values and
 * tuples, which only falls as more rows are read, so they err on the large side.
 */
import { LimitError } from '../errors.ts';
import type { MemoryBudget } from './limits.ts';
import { rawLength } from './raw.ts';
import type { EncodedTable } from './table.ts';

const MiB = 1024 * 1024;
/** A state's runtime before any data: Node, the AWS SDK, the WASM core. */
const BASE_BYTES = 160 * MiB;
/** Plan per row of its shard and kept column: codes, growing arrays, the Arrow file it writes. */
const PLAN_BYTES_PER_CELL = 8;
/** A shard state (CountShard, ApplyShard) per row: codes, the row → tuple map, the group-by tables. */
const SHARD_BYTES_PER_ROW = 140;
/** Per distinct value held as a string with its dictionary entries, beside its UTF-8 bytes. */
const VALUE_OVERHEAD_BYTES = 64;
/** Plan holds each value twice over (the reader's dictionary and the digest's) with a map entry. */
const PLAN_VALUE_OVERHEAD_BYTES = 120;
/**
 * The scan per distinct value of a raw column (a pass-through one, read as bytes): its set of
 * distinct values (pipeline/rows.ts, DistinctHashes) holds a 64-bit hash a value in 4/3–8/3
 * slots of 8 bytes, and the table it grows out of while it doubles; none of the values' bytes.
 */
const RAW_VALUE_OVERHEAD_BYTES = 32;
/**
 * Search per distinct tuple (codes, counts, the merge's table, the classes of the nodes it
 * groups): deployed, with its memory enforced, Search held 75 bytes more per tuple from 3·10^6 to
 * 10^7 near-unique tuples (bench/results/deployed-registry.json); a fifth more for headroom.
 */
const SEARCH_BYTES_PER_TUPLE = 90;
/** Projections above this share of a budget are refused (the rest is headroom). */
const HEADROOM = 0.9;

/** Memory budgets of the states that grow with the input, as the engine or the deployment sets them. */
export interface StateBudgets {
  readonly Plan: MemoryBudget;
  /** CountShard and ApplyShard (the smaller of the two). */
  readonly shard: MemoryBudget;
  readonly Search: MemoryBudget;
}

/** What is projected for the end of the input. */
export interface Projection {
  readonly rows: number;
  readonly values: number;
  readonly valueBytes: number;
  readonly tuples: number;
  readonly needs: { readonly Plan: number; readonly shard: number; readonly Search: number };
  /** The part of each need that the distinct values make up. */
  readonly valueNeeds: { readonly Plan: number; readonly shard: number; readonly Search: number };
}

/** HyperLogLog with 2¹⁴ registers: distinct tuples within about 1 %, in 16 KB. */
class TupleSketch {
  private readonly registers = new Uint8Array(1 << 14);

  add(columns: readonly Int32Array[], rows: number): void {
    const registers = this.registers;
    for (let r = 0; r < rows; r++) {
      let h1 = 0x9e3779b9 | 0;
      let h2 = 0x7f4a7c15 | 0;
      for (const codes of columns) {
        const c = codes[r]!;
        h1 = Math.imul(h1 ^ c, 0x85ebca6b);
        h1 ^= h1 >>> 13;
        h2 = Math.imul(h2 ^ c, 0xc2b2ae35);
        h2 ^= h2 >>> 16;
      }
      h1 = Math.imul(h1 ^ (h1 >>> 16), 0x27d4eb2d);
      h2 = Math.imul(h2 ^ (h2 >>> 15), 0x165667b1);
      const slot = h1 >>> 18;
      const rank = Math.clz32(h2) + 1;
      if (rank > registers[slot]!) registers[slot] = rank;
    }
  }

  /** The registers, for another sketch to `merge` (a piece's sketch into the whole input's). */
  bytes(): Uint8Array {
    return this.registers;
  }

  merge(registers: Uint8Array): void {
    for (let i = 0; i < this.registers.length; i++)
      if (registers[i]! > this.registers[i]!) this.registers[i] = registers[i]!;
  }

  estimate(): number {
    const m = this.registers.length;
    let sum = 0;
    let zeros = 0;
    for (const r of this.registers) {
      sum += 2 ** -r;
      if (r === 0) zeros++;
    }
    const raw = ((0.7213 / (1 + 1.079 / m)) * m * m) / sum;
    return raw <= 2.5 * m && zeros > 0 ? m * Math.log(m / zeros) : raw;
  }
}

export class ShardedAdmission {
  private readonly sketch = new TupleSketch();
  private rows = 0;
  private tuples = 0;
  private values: number[] = [];
  /** Mean UTF-8 bytes of each column's values (of a raw column's rows: its values are not listed). */
  private meanBytes: number[] = [];
  /** Per column: whether it comes as its rows' bytes (EncodedColumn.raw), and their bytes so far. */
  private raw: boolean[] = [];
  private rawBytes: number[] = [];
  private shards = 0;

  /**
   * @param scanState the state reading the rows, which the `Plan` budget is for (ScanPiece
   *   deployed: each reads one piece of the input)
   */
  constructor(
    private readonly qis: ReadonlySet<string>,
    private readonly rowsPerShard: number,
    private readonly budgets: StateBudgets,
    private readonly scanState = 'Plan',
  ) {}

  /** What a piece's admission hands to the merge (`admitWhole`): rows and the tuple sketch. */
  summary(): { readonly rows: number; readonly sketch: string } {
    return { rows: this.rows, sketch: Buffer.from(this.sketch.bytes()).toString('base64') };
  }

  /**
   * The whole input's admission from its pieces' summaries and its merged dictionaries: the
   * states after the scan (the shard states, Search) against their budgets, with the input
   * all read, so nothing is extrapolated.
   * @throws LimitError E_LIMIT_MEMORY as `observe` does.
   */
  static admitWhole(
    pieces: readonly { readonly rows: number; readonly sketch: string }[],
    dictionaries: EncodedTable,
    rowsPerShard: number,
    budgets: StateBudgets,
  ): Projection {
    const whole = new ShardedAdmission(new Set(), rowsPerShard, budgets);
    for (const p of pieces) {
      whole.sketch.merge(Buffer.from(p.sketch, 'base64'));
      whole.rows += p.rows;
    }
    whole.shards = pieces.length;
    whole.tuples = whole.sketch.estimate();
    whole.values = dictionaries.columns.map((c) => c.dictionary.length);
    whole.meanBytes = dictionaries.columns.map((c) => meanUtf8Bytes(c.dictionary, 0));
    const projection = whole.project(whole.rows, whole.values, whole.tuples, dictionaries.columns.length);
    whole.check(projection, ['shard', 'Search']);
    return projection;
  }

  /**
   * Takes in the next shard and refuses the release when a state's projected need passes its
   * budget: only once two shards show the rates (or the input is all read), so a first shard's
   * overestimate alone never refuses.
   * @throws LimitError E_LIMIT_MEMORY naming the state, the figures and the setting to change.
   */
  observe(shard: EncodedTable): Projection | undefined {
    const before = { rows: this.rows, tuples: this.tuples, values: this.values };
    this.sketch.add(
      shard.columns.filter((c) => this.qis.has(c.name)).map((c) => c.codes),
      shard.rowCount,
    );
    this.shards++;
    this.rows += shard.rowCount;
    this.tuples = this.sketch.estimate();
    // A raw column's distinct values are counted as it is read (its `distinct`), never listed.
    this.values = shard.columns.map((c) => (c.raw ? (c.distinct ?? 0) : c.dictionary.length));
    this.raw = shard.columns.map((c) => c.raw !== undefined);
    this.rawBytes = shard.columns.map(
      (c, i) => (this.rawBytes[i] ?? 0) + (c.raw ? c.raw.offsets[rawLength(c.raw)]! - c.raw.offsets[0]! : 0),
    );
    // Running mean of each column's value length: the new values weighed by their number.
    this.meanBytes = shard.columns.map((c, i) => {
      if (c.raw) return this.rawBytes[i]! / Math.max(1, this.rows);
      const was = before.values[i] ?? 0;
      const added = c.dictionary.length - was;
      if (added <= 0) return this.meanBytes[i] ?? 0;
      return (
        ((this.meanBytes[i] ?? 0) * was + meanUtf8Bytes(c.dictionary, was) * added) / c.dictionary.length
      );
    });
    if (shard.progress === undefined || shard.progress <= 0) return undefined;
    const total = shard.progress >= 1 ? this.rows : this.rows / shard.progress;
    const remaining = Math.max(0, total - this.rows);
    const added = Math.max(1, this.rows - before.rows);
    // New values and tuples per row in the latest shard, carried over the rows still to come.
    const grow = (now: number, was: number) =>
      Math.min(now + remaining, now + ((now - was) / added) * remaining);
    const projection = this.project(
      total,
      this.values.map((d, i) => grow(d, before.values[i] ?? 0)),
      grow(this.tuples, before.tuples),
      shard.columns.length,
    );
    if (this.shards >= 2 || shard.progress >= 1) this.check(projection);
    return projection;
  }

  /**
   * Each state's need for `total` rows holding `values` distinct values per column and `tuples`
   * tuples. A raw column's values are held only by the scan (its set of distinct values); a
   * shard's rows of it, by the scan and the shard states.
   */
  private project(total: number, values: number[], tuples: number, columns: number): Projection {
    let valueBytes = 0;
    let valueCount = 0;
    let rawBytes = 0;
    let rawCount = 0;
    let rawRowBytes = 0;
    for (const [i, d] of values.entries()) {
      const bytes = d * (this.meanBytes[i] ?? 0);
      if (this.raw[i]) {
        rawBytes += bytes;
        rawCount += d;
        rawRowBytes += this.meanBytes[i] ?? 0;
      } else {
        valueBytes += bytes;
        valueCount += d;
      }
    }
    const shardRows = Math.min(this.rowsPerShard, total);
    const cells = shardRows * columns;
    const valueNeeds = {
      Plan: 2 * valueBytes + valueCount * PLAN_VALUE_OVERHEAD_BYTES + rawCount * RAW_VALUE_OVERHEAD_BYTES,
      shard: valueBytes + valueCount * VALUE_OVERHEAD_BYTES,
      Search: valueBytes + valueCount * VALUE_OVERHEAD_BYTES,
    };
    const needs = {
      Plan: BASE_BYTES + cells * PLAN_BYTES_PER_CELL + shardRows * rawRowBytes + valueNeeds.Plan,
      shard: BASE_BYTES + shardRows * (SHARD_BYTES_PER_ROW + rawRowBytes) + valueNeeds.shard,
      Search: BASE_BYTES + tuples * SEARCH_BYTES_PER_TUPLE + valueNeeds.Search,
    };
    return {
      rows: Math.round(total),
      values: valueCount + rawCount,
      valueBytes: valueBytes + rawBytes,
      tuples,
      needs,
      valueNeeds,
    };
  }

  private check(
    p: Projection,
    states: readonly ('Plan' | 'shard' | 'Search')[] = ['Plan', 'shard', 'Search'],
  ): void {
    for (const state of states) {
      const budget = this.budgets[state];
      if (p.needs[state] <= HEADROOM * budget.bytes) continue;
      const name =
        state === 'shard' ? 'CountShard and ApplyShard' : state === 'Plan' ? this.scanState : state;
      const what =
        state === 'Search'
          ? `about ${fmt(p.tuples)} distinct quasi-identifier tuples`
          : `${fmt(p.values)} distinct values (${Math.round(p.valueBytes / MiB)} MB of text)`;
      throw new LimitError(
        'E_LIMIT_MEMORY',
        `the input's ${fmt(p.rows)} rows (projected from the first ${fmt(this.rows)}) hold ${what}: ` +
          `${name} would need about ${Math.round(p.needs[state] / MiB)} MB, over the ${Math.round((HEADROOM * budget.bytes) / MiB)} MB ` +
          `it may use (nine tenths of ${Math.round(budget.bytes / MiB)} MB: ${budget.source})`,
        state === 'Search'
          ? `${budget.hint ?? 'give the search more memory'}, or coarsen the quasi-identifiers before the release (fewer distinct values)`
          : 2 * p.valueNeeds[state] > p.needs[state] - BASE_BYTES
            ? `mark a many-valued column that need not be released "identifying" (it is then never read in), or ${budget.hint ?? 'give the release more memory'}`
            : (budget.hint ?? 'give the release more memory'),
      );
    }
  }
}

/** Mean UTF-8 length of the dictionary's values from `from` on (a sample of at most 4,096). */
function meanUtf8Bytes(dictionary: readonly string[], from: number): number {
  const n = dictionary.length - from;
  if (n <= 0) return 0;
  const step = Math.max(1, Math.floor(n / 4096));
  let bytes = 0;
  let count = 0;
  for (let i = from; i < dictionary.length; i += step) {
    bytes += Buffer.byteLength(dictionary[i]!);
    count++;
  }
  return bytes / count;
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en');
}
