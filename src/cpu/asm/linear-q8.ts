// The integer linears: y [n, yStride] (columns [0, rows) of each token written) = x · Wᵀ with x already
// quantized per 32-block by ./quantize.ts (i16 q, f32 d, f32 s = d·Σq) and W read as stored. Each weight
// block is widened once to i16x8 and dotted against the tokens' codes (i32x4.dot_i16x8_s: exact integer
// sums), then scaled once per block: Σ_b f32(dw_b · dx_b) · isum_b in f32. Formats: Q8_0, Q4_0, Q4_K,
// Q6_K (linearQ8Covers); the others run the f32 path (./linear.ts).
// Prefill (n > 1): tokens in tiles of 4. A decoded weight block serves the tile's 4 tokens from
// registers; their 4 integer sums are reduced together into one i32x4 (lane = token) and scaled by one
// f32x4 of the tile's block scales (./quantize.ts stores them side by side), so the float work is one
// convert, two multiplies and one add per block for 4 tokens. Rows go in blocks of ROW_BLOCK so a
// block's weights and one tile's codes both stay in L1 while they meet. The relaxed build's 4-bit
// formats take rows in pairs (nibBlockRows2): a token's i8 codes are loaded once for both rows (1.12×
// on Q4_0, 1.15× on Q4_K), and 8 tokens at a time where there are 8, so a block's nibbles and scales
// serve both tiles (1.07–1.09×); Q8_0's widened i16 weights of two rows leave too few registers, no gain.
// Decode (one token): ./linear-q8-row.ts, blocks in fours. The dot products and reductions both use
// are ./q8-dots.ts.
// Rows are independent: a thread range [row0, row1) gives the same values as the whole, bit for bit.
// Exactness: the integer sums are exact; the result differs from x·Wᵀ in f32 by the activations'
// quantization (|x − d·q| ≤ d/2 per value, d = amax/127 of its block) plus f32 rounding of the scaling.
// Relaxed SIMD (ASC_FEATURE_RELAXED_SIMD): the 4-bit formats (Q4_0, Q4_K) keep their nibbles unsigned
// (0..15, the 7-bit operand of i16x8.relaxed_dot_i8x16_i7x16_s, whose result is then defined the same
// on every CPU) and dot them with the i8 codes, 16 products an instruction instead of 8 on widened i16;
// Q4_0's −8 goes in as −8·Σqx (in lane 0 of one block's sum, or one subtraction for four). Integer sums are as exact as plain's, only
// split over other lanes, so the two builds differ by f32 rounding of the scaling alone.
import { Q4_0, Q4_K, Q6_K, Q8_0 } from './formats';
import { rowBytes } from './dequant';
import { halfToF32 } from './half';
import { codesAt, recordAt, scaleAt, sumsAt } from './quantize';
import { q4kScales } from './k-scales';
import { dot32, lanes, nibPairs, sum2Pairs, sum4, sum4Pairs, sum4PairsJoin } from './q8-dots';
import { q4kRow, q4RowRelaxed, row32 } from './linear-q8-row';

const ROW_BLOCK = 16;

/** Whether the integer path reads format fmt (the engine uses the f32 path for the others). */
export function linearQ8Covers(fmt: i32): bool {
  return fmt == Q8_0 || fmt == Q4_0 || fmt == Q4_K || fmt == Q6_K;
}

/**
 * Adds block blk's contribution (weights w0..w3, scale f) for NT tokens from t (NT 4: a tile, t a
 * multiple of 4; NT 1: one token) to acc: lane i is token t + i (NT 4), or the 4 partial sums (NT 1).
 * f: the block's weight scale, mf: its min factor (Q4_K's dmin·m; unused elsewhere), times the tokens' s,
 * both in all four lanes.
 */
