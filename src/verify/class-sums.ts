/**
 * The verifier's class sums: each row of a slice keyed by its class (its QI labels' hashes
 * folded in column order, 4 lanes), the class interned, and per class its size and the sums of
 * its rows' joined hashes (src/verify/fingerprint.ts), the masked ones too for an input shard.
 * The verifier's largest cost, so the loop also runs as a WASM kernel (assembly/classes.ts)
 * with the four lanes in one SIMD value; this plain-TS one is its reference, and both give the
 * same classes in the same order with the same sums (test/verify/class-sums.test.ts).
 */
import { Regions, reserve } from '../wasm/layout.ts';
import { acquireCore, releaseCore } from '../wasm/module.ts';
import { fold, join, KEY_SEED, OTHER_SEED, QI_SEED } from './fingerprint.ts';

/** Words of a class key. */
export const KEY = 4;
/** Words per class: size and fingerprint (2 lanes), and for an input shard the masked fingerprint (2). */
export const SHARD_LANES = 5;
export const PART_LANES = 3;

/** Codes of columns and, per column, its values' hashes (`lanes` words per code). */
export interface Hashed {
  readonly codes: readonly Int32Array[];
  readonly hashes: readonly Int32Array[];
}

/** A slice's classes in order of first occurrence: class `i` has key `keys[4i … 4i+3]`, sums `sums[lanes·i …]`. */
export interface SummedClasses {
  readonly lanes: number;
  readonly size: number;
  /** At least `KEY · size` words (only those are the classes'). */
  readonly keys: Uint32Array;
  readonly sums: Uint32Array;
  /** Per row, its class (a part's rows, for its cells). */
  readonly classOf?: Int32Array | undefined;
}

export interface ClassSumsKernel {
  readonly name: 'wasm' | 'ts';
  /**
   * `n` rows summed into classes; with `mask` (an input shard: the masked QI hash) the masked
   * fingerprints too, without it (an output part) each row's class.
   */
  sum(n: number, qi: Hashed, other: Hashed, mask?: Uint32Array): SummedClasses;
}

export const tsClassSums: ClassSumsKernel = { name: 'ts', sum: sumRows };

/**
 * Rows summed into classes: each row's key is its QIs' hashes (4 lanes) folded in column
 * order, its fingerprint that key's first two lanes joined with its other cells' hash (from
 * OTHER_SEED); per class its size and fingerprint, and with `mask` (a shard), the fingerprint
 * of its rows masked. A part's rows' classes (`classOf`, 4 bytes a row) are kept for its cells.
 */
function sumRows(n: number, qi: Hashed, other: Hashed, mask?: Uint32Array): SummedClasses {
  const table = new ClassTable(mask ? SHARD_LANES : PART_LANES, n);
  const classOf = mask ? undefined : new Int32Array(n);
  const { codes, hashes } = qi;
  const q = codes.length;
  const m0 = mask?.[0] ?? 0;
  const m1 = mask?.[1] ?? 0;
  const { width, sizes, lanes } = foldedPrefix(qi);
  for (let r = 0; r < n; r++) {
    let combination = 0;
    for (let c = 0; c < width; c++) combination = combination * sizes[c]! + codes[c]![r]!;
    const from = KEY * combination;
    let k0 = lanes[from]!;
    let k1 = lanes[from + 1]!;
    let k2 = lanes[from + 2]!;
    let k3 = lanes[from + 3]!;
    for (let c = width; c < q; c++) {
      const h = hashes[c]!;
      const at = KEY * codes[c]![r]!;
      k0 = fold(k0, h[at]!);
      k1 = fold(k1, h[at + 1]!);
      k2 = fold(k2, h[at + 2]!);
      k3 = fold(k3, h[at + 3]!);
    }
    let o0 = OTHER_SEED[0];
    let o1 = OTHER_SEED[1];
    for (let k = 0; k < other.codes.length; k++) {
      const h = other.hashes[k]!;
      const at = 2 * other.codes[k]![r]!;
      o0 = fold(o0, h[at]!);
      o1 = fold(o1, h[at + 1]!);
    }
    const id = table.intern(k0, k1, k2, k3);
    if (classOf) classOf[r] = id;
    const sums = table.sums;
    const at = table.lanes * id;
    // Uint32 lanes: each sum wraps modulo 2^32 as it is stored.
    sums[at]!++;
    sums[at + 1] = sums[at + 1]! + join(k0, o0, 0);
    sums[at + 2] = sums[at + 2]! + join(k1, o1, 1);
    if (mask) {
      sums[at + 3] = sums[at + 3]! + join(m0, o0, 0);
      sums[at + 4] = sums[at + 4]! + join(m1, o1, 1);
    }
  }
  table.dropSlots();
  return { lanes: table.lanes, size: table.size, keys: table.keys, sums: table.sums, classOf };
}

