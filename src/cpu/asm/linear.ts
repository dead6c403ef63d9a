// y [n, yStride] (columns [0, rows) of each row written) = x [n, K] · Wᵀ for W [rows, K] as stored.
// Each weight row is decoded once into `scratch` (K f32, stays in L1) by ./dequant.ts and dotted with
// every token's x in f32x4 lanes (one token of Q8_0, Q4_0, Q4_K or MLC q4f16_1, decode's matvec, decodes
// each block in registers instead): activations stay f32, so the result differs from the reference's
// double sums only by f32 summation order. Rows are independent: a thread range [row0, row1) gives the
// same values as the whole.
import { F32, MLC_Q4, Q4_0, Q4_K, Q8_0 } from './formats';
import { dequantRow, rowBytes } from './dequant';
import { halfToF32 } from './half';
import { q4kScales } from './k-scales';

/**
 * acc + Σ over 16 byte lanes of v (unsigned, or signed) of ((q + add) · d) · x[0..16): each weight is
 * decoded exactly as the reference decodes it, then multiplied by x, in registers (no scratch row).
 */
@inline function acc16(acc: v128, v: v128, signed: bool, add: v128, d: v128, x: usize): v128 {
  const lo = signed ? i16x8.extend_low_i8x16_s(v) : i16x8.extend_low_i8x16_u(v);
  const hi = signed ? i16x8.extend_high_i8x16_s(v) : i16x8.extend_high_i8x16_u(v);
  let a = acc;
  a = f32x4.add(a, f32x4.mul(f32x4.mul(f32x4.add(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(lo)), add), d), v128.load(x)));
  a = f32x4.add(a, f32x4.mul(f32x4.mul(f32x4.add(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(lo)), add), d), v128.load(x + 16)));
  a = f32x4.add(a, f32x4.mul(f32x4.mul(f32x4.add(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(hi)), add), d), v128.load(x + 32)));
  a = f32x4.add(a, f32x4.mul(f32x4.mul(f32x4.add(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(hi)), add), d), v128.load(x + 48)));
  return a;
}

@inline function lanes(a: v128): f32 {
  return f32x4.extract_lane(a, 0) + f32x4.extract_lane(a, 1) + (f32x4.extract_lane(a, 2) + f32x4.extract_lane(a, 3));
}

/** One token's dot with a Q8_0 / Q4_0 / MLC q4f16_1 row, blocks decoded in registers (decode's matvec). */
function dotBlocks(fmt: i32, row: usize, scales: usize, x: usize, K: i32): f32 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0);
  const zero = f32x4.splat(0), mask = i8x16.splat(15);
  for (let b = 0; b < K >> 5; b++) {
    const xb = x + (<usize>b << 7);
    if (fmt == Q8_0) {
      const p = row + <usize>b * 34;
      const d = f32x4.splat(halfToF32(load<u16>(p)));
      a0 = acc16(a0, v128.load(p + 2), true, zero, d, xb);
      a1 = acc16(a1, v128.load(p + 18), true, zero, d, xb + 64);
    } else if (fmt == Q4_0) {
      const p = row + <usize>b * 18;
      const d = f32x4.splat(halfToF32(load<u16>(p)));
      const v = v128.load(p + 2);
      a0 = acc16(a0, v128.and(v, mask), false, f32x4.splat(-8), d, xb);
      a1 = acc16(a1, i8x16.shr_u(v, 4), false, f32x4.splat(-8), d, xb + 64);
    } else {
      const v = v128.load(row + (<usize>b << 4));
      const d = f32x4.splat(halfToF32(load<u16>(scales + (<usize>b << 1))));
      const lo = v128.and(v, mask), hi = i8x16.shr_u(v, 4);
      a0 = acc16(a0, i8x16.shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), false, f32x4.splat(-7), d, xb);
      a1 = acc16(a1, i8x16.shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), false, f32x4.splat(-7), d, xb + 64);
    }
  }
  return lanes(f32x4.add(a0, a1));
}