@inline function block(NT: i32, acc: v128, w0: v128, w1: v128, w2: v128, w3: v128, f: v128, mf: v128, hasMin: bool,
  x0: usize, xs: usize, blk: i32, dAt: usize, sAt: usize, t: i32, B: i32): v128 {
  const xo = <usize>blk << 6;
  if (NT == 4) {
    const at = scaleAt(t, blk, B);
    const tot = sum4(dot32(w0, w1, w2, w3, x0 + xo), dot32(w0, w1, w2, w3, x0 + xs + xo),
      dot32(w0, w1, w2, w3, x0 + 2 * xs + xo), dot32(w0, w1, w2, w3, x0 + 3 * xs + xo));
    let a = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(tot), f32x4.mul(f, v128.load(dAt + at))));
    if (hasMin) a = f32x4.sub(a, f32x4.mul(mf, v128.load(sAt + at)));
    return a;
  }
  const at = scaleAt(t, blk, B);
  let a = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(dot32(w0, w1, w2, w3, x0 + xo)), f32x4.mul(f, v128.load32_splat(dAt + at))));
  if (hasMin) a = f32x4.sub(a, f32x4.replace_lane(f32x4.splat(0), 0, f32x4.extract_lane(mf, 0) * load<f32>(sAt + at)));   // in lane 0 only: lanes() sums them
  return a;
}

/** Relaxed build, token t's block blk: nibPairs of nibbles lo, hi with its i8 codes (c8: token 0's). */
@inline function nibToken(lo: v128, hi: v128, c8: usize, K: i32, blk: i32, t: i32): v128 {
  const xp = c8 + <usize>t * <usize>K + (<usize>blk << 5);
  return nibPairs(lo, hi, v128.load(xp), v128.load(xp + 16));
}

/**
 * block() of a prefill tile (4 tokens from t) for the relaxed build's 4-bit formats: nibbles lo (values
 * 0..15) and hi (16..31) against i8 codes; `offset`: Q4_0's −8·Σqx, for all 4 tokens in one subtraction.
 * (One token goes through q4RowRelaxed / q4kRow.)
 */
@inline function blockNib4(acc: v128, lo: v128, hi: v128, f: v128, mf: v128, hasMin: bool, offset: bool,
  c8: usize, K: i32, blk: i32, dAt: usize, sAt: usize, sums: usize, t: i32, B: i32): v128 {
  const at = scaleAt(t, blk, B);
  let tot = sum4Pairs(nibToken(lo, hi, c8, K, blk, t), nibToken(lo, hi, c8, K, blk, t + 1), nibToken(lo, hi, c8, K, blk, t + 2), nibToken(lo, hi, c8, K, blk, t + 3));
  if (offset) tot = i32x4.sub(tot, i32x4.shl(v128.load(sums + at), 3));
  let a = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(tot), f32x4.mul(f, v128.load(dAt + at))));
  if (hasMin) a = f32x4.sub(a, f32x4.mul(mf, v128.load(sAt + at)));
  return a;
}

/** Writes the tile's results: lane i to token t + i (NT 4), or the lanes' sum to token t (NT 1). */
@inline function storeTile(NT: i32, acc: v128, y: usize, t: i32, yStride: i32): void {
  const ys: usize = <usize>yStride << 2, yt = y + <usize>t * ys;
  if (NT == 4) {
    store<f32>(yt, f32x4.extract_lane(acc, 0));
    store<f32>(yt + ys, f32x4.extract_lane(acc, 1));
    store<f32>(yt + 2 * ys, f32x4.extract_lane(acc, 2));
    store<f32>(yt + 3 * ys, f32x4.extract_lane(acc, 3));
  } else store<f32>(yt, lanes(acc));
}