/** Most combinations of leading QI columns whose keys are folded ahead: a table that stays in cache. */
const PREFIX_COMBINATIONS = 1 << 15;

/**
 * The key lanes of the first `width` QI columns, folded ahead for every combination of their
 * codes (mixed radix in column order, `sizes` its digits' bases; 4 lanes each): a row then
 * folds only the columns after them. The same folds in the same order, so the same keys; with
 * no leading column, the one combination holds the seeds.
 */
function foldedPrefix(qi: Hashed): { width: number; sizes: Int32Array; lanes: Uint32Array } {
  const sizes = new Int32Array(qi.hashes.map((h) => h.length / KEY));
  let width = 0;
  let combinations = 1;
  while (width < sizes.length && combinations * sizes[width]! <= PREFIX_COMBINATIONS)
    combinations *= sizes[width++]!;
  let lanes = Uint32Array.of(QI_SEED[0], QI_SEED[1], KEY_SEED[0], KEY_SEED[1]);
  for (let c = 0; c < width; c++) {
    const h = qi.hashes[c]!;
    const size = sizes[c]!;
    const next = new Uint32Array(lanes.length * size);
    for (let before = 0; before < lanes.length / KEY; before++) {
      for (let v = 0; v < size; v++) {
        const to = KEY * (before * size + v);
        for (let l = 0; l < KEY; l++) next[to + l] = fold(lanes[KEY * before + l]!, h[KEY * v + l]!);
      }
    }
    lanes = next;
  }
  return { width, sizes, lanes };
}

/**
 * Classes by key (open addressing over typed arrays): per class its key and `lanes` sums.
 * These are sized once for the most classes there can be (`capacity`: one a row), so they
 * never grow by copying; they are zero-filled on allocation, and the system maps their pages
 * only as classes first write them, so what is resident follows the classes, at 4 · (4 + lanes)
 * bytes each. The lookup grows with the classes (8 to 16 bytes each: touched all over, it
 * would be resident whole if sized for every row), and is dropped before they are written out.
 */
export class ClassTable {
  readonly keys: Uint32Array;
  readonly sums: Uint32Array;
  size = 0;
  /** Slot → class + 1 (0: empty); a power of two, at least twice the classes. */
  private slots = new Int32Array(2048);

  constructor(
    readonly lanes: number,
    capacity: number,
  ) {
    this.keys = new Uint32Array(KEY * capacity);
    this.sums = new Uint32Array(lanes * capacity);
  }

  intern(k0: number, k1: number, k2: number, k3: number): number {
    const keys = this.keys;
    const mask = this.slots.length - 1;
    // Lane 3 is a mixed hash: its low bits spread the slots.
    let s = k3 & mask;
    for (;;) {
      const id = this.slots[s]! - 1;
      if (id < 0) break;
      const at = KEY * id;
      if (keys[at] === k0 && keys[at + 1] === k1 && keys[at + 2] === k2 && keys[at + 3] === k3) return id;
      s = (s + 1) & mask;
    }
    const id = this.size++;
    if (KEY * this.size > keys.length) throw new RangeError('more classes than the table was sized for');
    const at = KEY * id;
    keys[at] = k0;
    keys[at + 1] = k1;
    keys[at + 2] = k2;
    keys[at + 3] = k3;
    this.slots[s] = id + 1;
    if (2 * this.size > this.slots.length) this.rehash();
    return id;
  }

