/**
 * The generalization lattice: one node per vector of levels (d1..dm), 0 ≤ di ≤ hi. Nodes are
 * numbered in mixed radix (the first QI varies slowest), so a node is one integer and
 * per-node state lives in flat typed arrays.
 */
export class Lattice {
  readonly size: number;
  readonly m: number;
  /** radix[i] = product of (h_j + 1) for j > i. */
  private readonly radix: number[];
  /**
   * Every node's levels, `digits[id * m + i]`, when the lattice is small enough to tabulate:
   * made on the first level asked (a release at a given node never asks one).
   */
  private digits: Uint16Array | undefined;
  private readonly tabulated: boolean;

  constructor(readonly heights: readonly number[]) {
    this.m = heights.length;
    this.radix = new Array(this.m);
    let size = 1;
    for (let i = this.m - 1; i >= 0; i--) {
      this.radix[i] = size;
      size *= heights[i]! + 1;
    }
    this.size = size;
    // The search asks a node's levels and neighbours many thousand times: a table spares the
    // divisions (8 MiB at most; larger lattices compute them).
    this.tabulated = size * this.m <= DIGIT_TABLE_CELLS && this.heights.every((h) => h < 65536);
  }

  /** Node `id`'s level of QI i. */
  level(id: number, i: number): number {
    if (this.digits) return this.digits[id * this.m + i]!;
    if (this.tabulated) return this.tabulate()[id * this.m + i]!;
    return this.computedLevel(id, i);
  }

  private computedLevel(id: number, i: number): number {
    return Math.floor(id / this.radix[i]!) % (this.heights[i]! + 1);
  }

  private tabulate(): Uint16Array {
    const { size, m } = this;
    const digits = new Uint16Array(size * m);
    for (let id = 0; id < size; id++)
      for (let i = 0; i < m; i++) digits[id * m + i] = this.computedLevel(id, i);
    this.digits = digits;
    return digits;
  }

  /** The node one level up in QI i, or -1 at the top of its hierarchy. */
  up(id: number, i: number): number {
    return this.level(id, i) < this.heights[i]! ? id + this.radix[i]! : -1;
  }

  /** The node one level down in QI i, or -1 at its bottom. */
  down(id: number, i: number): number {
    return this.level(id, i) > 0 ? id - this.radix[i]! : -1;
  }

  index(levels: ArrayLike<number>): number {
    let id = 0;
    for (let i = 0; i < this.m; i++) id += levels[i]! * this.radix[i]!;
    return id;
  }

  levels(id: number): number[] {
    const out = new Array<number>(this.m);
    // (From the table once made; a node's levels alone do not make it.)
    for (let i = 0; i < this.m; i++)
      out[i] = this.digits ? this.digits[id * this.m + i]! : this.computedLevel(id, i);
    return out;
  }

  levelSum(id: number): number {
    let s = 0;
    for (let i = 0; i < this.m; i++) s += this.level(id, i);
    return s;
  }

  /** Σ di/hi: the first tie-break between equally good nodes (docs/definitions.md §6). */
  relativeDistance(id: number): number {
    let s = 0;
    for (let i = 0; i < this.m; i++) {
      const h = this.heights[i]!;
      if (h > 0) s += this.level(id, i) / h;
    }
    return s;
  }

  /** Direct generalizations: one QI one level up. */
  successors(id: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.m; i++) {
      const s = this.up(id, i);
      if (s >= 0) out.push(s);
    }
    return out;
  }

  /** Direct specializations: one QI one level down. */
  predecessors(id: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.m; i++) {
      const p = this.down(id, i);
      if (p >= 0) out.push(p);
    }
    return out;
  }

  /** a ≤ b component-wise. */
  dominatedBy(a: number, b: number): boolean {
    for (let i = 0; i < this.m; i++) if (this.level(a, i) > this.level(b, i)) return false;
    return true;
  }

  get top(): number {
    return this.size - 1;
  }
}

const DIGIT_TABLE_CELLS = 4 * 1024 * 1024;

/**
 * Orders two nodes of equal utility: the smaller Σ di/hi wins, then the lexicographically
 * smaller level vector (docs/definitions.md §6). Returns < 0 when `a` is preferred.
 */
export function compareTieBreak(lattice: Lattice, a: number, b: number): number {
  const ra = lattice.relativeDistance(a);
  const rb = lattice.relativeDistance(b);
  if (Math.abs(ra - rb) > 1e-12) return ra - rb;
  // Ids are mixed radix with the first QI most significant: their order is the level vectors'.
  return a - b;
}

/** Utility values equal up to floating-point noise (metrics are sums of many floats). */
export function nearlyEqual(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}