/** One row of a 32-block format (Q8_0, Q4_0) against NT tokens from t; y: this row's output of token 0. */
@inline function rowTile32(fmt: i32, NT: i32, row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, yStride: i32, c8: usize, sums: usize, rec: usize): void {
  const B = K >> 5, xs: usize = <usize>K << 1, x0 = xq + <usize>t * xs;
  let acc = f32x4.splat(0);
  const mask = i8x16.splat(15), eight = i8x16.splat(8);
  if (ASC_FEATURE_RELAXED_SIMD && fmt == Q4_0 && NT == 1) {
    storeTile(NT, q4RowRelaxed(row, c8 + <usize>t * <usize>K, rec, B), y, t, yStride);
    return;
  }
  if (NT == 1) {
    storeTile(NT, row32(fmt, row, x0, rec, B), y, t, yStride);
    return;
  }
  if (ASC_FEATURE_RELAXED_SIMD && fmt == Q4_0) {
    for (let b = 0; b < B; b++) {
      const p = row + <usize>b * 18, v = v128.load(p + 2);
      acc = blockNib4(acc, v128.and(v, mask), i8x16.shr_u(v, 4), f32x4.splat(halfToF32(load<u16>(p))), f32x4.splat(0), false, true, c8, K, b, dAt, 0, sums, t, B);
    }
    storeTile(NT, acc, y, t, yStride);
    return;
  }
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
    acc = block(NT, acc, w0, w1, w2, w3, f32x4.splat(dw), f32x4.splat(0), false, x0, xs, b, dAt, 0, t, B);
  }
  storeTile(NT, acc, y, t, yStride);
}

/**
 * One Q4_K row against NT tokens: w = d·sc·q − dmin·m per 32-value sub-block, so a sub-block adds
 * f32(d·sc·dx)·Σ q·qx and takes off dmin·m·s (s = dx·Σqx, from the quantizer).
 */
@inline function rowTileQ4K(NT: i32, row: usize, xq: usize, dAt: usize, sAt: usize, t: i32, K: i32, y: usize, yStride: i32, c8: usize, scratch: usize, rec: usize): void {
  const B = K >> 5, xs: usize = <usize>K << 1, x0 = xq + <usize>t * xs;
  if (NT == 1) {
    storeTile(NT, q4kRow(row, x0, c8 + <usize>t * <usize>K, rec, K), y, t, yStride);
    return;
  }
  let acc = f32x4.splat(0);
  const mask = i8x16.splat(15);
  for (let sb = 0; sb < K >> 8; sb++) {
    const p = row + <usize>sb * 144;
    q4kScales(p, scratch);
    for (let pair = 0; pair < 4; pair++) {
      // sub-blocks 2·pair (the low nibbles of these 32 bytes) and 2·pair + 1 (the high ones)
      const q = p + 16 + 32 * pair, u = v128.load(q), v = v128.load(q + 16), at = scratch + (<usize>pair << 3), blk = (sb << 3) + 2 * pair;
      acc = subBlockQ4K(acc, v128.and(u, mask), v128.and(v, mask), v128.load32_splat(at), v128.load32_splat(at + 32), x0, xs, c8, K, blk, dAt, sAt, t, B);
      acc = subBlockQ4K(acc, i8x16.shr_u(u, 4), i8x16.shr_u(v, 4), v128.load32_splat(at + 4), v128.load32_splat(at + 36), x0, xs, c8, K, blk + 1, dAt, sAt, t, B);
    }
  }
  storeTile(NT, acc, y, t, yStride);
}

/** A prefill tile's Q4_K sub-block blk: nibbles lo (values 0..15), hi (16..31), scale f, min mf (splat). */
@inline function subBlockQ4K(acc: v128, lo: v128, hi: v128, f: v128, mf: v128, x0: usize, xs: usize, c8: usize, K: i32, blk: i32, dAt: usize, sAt: usize, t: i32, B: i32): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return blockNib4(acc, lo, hi, f, mf, true, false, c8, K, blk, dAt, sAt, 0, t, B);
  return block(4, acc, i16x8.extend_low_i8x16_u(lo), i16x8.extend_high_i8x16_u(lo), i16x8.extend_low_i8x16_u(hi), i16x8.extend_high_i8x16_u(hi),
    f, mf, true, x0, xs, blk, dAt, sAt, t, B);
}

/**
 * One Q6_K row against NT tokens: w = d·sc·(q − 32), one i8 scale per 16 values, folded into the
 * widened weights ((q − 32)·sc fits i16: |·| ≤ 32·128), so a 32-block is one dot32 scaled by f32(d·dx).
 */
