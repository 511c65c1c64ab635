// Randomized response on one column: every cell is replaced by a category drawn from its
// column of a distortion matrix. The wrapper (src/kernels/perturb/wasm.ts) owns the layout and
// validates every code before the unchecked loops below.
//
// Layout (byte pointers):
//   codes   n i32 original category codes, 0 ≤ code < d
//   out     n i32 released category codes
//   thr     d rows of `stride` u32 (stride a multiple of 4, ≥ d − 1); row v holds the cumulative
//           thresholds of matrix column v: thr[v][j] = round(2^31 · Σ_{u ≤ j} P[u][v]) for
//           j < d − 1, padded with 2^31 (never reached)
//   state   16 u32: xoshiro128** state of 4 lanes, word-major (s0 of lanes 0..3, then s1, s2, s3)
//
// The stream: the 4 lanes advance together, one block of 4 outputs per step; cell i uses
// lane i % 4 of block ⌊i / 4⌋ and a last partial block discards its unused outputs. With
// x = output >>> 1 (31 bits), the released code is the number of thresholds of row `code`
// that are ≤ x. The TS reference (src/kernels/perturb/reference.ts) computes the same stream.

// @ts-expect-error: decorator
@inline
function rotl32(x: u32, k: u32): u32 {
  return (x << k) | (x >>> (32 - k));
}

// @ts-expect-error: decorator
@inline
function pickScalar(thr: usize, stride: i32, code: i32, x: u32): i32 {
  const row = thr + ((<usize>(code * stride)) << 2);
  let u = 0;
  for (let j = 0; j < stride; j++) u += i32(load<u32>(row + ((<usize>j) << 2)) <= x);
  return u;
}

/** Scalar kernel: the 4 lanes advanced one after the other. */
export function perturb(codes: usize, out: usize, n: i32, thr: usize, stride: i32, state: usize): void {
  let a0 = load<u32>(state, 0);
  let a1 = load<u32>(state, 4);
  let a2 = load<u32>(state, 8);
  let a3 = load<u32>(state, 12);
  let b0 = load<u32>(state, 16);
  let b1 = load<u32>(state, 20);
  let b2 = load<u32>(state, 24);
  let b3 = load<u32>(state, 28);
  let c0 = load<u32>(state, 32);
  let c1 = load<u32>(state, 36);
  let c2 = load<u32>(state, 40);
  let c3 = load<u32>(state, 44);
  let e0 = load<u32>(state, 48);
  let e1 = load<u32>(state, 52);
  let e2 = load<u32>(state, 56);
  let e3 = load<u32>(state, 60);
  for (let i = 0; i < n; i += 4) {
    const o0 = rotl32(b0 * 5, 7) * 9;
    const o1 = rotl32(b1 * 5, 7) * 9;
    const o2 = rotl32(b2 * 5, 7) * 9;
    const o3 = rotl32(b3 * 5, 7) * 9;
    let t = b0 << 9;
    c0 ^= a0;
    e0 ^= b0;
    b0 ^= c0;
    a0 ^= e0;
    c0 ^= t;
    e0 = rotl32(e0, 11);
    t = b1 << 9;
    c1 ^= a1;
    e1 ^= b1;
    b1 ^= c1;
    a1 ^= e1;
    c1 ^= t;
    e1 = rotl32(e1, 11);
    t = b2 << 9;
    c2 ^= a2;
    e2 ^= b2;
    b2 ^= c2;
    a2 ^= e2;
    c2 ^= t;
    e2 = rotl32(e2, 11);
    t = b3 << 9;
    c3 ^= a3;
    e3 ^= b3;
    b3 ^= c3;
    a3 ^= e3;
    c3 ^= t;
    e3 = rotl32(e3, 11);
    const p = codes + ((<usize>i) << 2);
    const q = out + ((<usize>i) << 2);
    store<i32>(q, pickScalar(thr, stride, load<i32>(p), o0 >>> 1));
    if (i + 1 < n) store<i32>(q, pickScalar(thr, stride, load<i32>(p, 4), o1 >>> 1), 4);
    if (i + 2 < n) store<i32>(q, pickScalar(thr, stride, load<i32>(p, 8), o2 >>> 1), 8);
    if (i + 3 < n) store<i32>(q, pickScalar(thr, stride, load<i32>(p, 12), o3 >>> 1), 12);
  }
  store<u32>(state, a0, 0);
  store<u32>(state, a1, 4);
  store<u32>(state, a2, 8);
  store<u32>(state, a3, 12);
  store<u32>(state, b0, 16);
  store<u32>(state, b1, 20);
  store<u32>(state, b2, 24);
  store<u32>(state, b3, 28);
  store<u32>(state, c0, 32);
  store<u32>(state, c1, 36);
  store<u32>(state, c2, 40);
  store<u32>(state, c3, 44);
  store<u32>(state, e0, 48);
  store<u32>(state, e1, 52);
  store<u32>(state, e2, 56);
  store<u32>(state, e3, 60);
}

