// The integer linears: y [n, yStride] (columns [0, rows) of each token written) = x · Wᵀ with x already
// quantized per 32-block by ./quantize.ts (i16 q, f32 d, f32 s = d·Σq) and W read as stored. Each weight
// block is widened once to i16x8 and dotted against every token of a tile (i32x4.dot_i16x8_s: exact
// integer sums), then scaled once per block: Σ_b f32(dw_b · dx_b) · isum_b in f32x4 lanes. Formats:
// Q8_0, Q4_0, Q4_K, Q6_K (linearQ8Covers); the others run the f32 path (./linear.ts).
// Prefill (n > 1): tokens in tiles of 4, so a decoded weight block serves 4 tokens from registers, and a
// row's blocks stay in L1 over all the tiles while the quantized x (n·K·2 bytes) streams from L2.
// Rows are independent: a thread range [row0, row1) gives the same values as the whole, bit for bit.
// Exactness: the integer sums are exact; the result differs from x·Wᵀ in f32 by the activations'
// quantization (|x − d·q| ≤ d/2 per value, d = amax/127 of its block) plus f32 rounding of the scaling.
import { Q4_0, Q4_K, Q6_K, Q8_0 } from './formats';
import { rowBytes } from './dequant';
import { halfToF32 } from './half';

/** Whether the integer path reads format fmt (the engine uses the f32 path for the others). */
export function linearQ8Covers(fmt: i32): bool {
  return fmt == Q8_0 || fmt == Q4_0 || fmt == Q4_K || fmt == Q6_K;
}

/** Σ of 32 products of weights w0..w3 (i16x8, values 0..31 of a block) with x's i16 at xp, as i32x4. */
@inline function dot32(w0: v128, w1: v128, w2: v128, w3: v128, xp: usize): v128 {
  let s = i32x4.dot_i16x8_s(w0, v128.load(xp));
  s = i32x4.add(s, i32x4.dot_i16x8_s(w1, v128.load(xp + 16)));
  s = i32x4.add(s, i32x4.dot_i16x8_s(w2, v128.load(xp + 32)));
  return i32x4.add(s, i32x4.dot_i16x8_s(w3, v128.load(xp + 48)));
}

/** Σ of 16 products (w0, w1: values 0..15) with x's i16 at xp, as i32x4. */
@inline function dot16(w0: v128, w1: v128, xp: usize): v128 {
  return i32x4.add(i32x4.dot_i16x8_s(w0, v128.load(xp)), i32x4.dot_i16x8_s(w1, v128.load(xp + 16)));
}

@inline function scaled(acc: v128, isum: v128, f: f32): v128 {
  return f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(isum), f32x4.splat(f)));
}

@inline function lanes(a: v128): f32 {
  return f32x4.extract_lane(a, 0) + f32x4.extract_lane(a, 1) + (f32x4.extract_lane(a, 2) + f32x4.extract_lane(a, 3));
}

/**
 * One row of a 32-block format (Q8_0, Q4_0) against NT (1..4, a constant after inlining) tokens from
 * token t. xq: the quantized activations; dAt their scales; y: this row's output of token 0.
 */
