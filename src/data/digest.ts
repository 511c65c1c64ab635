/**
 * The table digest that keys every random stream (the scheme: src/util/keys.ts): a sum of
 * each row's 128-bit hash, built piece by piece. Its row loop is a WASM kernel
 * (assembly/digest.ts); the plain-TS reference is src/kernels/digest/reference.ts.
 */
import { createHash } from 'node:crypto';
import {
  type DigestRowsKernel,
  LANES as KERNEL_LANES,
  type RawLanesKernel,
} from '../kernels/digest/kernel.ts';
import { hashValue } from '../kernels/digest/reference.ts';
import { wasmDigestRows, wasmRawLanes } from '../kernels/digest/wasm.ts';
import { rowNumbers } from '../util/int32s.ts';
import { mix32 as keysMix32 } from '../util/keys.ts';
import { rawLength } from './raw.ts';
import type { EncodedTable } from './table.ts';

// Module-local copies of what the hot loops use: a test runner that rewrites imports into
// property reads (vitest) would otherwise look each one up per value hashed.
const LANES = KERNEL_LANES;
const mix32 = keysMix32;

/** SHA-256 of the table's cells (see above). */
export function tableDigest(table: EncodedTable): Uint8Array {
  return new CellDigest().add(table).digest();
}

/**
 * The table digest built piece by piece, in any order and on any machine: `add` takes shards
 * (a reader's shards, whose dictionaries only grow), `merge` takes another digest's `state()`.
 */
export class CellDigest {
  private names: string[] | undefined;
  private rows = 0;
  private readonly sum = new Uint32Array(LANES);
  /** Per column, the lanes of each dictionary entry hashed so far, and that dictionary. */
  private hashed: { dictionary: readonly string[]; count: number; lanes: Uint32Array }[] = [];

  /**
   * `kernel`: the row loop; `rawLanes`: a raw column's value lanes (the WASM ones unless a test
   * names the references).
   */
  constructor(
    private readonly kernel: DigestRowsKernel = wasmDigestRows,
    private readonly rawLanes: RawLanesKernel = wasmRawLanes,
  ) {}

  add(table: EncodedTable): this {
    this.checkNames(table.columns.map((c) => c.name));
    // A raw column (its rows' bytes) is a dictionary of its rows: each row's own lanes, codes
    // the row indices. The kernel mixes the same lanes in the same order, so the same digest.
    let rowIndices: Int32Array | undefined;
    const rowCodes = () => (rowIndices ??= rowNumbers(table.rowCount));
    const lanes = table.columns.map((c, i) =>
      c.raw ? this.rawLanes(i, c.raw) : this.valueLanes(i, c.dictionary),
    );
    const sizes = table.columns.map((c) => (c.raw ? rawLength(c.raw) : c.dictionary.length));
    const codes = table.columns.map((c) => (c.raw ? rowCodes() : c.codes));
    const { width, ahead } = mixedAhead(lanes, sizes);
    this.kernel({ rowCount: table.rowCount, codes, lanes, sizes, width, ahead }, this.sum);
    this.rows += table.rowCount;
    return this;
  }

  /** What `merge` takes: the column names, the rows added and the row sum. */
  state(): DigestState {
    return { names: this.names ?? [], rows: this.rows, sum: Array.from(this.sum) };
  }

  merge(other: DigestState): this {
    if (other.rows === 0 && other.names.length === 0) return this;
    this.checkNames(other.names);
    this.rows += other.rows;
    for (let l = 0; l < LANES; l++) this.sum[l] = (this.sum[l]! + (other.sum[l] ?? 0)) >>> 0;
    return this;
  }

  digest(): Uint8Array {
    const hash = createHash('sha256').update('ppdp/table/v2').update(Uint8Array.of(0));
    for (const name of this.names ?? []) hash.update(name).update(Uint8Array.of(0));
    hash.update(Uint8Array.of(0));
    const tail = new DataView(new ArrayBuffer(8 + 4 * LANES));
    tail.setBigUint64(0, BigInt(this.rows), true);
    for (let l = 0; l < LANES; l++) tail.setUint32(8 + 4 * l, this.sum[l]!, true);
    return hash.update(new Uint8Array(tail.buffer)).digest();
  }

