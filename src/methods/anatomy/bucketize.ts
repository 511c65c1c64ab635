/**
 * Anatomy's bucketization (Xiao & Tao 2006, "Anatomy: simple and effective privacy
 * preservation", Fig. 3):
 *
 * 1. hash the rows into one list per SA value;
 * 2. group creation: while at least l lists are non-empty, take one row from each of the l
 *    largest lists (ties: smaller SA code first) into a new bucket — the row drawn at random;
 * 3. residue assignment: each row left (at most l − 1 of them, of distinct SA values, when no
 *    value is in more than N/l rows) joins a bucket, drawn at random, that does not yet hold
 *    its SA value — among those, one with the fewest residual rows so far (our refinement:
 *    bucket sizes stay l or l + 1 whenever the table allows).
 *
 * Every bucket then holds at least l rows with pairwise distinct SA values, so it is distinct-
 * and entropy-l-diverse. All randomness comes from the `Random` passed in.
 */
import { Heap } from '../../util/heap.ts';
import type { Random } from '../../util/random.ts';

export interface Bucketization {
  /** row → bucket (0-based, in order of creation). */
  readonly bucketOf: Int32Array;
  readonly buckets: number;
  /** bucket → rows. */
  readonly sizes: Int32Array;
  /** Rows placed by the residue-assignment step. */
  readonly residual: number;
}

/** `sa`: the SA code of each row, in [0, domain). `l` ≥ 1; eligibility must have been checked. */
export function anatomize(sa: Int32Array, domain: number, l: number, random: Random): Bucketization {
  const n = sa.length;
  // 1. Hash rows by SA value (CSR), each list in random order; rows are drawn from the end.
  const counts = new Int32Array(domain);
  for (let r = 0; r < n; r++) counts[sa[r]!]!++;
  const start = new Int32Array(domain + 1);
  for (let s = 0; s < domain; s++) start[s + 1] = start[s]! + counts[s]!;
  const lists = new Int32Array(n);
  const fill = start.slice(0, domain);
  for (let r = 0; r < n; r++) lists[fill[sa[r]!]!++] = r;
  for (let s = 0; s < domain; s++) {
    const from = start[s]!;
    const len = counts[s]!;
    for (let i = len - 1; i > 0; i--) {
      const j = random.below(i + 1);
      const t = lists[from + i]!;
      lists[from + i] = lists[from + j]!;
      lists[from + j] = t;
    }
  }
  const remaining = counts.slice();

  // 2. Group creation with a max-heap of SA values by remaining count.
  // SA codes by remaining count descending, then code ascending.
  const heap = new Heap<number>((a, b) => {
    const ka = remaining[a]!;
    const kb = remaining[b]!;
    return ka > kb || (ka === kb && a < b);
  });
  for (let s = 0; s < domain; s++) if (remaining[s]! > 0) heap.push(s);
  const bucketOf = new Int32Array(n).fill(-1);
  const members: number[] = []; // bucket b's SA values at [b*l, (b+1)*l)
  let buckets = 0;
  const taken = new Int32Array(l);
  while (heap.size >= l) {
    for (let i = 0; i < l; i++) taken[i] = heap.pop()!;
    for (let i = 0; i < l; i++) {
      const s = taken[i]!;
      const left = --remaining[s]!;
      bucketOf[lists[start[s]! + left]!] = buckets;
      members.push(s);
    }
    for (let i = 0; i < l; i++) if (remaining[taken[i]!]! > 0) heap.push(taken[i]!);
    buckets++;
  }

  // 3. Residue assignment: each leftover row joins a random bucket without its SA value.
  const extra = new Map<number, number[]>();
  const holds = (b: number, s: number): boolean => {
    for (let i = b * l; i < (b + 1) * l; i++) if (members[i] === s) return true;
    return extra.get(b)?.includes(s) ?? false;
  };
  let residual = 0;
  for (let s = 0; s < domain; s++) {
    while (remaining[s]! > 0) {
      const row = lists[start[s]! + --remaining[s]!]!;
      // Among the buckets without s, those with the fewest residual rows so far (sizes stay l or l + 1
      // whenever possible), one drawn at random.
      let fewest = Number.POSITIVE_INFINITY;
      let free = 0;
      for (let b = 0; b < buckets; b++) {
        if (holds(b, s)) continue;
        const added = extra.get(b)?.length ?? 0;
        if (added < fewest) {
          fewest = added;
          free = 0;
        }
        if (added === fewest) free++;
      }
      if (free === 0) {
        throw new Error('anatomy: no bucket can take a residual row (eligibility was not checked)');
      }
      let pick = random.below(free);
      let b = 0;
      for (; b < buckets; b++)
        if (!holds(b, s) && (extra.get(b)?.length ?? 0) === fewest && pick-- === 0) break;
      bucketOf[row] = b;
      const list = extra.get(b);
      if (list) list.push(s);
      else extra.set(b, [s]);
      residual++;
    }
  }

  const sizes = new Int32Array(buckets);
  for (let r = 0; r < n; r++) sizes[bucketOf[r]!]!++;
  return { bucketOf, buckets, sizes, residual };
}
