// The integer linears' one-token rows (decode's matvec, and a prefill's last tokens): a row's
// accumulator whose lanes sum to its output, blocks (Q4_K: sub-blocks) in fours, their integer sums side
// by side in one i32x4 (lane = block), converted once and scaled by the four f32(dw·dx) at once: the
// per-block scalar work (an f16 decode, a multiply, a splat) was most of a 32-value block's cost, more
// than its dot products. Token t's d, s and Σq come from its record (./quantize.ts), four blocks a load.
import { Q8_0 } from './formats';
import { halfToF32 } from './half';
import { scalesMinsQ4K, u16Quarter } from './k-scales';
import { dot32r, isum32, nibDot, nibPairs, scales4, sum4, sum4Pairs } from './q8-dots';

/** Relaxed build, Q4_0: one row's block sum for one token from its codes (c0, c1) and offset. */
@inline function q4Nib(p: usize, c0: v128, c1: v128, off: v128): v128 {
  const v = v128.load(p + 2);
  return nibDot(v128.and(v, i8x16.splat(15)), i8x16.shr_u(v, 4), c0, c1, off);
}

/**
 * Relaxed build, Q4_0, one token: a row's accumulator (its lanes sum to the output). Blocks go in fours:
 * their integer sums side by side (lane i: block b + i, Q4_0's −8·Σqx taken off in one subtraction),
 * one convert and one multiply by the four f32(dw·dx), so the scaling costs a quarter of one a block.
 * The last B % 4 blocks are added one at a time.
 */
@inline export function q4RowRelaxed(row: usize, x8: usize, rec: usize, B: i32): v128 {
  let a = f32x4.splat(0);
  const zero = i32x4.splat(0), mask = i8x16.splat(15);
  let b = 0;
  for (; b + 4 <= B; b += 4) {
    const p = row + <usize>b * 18, xp = x8 + (<usize>b << 5);
    const v0 = v128.load(p + 2), v1 = v128.load(p + 20), v2 = v128.load(p + 38), v3 = v128.load(p + 56);
    let tot = sum4Pairs(nibPairs(v128.and(v0, mask), i8x16.shr_u(v0, 4), v128.load(xp), v128.load(xp + 16)),
      nibPairs(v128.and(v1, mask), i8x16.shr_u(v1, 4), v128.load(xp + 32), v128.load(xp + 48)),
      nibPairs(v128.and(v2, mask), i8x16.shr_u(v2, 4), v128.load(xp + 64), v128.load(xp + 80)),
      nibPairs(v128.and(v3, mask), i8x16.shr_u(v3, 4), v128.load(xp + 96), v128.load(xp + 112)));
    // the four blocks' Σqx and dx (from the token's record) and f16 dw (the rows' blocks 18 bytes apart)
    tot = i32x4.sub(tot, i32x4.shl(v128.load(rec + (<usize>(2 * B + b) << 2)), 3));
    a = f32x4.add(a, f32x4.mul(f32x4.convert_i32x4_s(tot), f32x4.mul(scales4(p, 18), v128.load(rec + (<usize>b << 2)))));
  }
  for (; b < B; b++) {
    const p = row + <usize>b * 18, xp = x8 + (<usize>b << 5);
    const dx = load<f32>(rec + (<usize>b << 2)), off = i32x4.replace_lane(i32x4.splat(0), 0, -8 * load<i32>(rec + (<usize>(2 * B + b) << 2)));
    a = f32x4.add(a, f32x4.mul(f32x4.convert_i32x4_s(q4Nib(p, v128.load(xp), v128.load(xp + 16), off)), f32x4.splat(halfToF32(load<u16>(p)) * dx)));
  }
  return a;
}

/**
 * Q8_0 or Q4_0 on i16 codes (x: token t's), one token: a row's accumulator, blocks in fours as
 * q4RowRelaxed (their integer sums side by side, one convert and one multiply by the four f32(dw·dx)).
 */
@inline export function row32(fmt: i32, row: usize, x: usize, rec: usize, B: i32): v128 {
  const bytes: usize = fmt == Q8_0 ? 34 : 18;
  let a = f32x4.splat(0);
  let b = 0;
  for (; b + 4 <= B; b += 4) {
    const p = row + <usize>b * bytes, xp = x + (<usize>b << 6);
    const tot = sum4(isum32(fmt, p, v128.load(xp), v128.load(xp + 16), v128.load(xp + 32), v128.load(xp + 48)),
      isum32(fmt, p + bytes, v128.load(xp + 64), v128.load(xp + 80), v128.load(xp + 96), v128.load(xp + 112)),
      isum32(fmt, p + 2 * bytes, v128.load(xp + 128), v128.load(xp + 144), v128.load(xp + 160), v128.load(xp + 176)),
      isum32(fmt, p + 3 * bytes, v128.load(xp + 192), v128.load(xp + 208), v128.load(xp + 224), v128.load(xp + 240)));
    a = f32x4.add(a, f32x4.mul(f32x4.convert_i32x4_s(tot), f32x4.mul(scales4(p, bytes), v128.load(rec + (<usize>b << 2)))));
  }
  for (; b < B; b++) {
    const p = row + <usize>b * bytes, xp = x + (<usize>b << 6);
    const dx = load<f32>(rec + (<usize>b << 2));
    a = f32x4.add(a, f32x4.mul(f32x4.convert_i32x4_s(isum32(fmt, p, v128.load(xp), v128.load(xp + 16), v128.load(xp + 32), v128.load(xp + 48))), f32x4.splat(halfToF32(load<u16>(p)) * dx)));
  }
  return a;
}