@inline function rowTileQ6K(NT: i32, row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, yStride: i32): void {
  const B = K >> 5, xs: usize = <usize>K << 1, x0 = xq + <usize>t * xs;
  let acc = f32x4.splat(0);
  const low = i8x16.splat(15), two = i8x16.splat(3), off = i8x16.splat(32);
  for (let sb = 0; sb < K >> 8; sb++) {
    const p = row + <usize>sb * 210;
    const d = f32x4.splat(halfToF32(load<u16>(p + 208)));
    for (let h = 0; h < 2; h++) {
      const ql = p + 64 * h, qh = p + 128 + 32 * h, sc = p + 192 + 8 * h;
      const hb0 = v128.load(qh), hb1 = v128.load(qh + 16);
      // quarter qi of this half: values 32·qi + 16·j + 0..15 from (ql, qh) bytes j·16.., scale sc[j + 2·qi]
      for (let qi = 0; qi < 4; qi++) {
        const aAt = ql + ((qi & 1) ? 32 : 0), shift = 2 * qi;
        const lo0 = v128.load(aAt), lo1 = v128.load(aAt + 16);
        const n0 = qi < 2 ? v128.and(lo0, low) : i8x16.shr_u(lo0, 4), n1 = qi < 2 ? v128.and(lo1, low) : i8x16.shr_u(lo1, 4);
        const v0 = i8x16.sub(v128.or(n0, i8x16.shl(v128.and(i8x16.shr_u(hb0, shift), two), 4)), off);
        const v1 = i8x16.sub(v128.or(n1, i8x16.shl(v128.and(i8x16.shr_u(hb1, shift), two), 4)), off);
        const sc0 = i16x8.splat(<i16>load<i8>(sc + 2 * qi)), sc1 = i16x8.splat(<i16>load<i8>(sc + 2 * qi + 1));
        acc = block(NT, acc, i16x8.mul(i16x8.extend_low_i8x16_s(v0), sc0), i16x8.mul(i16x8.extend_high_i8x16_s(v0), sc0),
          i16x8.mul(i16x8.extend_low_i8x16_s(v1), sc1), i16x8.mul(i16x8.extend_high_i8x16_s(v1), sc1),
          d, f32x4.splat(0), false, x0, xs, (sb << 3) + (h << 2) + qi, dAt, 0, t, B);
      }
    }
  }
  storeTile(NT, acc, y, t, yStride);
}

// Each (format, tile) as its own function: NT and fmt are constants there, so the other branches fold away.
function q8Tile4(row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, ys: i32): void { rowTile32(Q8_0, 4, row, xq, dAt, t, K, y, ys, 0, 0, 0); }
function q8Tile1(row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, ys: i32, rec: usize): void { rowTile32(Q8_0, 1, row, xq, dAt, t, K, y, ys, 0, 0, rec); }
function q4Tile4(row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, ys: i32, c8: usize, sums: usize): void { rowTile32(Q4_0, 4, row, xq, dAt, t, K, y, ys, c8, sums, 0); }
function q4Tile1(row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, ys: i32, c8: usize, sums: usize, rec: usize): void { rowTile32(Q4_0, 1, row, xq, dAt, t, K, y, ys, c8, sums, rec); }
function q4kTile4(row: usize, xq: usize, dAt: usize, sAt: usize, t: i32, K: i32, y: usize, ys: i32, c8: usize, scratch: usize): void { rowTileQ4K(4, row, xq, dAt, sAt, t, K, y, ys, c8, scratch, 0); }
function q4kTile1(row: usize, xq: usize, t: i32, K: i32, y: usize, ys: i32, c8: usize, rec: usize): void { rowTileQ4K(1, row, xq, 0, 0, t, K, y, ys, c8, 0, rec); }
function q6kTile4(row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, ys: i32): void { rowTileQ6K(4, row, xq, dAt, t, K, y, ys); }
function q6kTile1(row: usize, xq: usize, dAt: usize, t: i32, K: i32, y: usize, ys: i32): void { rowTileQ6K(1, row, xq, dAt, t, K, y, ys); }

/**
 * Relaxed build, a prefill tile's 32-value block (Q4_K: sub-block) blk for two rows at once: nibbles
 * lo0/hi0 (row 0) and lo1/hi1 (row 1) against the 4 tokens' codes from t, each loaded once for both.
 * f0, f1 (splat): the rows' scales; mf0, mf1 their mins (Q4_K) times s. The accumulators live at acc
 * (row 0) and acc + 16 (row 1): a function returns one value.
 */
