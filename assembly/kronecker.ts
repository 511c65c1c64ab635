// One mode of a Kronecker product applied to a tensor: (M_0 ⊗ … ⊗ M_{k−1})·x is k calls, one
// per mode, never forming the product (docs/definitions.md §5). The tensor is row-major (last index fastest)
// and seen, for the mode at hand, as [left, d, right]:
//
//   dst[l, u, r] = Σ_v M[u][v] · src[l, v, r]     (v ascending, from 0)
//
// `mt` is Mᵀ row-major (mt[v·d + u] = M[u][v]), f64. src and dst must not overlap. Every
// output sums its terms in the same order as the TS reference (src/kernels/kronecker/reference.ts),
// so both give bit-identical results: the SIMD lanes run over r (or over u when right = 1),
// never across the sum.

export function kronMode(src: usize, dst: usize, left: i32, d: i32, right: i32, mt: usize): void {
  if (right == 1) {
    kronLast(src, dst, left, d, mt);
    return;
  }
  const rowBytes = (<usize>right) << 3;
  const pairs = right & ~1;
  for (let l = 0; l < left; l++) {
    const srcBlock = src + <usize>l * <usize>d * rowBytes;
    const dstBlock = dst + <usize>l * <usize>d * rowBytes;
    for (let u = 0; u < d; u++) {
      const out = dstBlock + <usize>u * rowBytes;
      memory.fill(out, 0, rowBytes);
      for (let v = 0; v < d; v++) {
        const m = load<f64>(mt + ((<usize>(v * d + u)) << 3));
        const inp = srcBlock + <usize>v * rowBytes;
        const ms = f64x2.splat(m);
        let r = 0;
        for (; r < pairs; r += 2) {
          const off = (<usize>r) << 3;
          v128.store(out + off, f64x2.add(v128.load(out + off), f64x2.mul(ms, v128.load(inp + off))));
        }
        if (r < right) {
          const off = (<usize>r) << 3;
          store<f64>(out + off, load<f64>(out + off) + m * load<f64>(inp + off));
        }
      }
    }
  }
}

// right = 1: dst[l, u] = Σ_v M[u][v]·src[l, v], two u per SIMD lane pair (Mᵀ rows are contiguous in u).
function kronLast(src: usize, dst: usize, left: i32, d: i32, mt: usize): void {
  const pairs = d & ~1;
  for (let l = 0; l < left; l++) {
    const inp = src + ((<usize>(l * d)) << 3);
    const out = dst + ((<usize>(l * d)) << 3);
    let u = 0;
    for (; u < pairs; u += 2) {
      let acc = f64x2.splat(0);
      for (let v = 0; v < d; v++) {
        const x = f64x2.splat(load<f64>(inp + ((<usize>v) << 3)));
        acc = f64x2.add(acc, f64x2.mul(v128.load(mt + ((<usize>(v * d + u)) << 3)), x));
      }
      v128.store(out + ((<usize>u) << 3), acc);
    }
    if (u < d) {
      let acc: f64 = 0;
      for (let v = 0; v < d; v++) {
        acc += load<f64>(mt + ((<usize>(v * d + u)) << 3)) * load<f64>(inp + ((<usize>v) << 3));
      }
      store<f64>(out + ((<usize>u) << 3), acc);
    }
  }
}

// A mode whose matrix is a·I + b·J (every distortion matrix of the retention and uniform forms,
// their inverses and their element-wise squares): O(D) instead of O(D·d).
//
//   s[l, r] = Σ_v src[l, v, r]   (v ascending, from 0);   dst[l, u, r] = a·src[l, u, r] + b·s[l, r]
//
// s is accumulated in dst's row u = 0, which is written last.
export function kronModeStructured(src: usize, dst: usize, left: i32, d: i32, right: i32, a: f64, b: f64): void {
  const rowBytes = (<usize>right) << 3;
  const pairs = right & ~1;
  const as = f64x2.splat(a);
  const bs = f64x2.splat(b);
  for (let l = 0; l < left; l++) {
    const srcBlock = src + <usize>l * <usize>d * rowBytes;
    const dstBlock = dst + <usize>l * <usize>d * rowBytes;
    memory.fill(dstBlock, 0, rowBytes);
    for (let v = 0; v < d; v++) {
      const inp = srcBlock + <usize>v * rowBytes;
      let r = 0;
      for (; r < pairs; r += 2) {
        const off = (<usize>r) << 3;
        v128.store(dstBlock + off, f64x2.add(v128.load(dstBlock + off), v128.load(inp + off)));
      }
      if (r < right) {
        const off = (<usize>r) << 3;
        store<f64>(dstBlock + off, load<f64>(dstBlock + off) + load<f64>(inp + off));
      }
    }
    for (let u = d - 1; u >= 0; u--) {
      const inp = srcBlock + <usize>u * rowBytes;
      const out = dstBlock + <usize>u * rowBytes;
      let r = 0;
      for (; r < pairs; r += 2) {
        const off = (<usize>r) << 3;
        v128.store(
          out + off,
          f64x2.add(f64x2.mul(as, v128.load(inp + off)), f64x2.mul(bs, v128.load(dstBlock + off))),
        );
      }
      if (r < right) {
        const off = (<usize>r) << 3;
        store<f64>(out + off, a * load<f64>(inp + off) + b * load<f64>(dstBlock + off));
      }
    }
  }
}