@inline function rowTile32(fmt: i32, NT: i32, row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, yStride: i32): void {
  const B = K >> 5;
  const xs: usize = <usize>K << 1, ds: usize = <usize>B << 2;
  const x0 = xq + <usize>t * xs, d0 = dAt + <usize>(t * B) * 4;
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  const mask = i8x16.splat(15), eight = i8x16.splat(8);
  for (let b = 0; b < B; b++) {
    let w0: v128, w1: v128, w2: v128, w3: v128, dw: f32;
    if (fmt == Q8_0) {
      const p = row + <usize>b * 34;
      dw = halfToF32(load<u16>(p));
      const u = v128.load(p + 2), v = v128.load(p + 18);
      w0 = i16x8.extend_low_i8x16_s(u); w1 = i16x8.extend_high_i8x16_s(u);
      w2 = i16x8.extend_low_i8x16_s(v); w3 = i16x8.extend_high_i8x16_s(v);
    } else {
      const p = row + <usize>b * 18;
      dw = halfToF32(load<u16>(p));
      const v = v128.load(p + 2);
      const lo = i8x16.sub(v128.and(v, mask), eight), hi = i8x16.sub(i8x16.shr_u(v, 4), eight);
      w0 = i16x8.extend_low_i8x16_s(lo); w1 = i16x8.extend_high_i8x16_s(lo);
      w2 = i16x8.extend_low_i8x16_s(hi); w3 = i16x8.extend_high_i8x16_s(hi);
    }
    const xo = <usize>b << 6, dO = <usize>b << 2;
    a0 = scaled(a0, dot32(w0, w1, w2, w3, x0 + xo), dw * load<f32>(d0 + dO));
    if (NT > 1) a1 = scaled(a1, dot32(w0, w1, w2, w3, x0 + xs + xo), dw * load<f32>(d0 + ds + dO));
    if (NT > 2) a2 = scaled(a2, dot32(w0, w1, w2, w3, x0 + 2 * xs + xo), dw * load<f32>(d0 + 2 * ds + dO));
    if (NT > 3) a3 = scaled(a3, dot32(w0, w1, w2, w3, x0 + 3 * xs + xo), dw * load<f32>(d0 + 3 * ds + dO));
  }
  const ys: usize = <usize>yStride << 2, yt = y + <usize>t * ys;
  store<f32>(yt, lanes(a0));
  if (NT > 1) store<f32>(yt + ys, lanes(a1));
  if (NT > 2) store<f32>(yt + 2 * ys, lanes(a2));
  if (NT > 3) store<f32>(yt + 3 * ys, lanes(a3));
}

/** Q4_K sub-block s's 6-bit scale (low 8 bits) and min (next 8) (as ./dequant.ts reads them). */
@inline function scaleMin(p: usize, s: i32): u32 {
  if (s < 4) return (<u32>load<u8>(p + s) & 63) | ((<u32>load<u8>(p + s + 4) & 63) << 8);
  const sc = (<u32>load<u8>(p + s + 4) & 15) | ((<u32>load<u8>(p + s - 4) >> 6) << 4);
  const m = (<u32>load<u8>(p + s + 4) >> 4) | ((<u32>load<u8>(p + s) >> 6) << 4);
  return sc | (m << 8);
}

/**
 * One Q4_K row against NT tokens: w = d·sc·q − dmin·m per 32-value sub-block, so a sub-block adds
 * f32(d·sc·dx)·Σ q·qx to the lanes and dmin·m·s (s = dx·Σqx, from the quantizer) to a scalar taken off.
 */
@inline function rowTileQ4K(NT: i32, row: usize, xq: usize, dAt: usize, sAt: usize, t: i32, K: i32, y: usize, yStride: i32): void {
  const B = K >> 5;
  const xs: usize = <usize>K << 1, ds: usize = <usize>B << 2;
  const x0 = xq + <usize>t * xs, d0 = dAt + <usize>(t * B) * 4, s0 = sAt + <usize>(t * B) * 4;
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let m0: f32 = 0, m1: f32 = 0, m2: f32 = 0, m3: f32 = 0;
  const mask = i8x16.splat(15);
  for (let sb = 0; sb < K >> 8; sb++) {
    const p = row + <usize>sb * 144;
    const d = halfToF32(load<u16>(p)), dmin = halfToF32(load<u16>(p + 2));
    for (let s = 0; s < 8; s++) {
      const sm = scaleMin(p + 4, s);
      const dsc = d * <f32>(sm & 255), dm = dmin * <f32>(sm >> 8);
      const q = p + 16 + 32 * (s >> 1);
      let u = v128.load(q), v = v128.load(q + 16);
      if (s & 1) { u = i8x16.shr_u(u, 4); v = i8x16.shr_u(v, 4); } else { u = v128.and(u, mask); v = v128.and(v, mask); }
      const w0 = i16x8.extend_low_i8x16_u(u), w1 = i16x8.extend_high_i8x16_u(u);
      const w2 = i16x8.extend_low_i8x16_u(v), w3 = i16x8.extend_high_i8x16_u(v);
      const blk = (sb << 3) + s, xo = <usize>blk << 6, dO = <usize>blk << 2;
      a0 = scaled(a0, dot32(w0, w1, w2, w3, x0 + xo), dsc * load<f32>(d0 + dO));
      m0 += dm * load<f32>(s0 + dO);
      if (NT > 1) { a1 = scaled(a1, dot32(w0, w1, w2, w3, x0 + xs + xo), dsc * load<f32>(d0 + ds + dO)); m1 += dm * load<f32>(s0 + ds + dO); }
      if (NT > 2) { a2 = scaled(a2, dot32(w0, w1, w2, w3, x0 + 2 * xs + xo), dsc * load<f32>(d0 + 2 * ds + dO)); m2 += dm * load<f32>(s0 + 2 * ds + dO); }
      if (NT > 3) { a3 = scaled(a3, dot32(w0, w1, w2, w3, x0 + 3 * xs + xo), dsc * load<f32>(d0 + 3 * ds + dO)); m3 += dm * load<f32>(s0 + 3 * ds + dO); }
    }
  }
  const ys: usize = <usize>yStride << 2, yt = y + <usize>t * ys;
  store<f32>(yt, lanes(a0) - m0);
  if (NT > 1) store<f32>(yt + ys, lanes(a1) - m1);
  if (NT > 2) store<f32>(yt + 2 * ys, lanes(a2) - m2);
  if (NT > 3) store<f32>(yt + 3 * ys, lanes(a3) - m3);
}