@inline function nibBlockRows2(acc: usize, lo0: v128, hi0: v128, lo1: v128, hi1: v128, f0: v128, f1: v128, mf0: v128, mf1: v128, hasMin: bool, offset: bool,
  c8: usize, K: i32, blk: i32, dAt: usize, sAt: usize, sums: usize, t: i32, B: i32): void {
  const xs: usize = <usize>K, xp = c8 + <usize>t * xs + (<usize>blk << 5);
  let c0 = v128.load(xp), c1 = v128.load(xp + 16);
  let e0 = nibPairs(lo0, hi0, c0, c1), e1 = nibPairs(lo1, hi1, c0, c1);
  c0 = v128.load(xp + xs); c1 = v128.load(xp + xs + 16);
  const ab0 = sum2Pairs(e0, nibPairs(lo0, hi0, c0, c1)), ab1 = sum2Pairs(e1, nibPairs(lo1, hi1, c0, c1));
  c0 = v128.load(xp + 2 * xs); c1 = v128.load(xp + 2 * xs + 16);
  e0 = nibPairs(lo0, hi0, c0, c1); e1 = nibPairs(lo1, hi1, c0, c1);
  c0 = v128.load(xp + 3 * xs); c1 = v128.load(xp + 3 * xs + 16);
  let tot0 = sum4PairsJoin(ab0, sum2Pairs(e0, nibPairs(lo0, hi0, c0, c1))), tot1 = sum4PairsJoin(ab1, sum2Pairs(e1, nibPairs(lo1, hi1, c0, c1)));
  const at = scaleAt(t, blk, B), dx = v128.load(dAt + at);
  if (offset) {
    const off = i32x4.shl(v128.load(sums + at), 3);
    tot0 = i32x4.sub(tot0, off); tot1 = i32x4.sub(tot1, off);
  }
  let a0 = f32x4.add(v128.load(acc), f32x4.mul(f32x4.convert_i32x4_s(tot0), f32x4.mul(f0, dx)));
  let a1 = f32x4.add(v128.load(acc + 16), f32x4.mul(f32x4.convert_i32x4_s(tot1), f32x4.mul(f1, dx)));
  if (hasMin) {
    const sx = v128.load(sAt + at);
    a0 = f32x4.sub(a0, f32x4.mul(mf0, sx)); a1 = f32x4.sub(a1, f32x4.mul(mf1, sx));
  }
  v128.store(acc, a0); v128.store(acc + 16, a1);
}

/**
 * Relaxed build, Q4_K prefill: rowTileQ4K's tile for two rows (row, row + rb) at once (nibBlockRows2),
 * against TILES tiles of 4 tokens from t (TILES 2: a block's nibbles and scales serve 8 tokens).
 */