  /** Frees the lookup (no class is added after). */
  dropSlots(): void {
    this.slots = new Int32Array(0);
  }

  private rehash(): void {
    const slots = new Int32Array(2 * this.slots.length);
    const mask = slots.length - 1;
    for (let id = 0; id < this.size; id++) {
      let s = this.keys[KEY * id + 3]! & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = id + 1;
    }
    this.slots = slots;
  }
}

/** Rows whose codes are copied into the instance at a time. */
const BLOCK_ROWS = 1 << 16;
/** Slots of the kernel's lookup to start with (as ClassTable's). */
const FIRST_SLOTS = 2048;
const HEADER_WORDS = 18;

export const wasmClassSums: ClassSumsKernel = {
  name: 'wasm',
  sum(n, qi, other, mask) {
    const lanes = mask ? SHARD_LANES : PART_LANES;
    const { width, sizes, lanes: ahead } = foldedPrefix(qi);
    const q = qi.codes.length;
    const o = other.codes.length;
    const capacity = Math.max(1, n);
    let slotsMax = FIRST_SLOTS;
    while (slotsMax < 2 * capacity) slotsMax *= 2;
    const blockRows = Math.max(1, Math.min(BLOCK_ROWS, n));
    // The layout: header, folded-ahead keys, domains, hash addresses, hashes, then the classes'
    // keys, sums and lookup, the codes block and the rows' classes.
    const layout = new Regions(HEADER_WORDS);
    const { state } = layout;
    const place = (words: number) => layout.place(words);
    const prefix = place(ahead.length);
    const domains = place(width);
    const qiTable = place(q);
    const otherTable = place(o);
    const qiAt = qi.hashes.map((h, c) => (c < width ? 0 : place(h.length)));
    const otherAt = other.hashes.map((h) => place(h.length));
    const keys = place(KEY * capacity);
    const sums = place(lanes * capacity);
    const slots = place(slotsMax);
    const codes = place((q + o) * blockRows);
    const classOut = mask ? 0 : place(blockRows);
    const { core } = acquireCore();
    try {
      reserve(core, layout.end);
      let words = new Int32Array(core.memory.buffer);
      words.set(ahead, prefix >> 2);
      words.set(sizes.subarray(0, width), domains >> 2);
      qi.hashes.forEach((h, c) => {
        words[(qiTable >> 2) + c] = qiAt[c]!;
        if (c >= width) words.set(h, qiAt[c]! >> 2);
      });
      other.hashes.forEach((h, k) => {
        words[(otherTable >> 2) + k] = otherAt[k]!;
        words.set(h, otherAt[k]! >> 2);
      });
      // The lookup's first slots must be zero; a session before may have left anything there.
      words.fill(0, slots >> 2, (slots >> 2) + FIRST_SLOTS);
      words.set([0, FIRST_SLOTS, q, width, o, lanes, capacity, mask?.[0] ?? 0, mask?.[1] ?? 0], state >> 2);
      words.set([prefix, domains, qiTable, otherTable, keys, sums, slots, codes, classOut], (state >> 2) + 9);
      const classOf = mask ? undefined : new Int32Array(n);
      const columns = [...qi.codes, ...other.codes];
      let size = 0;
      for (let from = 0; from < n; from += blockRows) {
        const rows = Math.min(blockRows, n - from);
        words = new Int32Array(core.memory.buffer);
        columns.forEach((c, i) => {
          words.set(c.subarray(from, from + rows), (codes >> 2) + i * rows);
        });
        size = core.classSums(state, rows);
        if (size < 0) throw new RangeError('more classes than the table was sized for');
        if (classOf) classOf.set(words.subarray(classOut >> 2, (classOut >> 2) + rows), from);
      }
      const memory = new Uint32Array(core.memory.buffer);
      return {
        lanes,
        size,
        keys: memory.slice(keys >> 2, (keys >> 2) + KEY * size),
        sums: memory.slice(sums >> 2, (sums >> 2) + lanes * size),
        classOf,
      };
    } finally {
      releaseCore(core, 0, 0);
    }
  },
};