/**
 * One Q6_K row against NT tokens: w = d·sc·(q − 32), one i8 scale per 16 values, so the two halves of a
 * 32-block are combined in integers (sc₀·Σ₀ + sc₁·Σ₁, exact) and scaled once by f32(d·dx).
 */
@inline function rowTileQ6K(NT: i32, row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, yStride: i32): void {
  const B = K >> 5;
  const xs: usize = <usize>K << 1, ds: usize = <usize>B << 2;
  const x0 = xq + <usize>t * xs, d0 = dAt + <usize>(t * B) * 4;
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  const low = i8x16.splat(15), two = i8x16.splat(3), off = i8x16.splat(32);
  for (let sb = 0; sb < K >> 8; sb++) {
    const p = row + <usize>sb * 210;
    const d = halfToF32(load<u16>(p + 208));
    for (let h = 0; h < 2; h++) {
      const ql = p + 64 * h, qh = p + 128 + 32 * h, sc = p + 192 + 8 * h;
      // quarter qi of this half: values 32·qi + 16·j + 0..15 from (ql, qh) bytes j·16.., scale sc[j + 2·qi]
      for (let qi = 0; qi < 4; qi++) {
        const aAt = ql + ((qi & 1) ? 32 : 0), shift = 2 * qi;
        const lo0 = v128.load(aAt), lo1 = v128.load(aAt + 16), hb0 = v128.load(qh), hb1 = v128.load(qh + 16);
        const n0 = qi < 2 ? v128.and(lo0, low) : i8x16.shr_u(lo0, 4), n1 = qi < 2 ? v128.and(lo1, low) : i8x16.shr_u(lo1, 4);
        const v0 = i8x16.sub(v128.or(n0, i8x16.shl(v128.and(i8x16.shr_u(hb0, shift), two), 4)), off);
        const v1 = i8x16.sub(v128.or(n1, i8x16.shl(v128.and(i8x16.shr_u(hb1, shift), two), 4)), off);
        const w0 = i16x8.extend_low_i8x16_s(v0), w1 = i16x8.extend_high_i8x16_s(v0);
        const w2 = i16x8.extend_low_i8x16_s(v1), w3 = i16x8.extend_high_i8x16_s(v1);
        const sc0 = i32x4.splat(<i32>load<i8>(sc + 2 * qi)), sc1 = i32x4.splat(<i32>load<i8>(sc + 2 * qi + 1));
        const blk = (sb << 3) + (h << 2) + qi, xo = <usize>blk << 6, dO = <usize>blk << 2;
        a0 = scaled(a0, i32x4.add(i32x4.mul(sc0, dot16(w0, w1, x0 + xo)), i32x4.mul(sc1, dot16(w2, w3, x0 + xo + 32))), d * load<f32>(d0 + dO));
        if (NT > 1) a1 = scaled(a1, i32x4.add(i32x4.mul(sc0, dot16(w0, w1, x0 + xs + xo)), i32x4.mul(sc1, dot16(w2, w3, x0 + xs + xo + 32))), d * load<f32>(d0 + ds + dO));
        if (NT > 2) a2 = scaled(a2, i32x4.add(i32x4.mul(sc0, dot16(w0, w1, x0 + 2 * xs + xo)), i32x4.mul(sc1, dot16(w2, w3, x0 + 2 * xs + xo + 32))), d * load<f32>(d0 + 2 * ds + dO));
        if (NT > 3) a3 = scaled(a3, i32x4.add(i32x4.mul(sc0, dot16(w0, w1, x0 + 3 * xs + xo)), i32x4.mul(sc1, dot16(w2, w3, x0 + 3 * xs + xo + 32))), d * load<f32>(d0 + 3 * ds + dO));
      }
    }
  }
  const ys: usize = <usize>yStride << 2, yt = y + <usize>t * ys;
  store<f32>(yt, lanes(a0));
  if (NT > 1) store<f32>(yt + ys, lanes(a1));
  if (NT > 2) store<f32>(yt + 2 * ys, lanes(a2));
  if (NT > 3) store<f32>(yt + 3 * ys, lanes(a3));
}

