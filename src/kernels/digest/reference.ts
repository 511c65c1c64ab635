/** The plain-TS reference of the table digest's row loop (assembly/digest.ts). */
import { mix32 as keysMix32 } from '../../util/keys.ts';
import {
  type DigestRowsKernel,
  LANES as KERNEL_LANES,
  laneConstant as kernelLaneConstant,
  LANE_OUTPUTS,
  type RawLanesKernel,
} from './kernel.ts';

// Module-local copies of what the loop uses (see src/data/digest.ts).
const LANES = KERNEL_LANES;
const mix32 = keysMix32;
const laneConstant = kernelLaneConstant;

/**
 * Each row's four lanes: from the leading columns' combination, then mixed across the other
 * columns in order; each lane's last mix (with its output constant) added to the sum. The
 * reference of the WASM kernel (assembly/digest.ts), which gives the same sum.
 */
export const tsDigestRows: DigestRowsKernel = (
  { rowCount, codes, lanes: columns, sizes, width, ahead },
  sum,
) => {
  const [out0, out1, out2, out3] = LANE_OUTPUTS as [number, number, number, number];
  let [s0, s1, s2, s3] = [sum[0]!, sum[1]!, sum[2]!, sum[3]!];
  for (let r = 0; r < rowCount; r++) {
    let combination = 0;
    for (let k = 0; k < width; k++) combination = combination * sizes[k]! + codes[k]![r]!;
    const from = LANES * combination;
    let a = ahead[from]!;
    let b = ahead[from + 1]!;
    let c = ahead[from + 2]!;
    let d = ahead[from + 3]!;
    for (let k = width; k < columns.length; k++) {
      const at = codes[k]![r]! * LANES;
      const lanes = columns[k]!;
      // Each lane also takes its neighbour's state: a row's lanes are not independent hashes.
      a = mix32(a ^ lanes[at]! ^ (b >>> 7));
      b = mix32(b ^ lanes[at + 1]! ^ (c >>> 7));
      c = mix32(c ^ lanes[at + 2]! ^ (d >>> 7));
      d = mix32(d ^ lanes[at + 3]! ^ (a >>> 7));
    }
    s0 = (s0 + mix32(a ^ out0)) >>> 0;
    s1 = (s1 + mix32(b ^ out1)) >>> 0;
    s2 = (s2 + mix32(c ^ out2)) >>> 0;
    s3 = (s3 + mix32(d ^ out3)) >>> 0;
  }
  sum.set([s0, s1, s2, s3]);
};

/** Four 32-bit hashes of column `column`'s value `v` (its UTF-16 units), into `out` at `at`. */
export function hashValue(column: number, v: string, out: Uint32Array, at: number): void {
  let a = 0x811c9dc5 ^ column;
  let b = 0x01000193 ^ Math.imul(column + 1, 0x9e3779b9);
  for (let k = 0; k < v.length; k++) {
    const u = v.charCodeAt(k);
    a = Math.imul(a ^ u, 0x01000193);
    b = Math.imul(b ^ u, 0x5bd1e995);
    b ^= b >>> 15;
  }
  valueLanesOf(a, b, v.length, out, at);
}

/** A value's lanes from its two running hashes and its length in UTF-16 units. */
function valueLanesOf(a: number, b: number, length: number, out: Uint32Array, at: number): void {
  a = mix32(a ^ length);
  b = mix32(b ^ Math.imul(length, 0xcc9e2d51));
  for (let l = 0; l < LANES; l++) out[at + l] = mix32(a + Math.imul(l + 1, b) + laneConstant(l)) >>> 0;
}

/**
 * Each row's lanes of a raw column (column `column`), as hashValue gives them for the row's
 * value: an all-ASCII value's UTF-8 bytes are its UTF-16 units, so they are hashed as they are;
 * only a value with other bytes is decoded.
 */
export const tsRawLanes: RawLanesKernel = (column, { offsets, bytes }) => {
  const n = offsets.length - 1;
  const out = new Uint32Array(n * LANES);
  let text: Buffer | undefined;
  for (let r = 0; r < n; r++) {
    const start = offsets[r]!;
    const end = offsets[r + 1]!;
    let a = 0x811c9dc5 ^ column;
    let b = 0x01000193 ^ Math.imul(column + 1, 0x9e3779b9);
    let k = start;
    for (; k < end; k++) {
      const u = bytes[k]!;
      if (u >= 0x80) break;
      a = Math.imul(a ^ u, 0x01000193);
      b = Math.imul(b ^ u, 0x5bd1e995);
      b ^= b >>> 15;
    }
    if (k === end) valueLanesOf(a, b, end - start, out, r * LANES);
    else {
      text ??= Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      hashValue(column, text.toString('utf8', start, end), out, r * LANES);
    }
  }
  return out;
};