@inline function q4kRows2(TILES: i32, row: usize, rb: usize, dAt: usize, sAt: usize, t: i32, K: i32, y: usize, yStride: i32, c8: usize, scratch: usize): void {
  const B = K >> 5, mask = i8x16.splat(15), r1 = row + rb, acc = scratch + 128;
  for (let i = 0; i < 2 * TILES; i++) v128.store(acc + (<usize>i << 4), f32x4.splat(0));
  for (let sb = 0; sb < K >> 8; sb++) {
    const p0 = row + <usize>sb * 144, p1 = r1 + <usize>sb * 144;
    q4kScales(p0, scratch); q4kScales(p1, scratch + 64);
    for (let pair = 0; pair < 4; pair++) {
      const q0 = p0 + 16 + 32 * pair, q1 = p1 + 16 + 32 * pair, u0 = v128.load(q0), v0 = v128.load(q0 + 16), u1 = v128.load(q1), v1 = v128.load(q1 + 16);
      const at = scratch + (<usize>pair << 3), blk = (sb << 3) + 2 * pair;
      const lo0 = v128.and(u0, mask), lo1 = v128.and(v0, mask), lo2 = v128.and(u1, mask), lo3 = v128.and(v1, mask);
      const hi0 = i8x16.shr_u(u0, 4), hi1 = i8x16.shr_u(v0, 4), hi2 = i8x16.shr_u(u1, 4), hi3 = i8x16.shr_u(v1, 4);
      for (let i = 0; i < TILES; i++) {
        const a = acc + (<usize>i << 5), ti = t + 4 * i;
        nibBlockRows2(a, lo0, lo1, lo2, lo3, v128.load32_splat(at), v128.load32_splat(at + 64),
          v128.load32_splat(at + 32), v128.load32_splat(at + 96), true, false, c8, K, blk, dAt, sAt, 0, ti, B);
        nibBlockRows2(a, hi0, hi1, hi2, hi3, v128.load32_splat(at + 4), v128.load32_splat(at + 68),
          v128.load32_splat(at + 36), v128.load32_splat(at + 100), true, false, c8, K, blk + 1, dAt, sAt, 0, ti, B);
      }
    }
  }
  for (let i = 0; i < TILES; i++) {
    storeTile(4, v128.load(acc + (<usize>i << 5)), y, t + 4 * i, yStride);
    storeTile(4, v128.load(acc + (<usize>i << 5) + 16), y + 4, t + 4 * i, yStride);
  }
}
function q4kTile4Rows2(row: usize, rb: usize, dAt: usize, sAt: usize, t: i32, K: i32, y: usize, yStride: i32, c8: usize, scratch: usize): void { q4kRows2(1, row, rb, dAt, sAt, t, K, y, yStride, c8, scratch); }
function q4kTile8Rows2(row: usize, rb: usize, dAt: usize, sAt: usize, t: i32, K: i32, y: usize, yStride: i32, c8: usize, scratch: usize): void { q4kRows2(2, row, rb, dAt, sAt, t, K, y, yStride, c8, scratch); }

/**
 * Relaxed build, Q4_0 prefill: rowTile32's tile for two rows (row, row + rb) at once (nibBlockRows2),
 * against TILES tiles of 4 tokens from t (TILES 2: a block's nibbles and f16 scales serve 8 tokens).
 */
@inline function q4Rows2(TILES: i32, row: usize, rb: usize, dAt: usize, t: i32, K: i32, y: usize, yStride: i32, c8: usize, sums: usize, scratch: usize): void {
  const B = K >> 5, mask = i8x16.splat(15), r1 = row + rb, acc = scratch, zero = f32x4.splat(0);
  for (let i = 0; i < 2 * TILES; i++) v128.store(acc + (<usize>i << 4), zero);
  for (let b = 0; b < B; b++) {
    const p0 = row + <usize>b * 18, p1 = r1 + <usize>b * 18, v0 = v128.load(p0 + 2), v1 = v128.load(p1 + 2);
    const lo0 = v128.and(v0, mask), hi0 = i8x16.shr_u(v0, 4), lo1 = v128.and(v1, mask), hi1 = i8x16.shr_u(v1, 4);
    const f0 = f32x4.splat(halfToF32(load<u16>(p0))), f1 = f32x4.splat(halfToF32(load<u16>(p1)));
    for (let i = 0; i < TILES; i++) nibBlockRows2(acc + (<usize>i << 5), lo0, hi0, lo1, hi1, f0, f1, zero, zero, false, true, c8, K, b, dAt, 0, sums, t + 4 * i, B);
  }
  for (let i = 0; i < TILES; i++) {
    storeTile(4, v128.load(acc + (<usize>i << 5)), y, t + 4 * i, yStride);
    storeTile(4, v128.load(acc + (<usize>i << 5) + 16), y + 4, t + 4 * i, yStride);
  }
}
function q4Tile4Rows2(row: usize, rb: usize, dAt: usize, t: i32, K: i32, y: usize, yStride: i32, c8: usize, sums: usize, scratch: usize): void { q4Rows2(1, row, rb, dAt, t, K, y, yStride, c8, sums, scratch); }
function q4Tile8Rows2(row: usize, rb: usize, dAt: usize, t: i32, K: i32, y: usize, yStride: i32, c8: usize, sums: usize, scratch: usize): void { q4Rows2(2, row, rb, dAt, t, K, y, yStride, c8, sums, scratch); }