// Each (format, tile) as its own function: NT and fmt are constants there, so the unused lanes fold away.
function q8Tile4(row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, ys: i32): void { rowTile32(Q8_0, 4, row, xq, dAt, t, K, y, ys); }
function q8Tile1(row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, ys: i32): void { rowTile32(Q8_0, 1, row, xq, dAt, t, K, y, ys); }
function q4Tile4(row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, ys: i32): void { rowTile32(Q4_0, 4, row, xq, dAt, t, K, y, ys); }
function q4Tile1(row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, ys: i32): void { rowTile32(Q4_0, 1, row, xq, dAt, t, K, y, ys); }
function q4kTile4(row: usize, xq: usize, dAt: usize, sAt: usize, t: i32, K: i32, y: usize, ys: i32): void { rowTileQ4K(4, row, xq, dAt, sAt, t, K, y, ys); }
function q4kTile1(row: usize, xq: usize, dAt: usize, sAt: usize, t: i32, K: i32, y: usize, ys: i32): void { rowTileQ4K(1, row, xq, dAt, sAt, t, K, y, ys); }
function q6kTile4(row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, ys: i32): void { rowTileQ6K(4, row, xq, dAt, t, K, y, ys); }
function q6kTile1(row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, ys: i32): void { rowTileQ6K(1, row, xq, dAt, t, K, y, ys); }

/**
 * Rows [row0, row1) of W (w: row 0's bytes) times n tokens of quantized x (at xq, ./quantize.ts's
 * layout). y: the output of row 0, token 0; token t's row r lands at y + (t·yStride + r)·4. The last
 * argument is unused (the f32 linear's scratch: the same arity lets the thread pool call either).
 */
export function linearQ8(fmt: i32, w: usize, scales: usize, xq: usize, y: usize, row0: i32, row1: i32, K: i32, n: i32, yStride: i32, unused: usize): void {
  const rb = <usize>rowBytes(fmt, K);
  const dAt = xq + (<usize>(n * K) << 1), sAt = dAt + (<usize>(n * (K >> 5)) << 2);
  for (let r = row0; r < row1; r++) {
    const row = w + <usize>r * rb, yr = y + (<usize>r << 2);
    let t = 0;
    if (fmt == Q8_0) { for (; t + 4 <= n; t += 4) q8Tile4(row, xq, dAt, t, K, yr, yStride); for (; t < n; t++) q8Tile1(row, xq, dAt, t, K, yr, yStride); }
    else if (fmt == Q4_0) { for (; t + 4 <= n; t += 4) q4Tile4(row, xq, dAt, t, K, yr, yStride); for (; t < n; t++) q4Tile1(row, xq, dAt, t, K, yr, yStride); }
    else if (fmt == Q4_K) { for (; t + 4 <= n; t += 4) q4kTile4(row, xq, dAt, sAt, t, K, yr, yStride); for (; t < n; t++) q4kTile1(row, xq, dAt, sAt, t, K, yr, yStride); }
    else if (fmt == Q6_K) { for (; t + 4 <= n; t += 4) q6kTile4(row, xq, dAt, t, K, yr, yStride); for (; t < n; t++) q6kTile1(row, xq, dAt, t, K, yr, yStride); }
    else unreachable();
  }
}
