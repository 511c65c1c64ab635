/** The plain-TS loop of the gather of values' bytes (kernel.ts), and the copy of one value it makes. */
import type { GatherBytesKernel, ShuffleBytesKernel } from './kernel.ts';

export const tsGatherBytes: GatherBytesKernel = (pieces, targets, out) => {
  const into = viewOf(out);
  let base = 0;
  for (const { offsets, bytes } of pieces) {
    const from = viewOf(bytes);
    const n = offsets.length - 1;
    for (let i = 0; i < n; i++) {
      const at = targets[base + i]!;
      if (at >= 0) copyValue(bytes, from, offsets[i]!, offsets[i + 1]!, out, into, at);
    }
    base += n;
  }
};

/** A view of `bytes` for copying 4 bytes at a time. */
export function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * `from[start, end)` to `to` at `at`: short values 4 bytes at a time through views (`fromView`,
 * `toView` over `from`, `to`), the last few byte by byte. A typed array's set() makes a
 * subarray first, which costs more than copying a value of up to ~100 bytes (a note, a
 * timestamp) in a loop.
 */
export function copyValue(
  from: Uint8Array,
  fromView: DataView,
  start: number,
  end: number,
  to: Uint8Array,
  toView: DataView,
  at: number,
): void {
  if (end - start > 96) {
    to.set(from.subarray(start, end), at);
    return;
  }
  for (; start + 4 <= end; start += 4, at += 4) toView.setInt32(at, fromView.getInt32(start, true), true);
  while (start < end) to[at++] = from[start++]!;
}

/** The plain-TS shuffle of values as bytes (assembly/gather-bytes.ts, shufflePlaces, then the writes). */
export const tsShuffleBytes: ShuffleBytesKernel = (pieces, rows) => {
  const n = pieces.reduce((sum, p) => sum + p.offsets.length - 1, 0);
  const m = rows.length;
  const lengths = new Int32Array(n);
  for (let p = 0, at = 0; p < pieces.length; p++) {
    const { offsets } = pieces[p]!;
    const count = offsets.length - 1;
    for (let r = 0; r < count; r++) lengths[at + r] = offsets[r + 1]! - offsets[r]!;
    at += count;
  }
  const out = new Int32Array(m + 1);
  let total = 0;
  for (let j = 0; j < m; j++) {
    total += lengths[rows[j]!]!;
    out[j + 1] = total;
  }
  const to = new Uint8Array(total);
  // Where each joined value goes (-1: nowhere); a row asked for twice cannot be written once.
  const target = lengths.fill(-1);
  for (let j = 0; j < m; j++) {
    const r = rows[j]!;
    if (target[r] !== -1) return undefined;
    target[r] = out[j]!;
  }
  tsGatherBytes(pieces, target, to);
  return { offsets: out, bytes: to };
};
