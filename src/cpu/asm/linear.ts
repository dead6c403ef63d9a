// y [n, yStride] (columns [0, rows) of each row written) = x [n, K] · Wᵀ for W [rows, K] as stored.
// Each weight row is decoded once into `scratch` (K f32, stays in L1) by ./dequant.ts and dotted with
// every token's x in f32x4 lanes: activations stay f32, so the result differs from the reference's
// double sums only by f32 summation order. Rows are independent: a thread range [row0, row1) gives the
// same values as the whole.
import { F32, MLC_Q4 } from './formats';
import { dequantRow, rowBytes } from './dequant';

/** Σ a[k]·b[k] over K f32 values, four f32x4 accumulators, then the lanes, then the scalar tail. */
@inline export function dot(a: usize, b: usize, K: i32): f32 {
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
  let k = 0;
  for (; k + 16 <= K; k += 16) {
    const o = <usize>k << 2;
    s0 = f32x4.add(s0, f32x4.mul(v128.load(a + o), v128.load(b + o)));
    s1 = f32x4.add(s1, f32x4.mul(v128.load(a + o + 16), v128.load(b + o + 16)));
    s2 = f32x4.add(s2, f32x4.mul(v128.load(a + o + 32), v128.load(b + o + 32)));
    s3 = f32x4.add(s3, f32x4.mul(v128.load(a + o + 48), v128.load(b + o + 48)));
  }
  for (; k + 4 <= K; k += 4) {
    const o = <usize>k << 2;
    s0 = f32x4.add(s0, f32x4.mul(v128.load(a + o), v128.load(b + o)));
  }
  const s = f32x4.add(f32x4.add(s0, s1), f32x4.add(s2, s3));
  let acc = f32x4.extract_lane(s, 0) + f32x4.extract_lane(s, 1) + (f32x4.extract_lane(s, 2) + f32x4.extract_lane(s, 3));
  for (; k < K; k++) acc += load<f32>(a + (<usize>k << 2)) * load<f32>(b + (<usize>k << 2));
  return acc;
}

/**
 * Rows [row0, row1) of W (w: row 0's bytes; scales: MLC q4f16_1's scale rows) times n tokens of x.
 * y: the output of row 0, token 0; token t's row r lands at y + (t·yStride + r)·4.
 */
export function linear(fmt: i32, w: usize, scales: usize, x: usize, y: usize, row0: i32, row1: i32, K: i32, n: i32, yStride: i32, scratch: usize): void {
  const rb = <usize>rowBytes(fmt, K);
  const sb: usize = <usize>(K >> 5) << 1;
  for (let r = row0; r < row1; r++) {
    let row: usize;
    if (fmt == F32) row = w + <usize>r * rb;
    else {
      dequantRow(fmt, w + <usize>r * rb, fmt == MLC_Q4 ? scales + <usize>r * sb : 0, scratch, K);
      row = scratch;
    }
    for (let t = 0; t < n; t++) {
      store<f32>(y + ((<usize>t * <usize>yStride + <usize>r) << 2), dot(row, x + ((<usize>t * <usize>K) << 2), K));
    }
  }
}
