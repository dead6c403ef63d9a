// y [n, yStride] (columns [0, rows) of each row written) = x [n, K] · Wᵀ for W [rows, K] as stored.
// Each weight row is decoded once into `scratch` (K f32, stays in L1) by ./dequant.ts and dotted with
// every token's x in f32x4 lanes (one token of Q8_0, Q4_0, Q4_K or MLC q4f16_1, decode's matvec, decodes
// each block in registers instead; a prefill takes rows in pairs against tokens in fours, dotTile):
// activations stay f32, so the result differs from the reference's double sums only by f32 summation
// order. Rows are independent: a thread range [row0, row1) gives the same values as the whole.
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
 * Prefill's tile: NR weight rows (a, and b when NR is 2) dotted with 4 tokens' x (x: the first token's;
 * the tokens K floats apart). A weight vector is loaded once for the four tokens and a token's x once for
 * both rows (prefill's f32 dots were bound by their loads: two per multiply-add, and every token's x
 * read from L2 once per row). One accumulator per (row, token), stepping 4 values, then its scalar tail:
 * NR 1 and NR 2 give a row the same bits, so a thread's range, whatever row it starts at, changes nothing.
 * Row a's results land at y, y + yStride·4, … (one per token); row b's 4 bytes after each.
 */
@inline function dotTile(NR: i32, a: usize, b: usize, x: usize, K: i32, y: usize, yStride: i32): void {
  const xs: usize = <usize>K << 2;
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
  let u0 = f32x4.splat(0), u1 = f32x4.splat(0), u2 = f32x4.splat(0), u3 = f32x4.splat(0);
  let k = 0;
  for (; k + 4 <= K; k += 4) {
    const o = <usize>k << 2, wa = v128.load(a + o);
    const x0 = v128.load(x + o), x1 = v128.load(x + xs + o), x2 = v128.load(x + 2 * xs + o), x3 = v128.load(x + 3 * xs + o);
    s0 = madd(wa, x0, s0); s1 = madd(wa, x1, s1); s2 = madd(wa, x2, s2); s3 = madd(wa, x3, s3);
    if (NR == 2) {
      const wb = v128.load(b + o);
      u0 = madd(wb, x0, u0); u1 = madd(wb, x1, u1); u2 = madd(wb, x2, u2); u3 = madd(wb, x3, u3);
    }
  }
  const ys: usize = <usize>yStride << 2;
  store<f32>(y, tail(lanes(s0), a, x, k, K));
  store<f32>(y + ys, tail(lanes(s1), a, x + xs, k, K));
  store<f32>(y + 2 * ys, tail(lanes(s2), a, x + 2 * xs, k, K));
  store<f32>(y + 3 * ys, tail(lanes(s3), a, x + 3 * xs, k, K));
  if (NR == 2) {
    store<f32>(y + 4, tail(lanes(u0), b, x, k, K));
    store<f32>(y + ys + 4, tail(lanes(u1), b, x + xs, k, K));
    store<f32>(y + 2 * ys + 4, tail(lanes(u2), b, x + 2 * xs, k, K));
    store<f32>(y + 3 * ys + 4, tail(lanes(u3), b, x + 3 * xs, k, K));
  }
}

/** acc + Σ a[k]·b[k] for k in [k0, K): the scalar tail of a dot. */
@inline function tail(acc: f32, a: usize, b: usize, k0: i32, K: i32): f32 {
  for (let k = k0; k < K; k++) acc += load<f32>(a + (<usize>k << 2)) * load<f32>(b + (<usize>k << 2));
  return acc;
}

/** Row r of W as f32: W's own (F32), else decoded into dst (K floats). */
@inline function rowAt(fmt: i32, w: usize, scales: usize, r: i32, rb: usize, sb: usize, dst: usize, K: i32): usize {
  if (fmt == F32) return w + <usize>r * rb;
  dequantRow(fmt, w + <usize>r * rb, fmt == MLC_Q4 ? scales + <usize>r * sb : 0, dst, K);
  return dst;
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
  // prefill: rows in pairs (row r even, whatever row0 is: a row's tile never depends on the range), each
  // decoded once into scratch (two rows of K floats), against the tokens in fours (dotTile); the last
  // n % 4 tokens by dot()
  for (let r = row0; r < row1;) {
    const pair = n >= 4 && (r & 1) == 0 && r + 1 < row1;
    const a = rowAt(fmt, w, scales, r, rb, sb, scratch, K), b = pair ? rowAt(fmt, w, scales, r + 1, rb, sb, scratch + (<usize>K << 2), K) : 0;
    let t = 0;
    for (; t + 4 <= n; t += 4) {
      const yt = y + ((<usize>t * <usize>yStride + <usize>r) << 2), xt = x + ((<usize>t * <usize>K) << 2);
      if (pair) dotTile(2, a, b, xt, K, yt, yStride); else dotTile(1, a, 0, xt, K, yt, yStride);
    }
    for (; t < n; t++) {
      const xt = x + ((<usize>t * <usize>K) << 2), yt = y + ((<usize>t * <usize>yStride + <usize>r) << 2);
      store<f32>(yt, dot(a, xt, K));
      if (pair) store<f32>(yt + 4, dot(b, xt, K));
    }
    r += pair ? 2 : 1;
  }
}