// @ts-expect-error: decorator
@inline
function rotlx4(x: v128, k: i32): v128 {
  return v128.or(i32x4.shl(x, k), i32x4.shr_u(x, 32 - k));
}

// @ts-expect-error: decorator
@inline
function pickSimd(thr: usize, stride: i32, code: i32, x: u32): i32 {
  const row = thr + ((<usize>(code * stride)) << 2);
  const xs = i32x4.splat(x);
  let acc = i32x4.splat(0);
  // le_u sets a lane to −1 where the threshold is ≤ x: subtracting counts them.
  for (let j = 0; j < stride; j += 4) {
    acc = i32x4.sub(acc, i32x4.le_u(v128.load(row + ((<usize>j) << 2)), xs));
  }
  return (
    i32x4.extract_lane(acc, 0) +
    i32x4.extract_lane(acc, 1) +
    i32x4.extract_lane(acc, 2) +
    i32x4.extract_lane(acc, 3)
  );
}

/** SIMD kernel: the 4 lanes in one v128 each (same stream as `perturb`). */
export function perturbSimd(codes: usize, out: usize, n: i32, thr: usize, stride: i32, state: usize): void {
  let s0 = v128.load(state, 0);
  let s1 = v128.load(state, 16);
  let s2 = v128.load(state, 32);
  let s3 = v128.load(state, 48);
  const five = i32x4.splat(5);
  const nine = i32x4.splat(9);
  for (let i = 0; i < n; i += 4) {
    const o = i32x4.shr_u(i32x4.mul(rotlx4(i32x4.mul(s1, five), 7), nine), 1);
    const t = i32x4.shl(s1, 9);
    s2 = v128.xor(s2, s0);
    s3 = v128.xor(s3, s1);
    s1 = v128.xor(s1, s2);
    s0 = v128.xor(s0, s3);
    s2 = v128.xor(s2, t);
    s3 = rotlx4(s3, 11);
    const p = codes + ((<usize>i) << 2);
    const q = out + ((<usize>i) << 2);
    store<i32>(q, pickSimd(thr, stride, load<i32>(p), <u32>i32x4.extract_lane(o, 0)));
    if (i + 1 < n) store<i32>(q, pickSimd(thr, stride, load<i32>(p, 4), <u32>i32x4.extract_lane(o, 1)), 4);
    if (i + 2 < n) store<i32>(q, pickSimd(thr, stride, load<i32>(p, 8), <u32>i32x4.extract_lane(o, 2)), 8);
    if (i + 3 < n) store<i32>(q, pickSimd(thr, stride, load<i32>(p, 12), <u32>i32x4.extract_lane(o, 3)), 12);
  }
  v128.store(state, s0, 0);
  v128.store(state, s1, 16);
  v128.store(state, s2, 32);
  v128.store(state, s3, 48);
}
