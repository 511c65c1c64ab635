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

  constructor(readonly heights: readonly number[]) {
    this.m = heights.length;
    this.radix = new Array(this.m);
    let size = 1;
    for (let i = this.m - 1; i >= 0; i--) {
      this.radix[i] = size;
      size *= heights[i]! + 1;
    }
    this.size = size;
  }

  index(levels: ArrayLike<number>): number {
    let id = 0;
    for (let i = 0; i < this.m; i++) id += levels[i]! * this.radix[i]!;
    return id;
  }

  levels(id: number): number[] {
    const out = new Array<number>(this.m);
    for (let i = 0; i < this.m; i++) {
      out[i] = Math.floor(id / this.radix[i]!) % (this.heights[i]! + 1);
    }
    return out;
  }

  levelSum(id: number): number {
    let s = 0;
    for (let i = 0; i < this.m; i++) s += Math.floor(id / this.radix[i]!) % (this.heights[i]! + 1);
    return s;
  }

  /** Σ di/hi: the first tie-break between equally good nodes (SPEC §6). */
  relativeDistance(id: number): number {
    let s = 0;
    for (let i = 0; i < this.m; i++) {
      const h = this.heights[i]!;
      if (h > 0) s += (Math.floor(id / this.radix[i]!) % (h + 1)) / h;
    }
    return s;
  }

  /** Direct generalizations: one QI one level up. */
  successors(id: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.m; i++) {
      if (Math.floor(id / this.radix[i]!) % (this.heights[i]! + 1) < this.heights[i]!)
        out.push(id + this.radix[i]!);
    }
    return out;
  }

  /** Direct specializations: one QI one level down. */
  predecessors(id: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.m; i++) {
      if (Math.floor(id / this.radix[i]!) % (this.heights[i]! + 1) > 0) out.push(id - this.radix[i]!);
    }
    return out;
  }

  /** a ≤ b component-wise. */
  dominatedBy(a: number, b: number): boolean {
    for (let i = 0; i < this.m; i++) {
      const r = this.radix[i]!;
      const base = this.heights[i]! + 1;
      if (Math.floor(a / r) % base > Math.floor(b / r) % base) return false;
    }
    return true;
  }

  get top(): number {
    return this.size - 1;
  }
}

/**
 * Orders two nodes of equal utility: the smaller Σ di/hi wins, then the lexicographically
 * smaller level vector (SPEC §6). Returns < 0 when `a` is preferred.
 */
export function compareTieBreak(lattice: Lattice, a: number, b: number): number {
  const ra = lattice.relativeDistance(a);
  const rb = lattice.relativeDistance(b);
  if (Math.abs(ra - rb) > 1e-12) return ra - rb;
  const la = lattice.levels(a);
  const lb = lattice.levels(b);
  for (let i = 0; i < la.length; i++) if (la[i] !== lb[i]) return la[i]! - lb[i]!;
  return 0;
}

/** Utility values equal up to floating-point noise (metrics are sums of many floats). */
export function nearlyEqual(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}