/**
 * Rows [row0, row1) of W (w: row 0's bytes) times n tokens of quantized x (at xq, ./quantize.ts's
 * layout). y: the output of row 0, token 0; token t's row r lands at y + (t·yStride + r)·4. scratch:
 * this thread's own, at least 192 bytes (the f32 linear's two rows of K floats: the same arity lets the pool call either).
 */
export function linearQ8(fmt: i32, w: usize, scales: usize, xq: usize, y: usize, row0: i32, row1: i32, K: i32, n: i32, yStride: i32, scratch: usize): void {
  const rb = <usize>rowBytes(fmt, K);
  const dAt = xq + (<usize>(n * K) << 1), sAt = dAt + (<usize>(((n + 3) >> 2) * (K >> 5)) << 4);
  const c8 = codesAt(xq, n, K), sums = sumsAt(xq, n, K);   // the i8 codes and Σq (the relaxed build's 4-bit paths)
  for (let rb0 = row0; rb0 < row1; rb0 += ROW_BLOCK) {
    const rEnd = min(rb0 + ROW_BLOCK, row1);
    let t = 0;
    for (; t + 4 <= n;) {
      // the relaxed build's 4-bit row pairs take 8 tokens at once where there are 8 (the rows left over,
      // and the other formats, go through both tiles of 4 one after the other)
      const tiles = ASC_FEATURE_RELAXED_SIMD && (fmt == Q4_0 || fmt == Q4_K) && t + 8 <= n ? 2 : 1;
      let r = rb0;
      if (ASC_FEATURE_RELAXED_SIMD && fmt == Q4_0) {
        for (; r + 2 <= rEnd; r += 2) {
          if (tiles == 2) q4Tile8Rows2(w + <usize>r * rb, rb, dAt, t, K, y + (<usize>r << 2), yStride, c8, sums, scratch);
          else q4Tile4Rows2(w + <usize>r * rb, rb, dAt, t, K, y + (<usize>r << 2), yStride, c8, sums, scratch);
        }
      }
      if (ASC_FEATURE_RELAXED_SIMD && fmt == Q4_K) {
        for (; r + 2 <= rEnd; r += 2) {
          if (tiles == 2) q4kTile8Rows2(w + <usize>r * rb, rb, dAt, sAt, t, K, y + (<usize>r << 2), yStride, c8, scratch);
          else q4kTile4Rows2(w + <usize>r * rb, rb, dAt, sAt, t, K, y + (<usize>r << 2), yStride, c8, scratch);
        }
      }
      for (; r < rEnd; r++) {
        const row = w + <usize>r * rb, yr = y + (<usize>r << 2);
        for (let i = 0; i < tiles; i++) {
          const ti = t + 4 * i;
          if (fmt == Q8_0) q8Tile4(row, xq, dAt, ti, K, yr, yStride);
          else if (fmt == Q4_0) q4Tile4(row, xq, dAt, ti, K, yr, yStride, c8, sums);
          else if (fmt == Q4_K) q4kTile4(row, xq, dAt, sAt, ti, K, yr, yStride, c8, scratch);
          else if (fmt == Q6_K) q6kTile4(row, xq, dAt, ti, K, yr, yStride);
          else unreachable();
        }
      }
      t += 4 * tiles;
    }
    for (; t < n; t++) {
      const rec = recordAt(xq, n, K, t);
      for (let r = rb0; r < rEnd; r++) {   // decode's matvec and a prefill's last tokens
        const row = w + <usize>r * rb, yr = y + (<usize>r << 2);
        if (fmt == Q8_0) q8Tile1(row, xq, dAt, t, K, yr, yStride, rec);
        else if (fmt == Q4_0) q4Tile1(row, xq, dAt, t, K, yr, yStride, c8, sums, rec);
        else if (fmt == Q4_K) q4kTile1(row, xq, t, K, yr, yStride, c8, rec);
        else if (fmt == Q6_K) q6kTile1(row, xq, dAt, t, K, yr, yStride);
        else unreachable();
      }
    }
  }
}
