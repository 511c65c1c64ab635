/** The plain-TS reference of the table digest's row loop (assembly/digest.ts). */
import { mix32 as keysMix32 } from '../../util/keys.ts';
import { type DigestRowsKernel, LANES as KERNEL_LANES, LANE_OUTPUTS } from './kernel.ts';

// Module-local copies of what the loop uses (see src/data/digest.ts).
const LANES = KERNEL_LANES;
const mix32 = keysMix32;

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