/**
 * Q4_K sub-block s's 16 nibbles 16·half .. of the super-block at p: the low (s even) or high (s odd) 4 bits
 * of the 32 bytes it shares with its neighbour.
 */
@inline function nibQ4K(p: usize, s: i32, half: i32): v128 {
  const v = v128.load(p + 16 + 32 * (s >> 1) + 16 * half);
  return (s & 1) ? i8x16.shr_u(v, 4) : v128.and(v, i8x16.splat(15));
}

/** Plain build: Q4_K sub-block s (block blk) of the super-block at p with a token's i16 codes (x), i32x4. */
@inline function isumQ4K(p: usize, s: i32, x: usize, blk: i32): v128 {
  const u = nibQ4K(p, s, 0), v = nibQ4K(p, s, 1), xp = x + (<usize>blk << 6);
  return dot32r(i16x8.extend_low_i8x16_u(u), i16x8.extend_high_i8x16_u(u), i16x8.extend_low_i8x16_u(v), i16x8.extend_high_i8x16_u(v),
    v128.load(xp), v128.load(xp + 16), v128.load(xp + 32), v128.load(xp + 48));
}

/** Relaxed build: Q4_K sub-block s (block blk) of the super-block at p with a token's i8 codes (x8), as nibPairs. */
@inline function pairsQ4K(p: usize, s: i32, x8: usize, blk: i32): v128 {
  const xp = x8 + (<usize>blk << 5);
  return nibPairs(nibQ4K(p, s, 0), nibQ4K(p, s, 1), v128.load(xp), v128.load(xp + 16));
}

/**
 * Decode's matvec, one Q4_K row, one token: its accumulator (the lanes sum to the output). Sub-blocks go
 * in fours, their integer sums side by side (lane i: sub-block s + i), one convert, one multiply by the
 * four f32(d·sc·dx) and one subtraction of the four dmin·m·s; a super-block's scales and mins are
 * unpacked once, in SIMD (scalesMinsQ4K).
 */
@inline export function q4kRow(row: usize, x: usize, x8: usize, rec: usize, K: i32): v128 {
  const B = K >> 5;
  let a = f32x4.splat(0);
  for (let sb = 0; sb < K >> 8; sb++) {
    const p = row + <usize>sb * 144;
    const d = f32x4.splat(halfToF32(load<u16>(p))), dmin = f32x4.splat(halfToF32(load<u16>(p + 2)));
    const sm = scalesMinsQ4K(p + 4), sc = i16x8.extend_low_i8x16_u(sm), m = i16x8.extend_high_i8x16_u(sm);
    a = q4kFour(a, p, 0, d, dmin, sc, m, x, x8, rec, (sb << 3), B);
    a = q4kFour(a, p, 1, d, dmin, sc, m, x, x8, rec, (sb << 3) + 4, B);
  }
  return a;
}

/** q4kRow's sub-blocks 4·half .. 4·half + 3 (block b0 on) of the super-block at p, added to a. */
@inline function q4kFour(a: v128, p: usize, half: i32, d: v128, dmin: v128, sc: v128, m: v128, x: usize, x8: usize, rec: usize, b0: i32, B: i32): v128 {
  const s0 = half << 2;
  const tot = ASC_FEATURE_RELAXED_SIMD
    ? sum4Pairs(pairsQ4K(p, s0, x8, b0), pairsQ4K(p, s0 + 1, x8, b0 + 1), pairsQ4K(p, s0 + 2, x8, b0 + 2), pairsQ4K(p, s0 + 3, x8, b0 + 3))
    : sum4(isumQ4K(p, s0, x, b0), isumQ4K(p, s0 + 1, x, b0 + 1), isumQ4K(p, s0 + 2, x, b0 + 2), isumQ4K(p, s0 + 3, x, b0 + 3));
  // the four sub-blocks' f32(d·sc·dx) and dmin·m·s (dx, s from the token's record)
  const f = f32x4.mul(f32x4.mul(d, u16Quarter(sc, half)), v128.load(rec + (<usize>b0 << 2)));
  const mins = f32x4.mul(f32x4.mul(dmin, u16Quarter(m, half)), v128.load(rec + (<usize>(B + b0) << 2)));
  return f32x4.sub(f32x4.add(a, f32x4.mul(f32x4.convert_i32x4_s(tot), f)), mins);
}
