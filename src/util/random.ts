import { PpdpError } from '../errors.ts';

/**
 * Draws built on a source of uniform 32-bit words: every generator (this one, and the 4-lane
 * stream of the perturbation kernels) shuffles and picks the same way from its words.
 */
export abstract class UniformDraws {
  /** Next 32 random bits as an unsigned integer. */
  abstract nextU32(): number;

  /** Uniform integer in [0, n), without modulo bias. */
  below(n: number): number {
    if (!(n >= 1 && n <= 2 ** 32)) throw new PpdpError('E_INTERNAL', 'below: n out of range');
    // a mod n as a − ⌊a/n⌋·n: exact for a, n ≤ 2^32 (the quotient's double is never rounded
    // across a whole number), and cheaper than the floating-point remainder. The shuffles of
    // every release draw one per row.
    const limit = 2 ** 32 - (2 ** 32 - Math.floor(2 ** 32 / n) * n);
    for (;;) {
      const x = this.nextU32();
      if (x < limit) return x - Math.floor(x / n) * n;
    }
  }

  /** A uniformly random permutation of 0..n-1 (Fisher–Yates, from the last position down). */
  permutation(n: number): Int32Array {
    const p = new Int32Array(n);
    for (let i = 0; i < n; i++) p[i] = i;
    return this.shuffle(p);
  }

  /**
   * `values` shuffled in place with the draws `permutation(values.length)` makes: position j
   * then holds the value at `permutation(values.length)[j]` (no permutation made to read through).
   */
  shuffle(values: Int32Array): Int32Array {
    for (let i = values.length - 1; i > 0; i--) {
      const j = this.below(i + 1);
      const t = values[i]!;
      values[i] = values[j]!;
      values[j] = t;
    }
    return values;
  }
}

/**
 * Seeded randomness: every random choice ppdp makes (row shuffling, perturbation) draws from
 * this generator, so the same input, spec and seed give a byte-identical release.
 * xoshiro128** seeded through splitmix32.
 */
export class Random extends UniformDraws {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /**
   * A generator from a 128-bit key (four u32 words). Releases draw their streams from keys
   * derived from the seed and the input's content (src/util/keys.ts), never from the
   * published seed alone.
   */
  static fromKey(key: Uint32Array): Random {
    const r = new Random(0);
    r.s0 = key[0]! >>> 0;
    r.s1 = key[1]! >>> 0;
    r.s2 = key[2]! >>> 0;
    r.s3 = key[3]! >>> 0;
    if ((r.s0 | r.s1 | r.s2 | r.s3) === 0) r.s0 = 1; // xoshiro's one forbidden state
    return r;
  }

  constructor(seed: number) {
    super();
    let x = seed >>> 0;
    const next = () => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
  }

  /**
   * The shuffle's draws with the generator's state held in locals: the same words as nextU32
   * and the same choices as below, leaving the same state, without a call and four field
   * writes a row (every release shuffles its rows).
   */
  override shuffle(values: Int32Array): Int32Array {
    // The state held as signed words (the same bits) and the draw given a number before its
    // loop: a word past 2^31, or a draw that may be undefined, is a value V8 boxes on the heap
    // when the loop is inlined into its caller (about 2 MB of garbage a shuffle of 63,000 rows).
    let s0 = this.s0 | 0;
    let s1 = this.s1 | 0;
    let s2 = this.s2 | 0;
    let s3 = this.s3 | 0;
    for (let i = values.length - 1; i > 0; i--) {
      const n = i + 1;
      let x = 0;
      for (;;) {
        const y = Math.imul(s1, 5);
        x = Math.imul((y << 7) | (y >>> 25), 9) >>> 0;
        const t = s1 << 9;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = (s3 << 11) | (s3 >>> 21);
        // below's limit is at least 2^32 - n + 1: a draw under that needs no division for it.
        if (x <= 2 ** 32 - n || x < 2 ** 32 - (2 ** 32 - Math.floor(2 ** 32 / n) * n)) break;
      }
      const j = x - Math.floor(x / n) * n;
      const v = values[i]!;
      values[i] = values[j]!;
      values[j] = v;
    }
    this.s0 = s0 >>> 0;
    this.s1 = s1 >>> 0;
    this.s2 = s2 >>> 0;
    this.s3 = s3 >>> 0;
    return values;
  }

  /** Next 32 random bits as an unsigned integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.s1 << 9) >>> 0;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    this.s0 >>>= 0;
    this.s1 >>>= 0;
    this.s2 >>>= 0;
    return result;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