/** acc + Σ over 16 byte lanes of v (0..15) of (d · q − m) · x[0..16) (the K-quants' decode, as ./dequant.ts's). */
@inline function affine16(acc: v128, v: v128, d: v128, m: v128, x: usize): v128 {
  const lo = i16x8.extend_low_i8x16_u(v), hi = i16x8.extend_high_i8x16_u(v);
  let a = madd(f32x4.sub(f32x4.mul(d, f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_u(lo))), m), v128.load(x), acc);
  a = madd(f32x4.sub(f32x4.mul(d, f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_u(lo))), m), v128.load(x + 16), a);
  a = madd(f32x4.sub(f32x4.mul(d, f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_u(hi))), m), v128.load(x + 32), a);
  return madd(f32x4.sub(f32x4.mul(d, f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_u(hi))), m), v128.load(x + 48), a);
}

/**
 * One token's dot with a Q4_K row, decoded in registers (decode's matvec): each weight d·sc·q − dmin·m
 * exactly as ./dequant.ts decodes it, the super-block's scales unpacked in SIMD into scratch (64 bytes).
 */
function dotQ4K(row: usize, x: usize, K: i32, scratch: usize): f32 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  const mask = i8x16.splat(15);
  for (let sb = 0; sb < K >> 8; sb++) {
    const p = row + <usize>sb * 144, xs = x + (<usize>sb << 10);
    q4kScales(p, scratch);
    for (let pair = 0; pair < 4; pair++) {
      // sub-block 2·pair: the low nibbles of these 32 bytes; 2·pair + 1: the high ones
      const q = p + 16 + 32 * pair, v0 = v128.load(q), v1 = v128.load(q + 16), xo = xs + (<usize>pair << 8), at = scratch + (<usize>pair << 3);
      const d1 = v128.load32_splat(at), m1 = v128.load32_splat(at + 32), d2 = v128.load32_splat(at + 4), m2 = v128.load32_splat(at + 36);
      a0 = affine16(a0, v128.and(v0, mask), d1, m1, xo);
      a1 = affine16(a1, v128.and(v1, mask), d1, m1, xo + 64);
      a2 = affine16(a2, i8x16.shr_u(v0, 4), d2, m2, xo + 128);
      a3 = affine16(a3, i8x16.shr_u(v1, 4), d2, m2, xo + 192);
    }
  }
  return lanes(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)));
}

/** acc + a·b in f32x4 lanes: one fused multiply-add where the build has relaxed SIMD, else mul then add. */
@inline export function madd(a: v128, b: v128, acc: v128): v128 {
  // relaxed_madd may round once (an FMA: x64 FMA3, arm64 fmla) or twice (mul + add), as the CPU has it;
  // either is within the f32 error the tests allow, and one engine always picks the same on one machine,
  // so 1 and N threads still agree bit for bit. The plain build compiles the else branch only.
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_madd(a, b, acc);
  return f32x4.add(acc, f32x4.mul(a, b));
}

/** Σ a[k]·b[k] over K f32 values, four f32x4 accumulators, then the lanes, then the scalar tail. */
@inline export function dot(a: usize, b: usize, K: i32): f32 {
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
  let k = 0;
  for (; k + 16 <= K; k += 16) {
    const o = <usize>k << 2;
    s0 = madd(v128.load(a + o), v128.load(b + o), s0);
    s1 = madd(v128.load(a + o + 16), v128.load(b + o + 16), s1);
    s2 = madd(v128.load(a + o + 32), v128.load(b + o + 32), s2);
    s3 = madd(v128.load(a + o + 48), v128.load(b + o + 48), s3);
  }
  for (; k + 4 <= K; k += 4) {
    const o = <usize>k << 2;
    s0 = madd(v128.load(a + o), v128.load(b + o), s0);
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
  if (n == 1 && (fmt == Q8_0 || fmt == Q4_0 || fmt == MLC_Q4)) {
    for (let r = row0; r < row1; r++) {
      store<f32>(y + (<usize>r << 2), dotBlocks(fmt, w + <usize>r * rb, fmt == MLC_Q4 ? scales + <usize>r * sb : 0, x, K));
    }
    return;
  }
  if (n == 1 && fmt == Q4_K) {
    for (let r = row0; r < row1; r++) store<f32>(y + (<usize>r << 2), dotQ4K(w + <usize>r * rb, x, K, scratch));
    return;
  }
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
