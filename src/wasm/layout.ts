import type { CoreExports } from './module.ts';

const PAGE = 65536;

/** The instance's memory grown to at least `bytes`. */
export function reserve(core: CoreExports, bytes: number): WebAssembly.Memory {
  const need = Math.ceil(bytes / PAGE) - core.memory.buffer.byteLength / PAGE;
  if (need > 0) core.memory.grow(need);
  return core.memory;
}

/** `x` rounded up to a multiple of 16 bytes (a v128 load never straddles a region's end). */
export function align16(x: number): number {
  return (x + 15) & ~15;
}

/**
 * A kernel session's memory, laid out from its start: a header of i32 words at `state`, then
 * regions of 32-bit words, each 16-byte aligned (a v128 load never straddles one).
 */
export class Regions {
  /** The header's byte address. */
  readonly state = 16;
  private at: number;

  constructor(headerWords: number) {
    this.at = align16(this.state + 4 * headerWords);
  }

  /** A region of `words` 32-bit words: its byte address. */
  place(words: number): number {
    const here = this.at;
    this.at = align16(this.at + 4 * words);
    return here;
  }

  /** The first byte after every region placed so far. */
  get end(): number {
    return this.at;
  }
}

/**
 * The end of a block of values from `from` (value i is `[offsets[i], offsets[i + 1])`, `n` in
 * all): at most `values` values and `bytes` bytes, but at least one value, however long. The
 * wrappers that copy values as bytes into an instance a block at a time use it.
 */
export function valueBlockEnd(
  offsets: Int32Array,
  from: number,
  n: number,
  values: number,
  bytes: number,
): number {
  let to = Math.min(n, from + values);
  while (to > from + 1 && offsets[to]! - offsets[from]! > bytes) to = from + ((to - from) >> 1);
  return to;
}

/**
 * `values`, each plus `shift`, into `words` from `at` on: offsets rebased as a wrapper copies
 * them into the instance (a loop of its own, which the JIT optimizes alone).
 */
export function placeShifted(words: Int32Array, at: number, values: Int32Array, shift: number): void {
  if (shift === 0) words.set(values, at);
  else for (let k = 0; k < values.length; k++) words[at + k] = values[k]! + shift;
}