  private checkNames(names: readonly string[]): void {
    if (this.names === undefined) this.names = [...names];
    else if (this.names.length !== names.length || this.names.some((n, i) => n !== names[i]))
      throw new Error(`table digest: columns ${names.join(',')} after ${this.names.join(',')}`);
  }

  /**
   * The lanes of every entry of column `i`'s dictionary. A reader's dictionaries only grow (each
   * shard's is a prefix of the next one's), so only the entries past the last shard's are
   * hashed; a dictionary that is not such an extension is hashed afresh.
   */
  private valueLanes(i: number, dictionary: readonly string[]): Uint32Array {
    let h = this.hashed[i];
    const extends_ =
      h !== undefined &&
      dictionary.length >= h.count &&
      (h.dictionary === dictionary || h.count === 0 || dictionary[h.count - 1] === h.dictionary[h.count - 1]);
    if (!h || !extends_) h = this.hashed[i] = { dictionary, count: 0, lanes: new Uint32Array(0) };
    if (dictionary.length > h.count) {
      if (h.lanes.length < dictionary.length * LANES) {
        const grown = new Uint32Array(Math.max(dictionary.length, 2 * h.count) * LANES);
        grown.set(h.lanes.subarray(0, h.count * LANES));
        h.lanes = grown;
      }
      for (let v = h.count; v < dictionary.length; v++) hashValue(i, dictionary[v]!, h.lanes, v * LANES);
      h.count = dictionary.length;
    }
    h.dictionary = dictionary;
    return h.lanes;
  }
}

/** Most combinations of leading columns whose lanes are mixed ahead: a table that stays in cache. */
const AHEAD_COMBINATIONS = 1 << 15;

/**
 * A row's four lanes after its first `width` columns, mixed ahead for every combination of
 * their codes (mixed radix in column order, the dictionaries' sizes its bases; LANES words
 * each): a row then mixes only the columns after them. The same steps in the same order, so
 * the same digest; with no leading column, the one combination holds the seeds.
 */
function mixedAhead(
  columns: readonly Uint32Array[],
  sizes: readonly number[],
): { width: number; ahead: Uint32Array } {
  let width = 0;
  let combinations = 1;
  while (width < sizes.length && combinations * sizes[width]! <= AHEAD_COMBINATIONS)
    combinations *= sizes[width++]!;
  let ahead = Uint32Array.from(LANE_SEEDS);
  for (let k = 0; k < width; k++) {
    const lanes = columns[k]!;
    const size = sizes[k]!;
    const next = new Uint32Array(ahead.length * size);
    for (let before = 0; before < ahead.length / LANES; before++) {
      for (let v = 0; v < size; v++) {
        let a = ahead[LANES * before]!;
        let b = ahead[LANES * before + 1]!;
        let c = ahead[LANES * before + 2]!;
        let d = ahead[LANES * before + 3]!;
        const at = v * LANES;
        a = mix32(a ^ lanes[at]! ^ (b >>> 7));
        b = mix32(b ^ lanes[at + 1]! ^ (c >>> 7));
        c = mix32(c ^ lanes[at + 2]! ^ (d >>> 7));
        d = mix32(d ^ lanes[at + 3]! ^ (a >>> 7));
        next.set([a, b, c, d], LANES * (before * size + v));
      }
    }
    ahead = next;
  }
  return { width, ahead };
}

/** A digest's state in JSON: what a scanned piece hands to the merge. */
export interface DigestState {
  readonly names: readonly string[];
  readonly rows: number;
  readonly sum: readonly number[];
}

const LANE_SEEDS = Uint32Array.from({ length: LANES }, (_, l) => mix32(0x9e3779b9 + l * 0x632be5ab) >>> 0);
