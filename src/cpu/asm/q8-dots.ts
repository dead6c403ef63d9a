// The integer linears' dot products and reductions (./linear-q8.ts, ./linear-q8-row.ts): exact integer
// sums of a 32-value block's products, on widened i16 (i32x4.dot_i16x8_s) or, in the relaxed build, on
// nibbles against i8 codes (i16x8.relaxed_dot_i8x16_i7x16_s), and the transposes that put four blocks' or
// four tokens' sums side by side in one i32x4.
import { Q8_0 } from './formats';
import { halfLanes } from './half';

/** Σ of 32 products of weights w0..w3 (i16x8, values 0..31 of a block) with x's i16 at xp, as i32x4. */
@inline export function dot32(w0: v128, w1: v128, w2: v128, w3: v128, xp: usize): v128 {
  let s = i32x4.dot_i16x8_s(w0, v128.load(xp));
  s = i32x4.add(s, i32x4.dot_i16x8_s(w1, v128.load(xp + 16)));
  s = i32x4.add(s, i32x4.dot_i16x8_s(w2, v128.load(xp + 32)));
  return i32x4.add(s, i32x4.dot_i16x8_s(w3, v128.load(xp + 48)));
}

/** dot32 with the 32 codes already in registers. */
@inline export function dot32r(w0: v128, w1: v128, w2: v128, w3: v128, x0: v128, x1: v128, x2: v128, x3: v128): v128 {
  return i32x4.add(i32x4.add(i32x4.dot_i16x8_s(w0, x0), i32x4.dot_i16x8_s(w1, x1)), i32x4.add(i32x4.dot_i16x8_s(w2, x2), i32x4.dot_i16x8_s(w3, x3)));
}

/** Q8_0 or Q4_0 block at p (its f16 scale first) dotted with codes x0..x3: the integer sums, i32x4. */
@inline export function isum32(fmt: i32, p: usize, x0: v128, x1: v128, x2: v128, x3: v128): v128 {
  if (fmt == Q8_0) {
    const u = v128.load(p + 2), v = v128.load(p + 18);
    return dot32r(i16x8.extend_low_i8x16_s(u), i16x8.extend_high_i8x16_s(u), i16x8.extend_low_i8x16_s(v), i16x8.extend_high_i8x16_s(v), x0, x1, x2, x3);
  }
  const v = v128.load(p + 2), eight = i8x16.splat(8);
  const lo = i8x16.sub(v128.and(v, i8x16.splat(15)), eight), hi = i8x16.sub(i8x16.shr_u(v, 4), eight);
  return dot32r(i16x8.extend_low_i8x16_s(lo), i16x8.extend_high_i8x16_s(lo), i16x8.extend_low_i8x16_s(hi), i16x8.extend_high_i8x16_s(hi), x0, x1, x2, x3);
}

/**
 * Relaxed build: Σ of a 32-value block's products, nibbles lo (values 0..15) and hi (16..31) with i8 codes
 * c0, c1, plus acc (i32x4). The i16 pairs cannot saturate: |pair| ≤ 2·127·15, and two of them ≤ 7620.
 * (Not the i32x4 `_add_s` form: Node 20's V8 11.3 returns twice the dot there and drops the addend.)
 */
@inline export function nibDot(lo: v128, hi: v128, c0: v128, c1: v128, acc: v128): v128 {
  return i32x4.add(acc, i32x4.extadd_pairwise_i16x8_s(nibPairs(lo, hi, c0, c1)));
}

/** nibDot before its widening: the block's sum spread over 8 i16 lanes, each at most 7620 in magnitude. */
@inline export function nibPairs(lo: v128, hi: v128, c0: v128, c1: v128): v128 {
  return i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(c0, lo), i16x8.relaxed_dot_i8x16_i7x16_s(c1, hi));
}

/**
 * [Σ lanes of a, Σ b, Σ c, Σ d] as i32x4 for four nibPairs results: added in i16 while that cannot
 * overflow (four lanes: ≤ 30480), widened once. sum4 of their nibDots, in 10 instructions instead of 17.
 */
@inline export function sum4Pairs(a: v128, b: v128, c: v128, d: v128): v128 {
  return sum4PairsJoin(sum2Pairs(a, b), sum2Pairs(c, d));
}
/** sum4Pairs halfway: a's and b's lanes 0..3 + 4..7 side by side (i16, ≤ 15240). */
@inline export function sum2Pairs(a: v128, b: v128): v128 {
  return i16x8.add(v128.shuffle<i64>(a, b, 0, 2), v128.shuffle<i64>(a, b, 1, 3));
}
@inline export function sum4PairsJoin(ab: v128, cd: v128): v128 {
  return i32x4.extadd_pairwise_i16x8_s(i16x8.add(v128.shuffle<i32>(ab, cd, 0, 2, 4, 6), v128.shuffle<i32>(ab, cd, 1, 3, 5, 7)));
}

/** [Σ lanes of a, Σ b, Σ c, Σ d] (i32x4): the 4 tokens' sums of one block side by side. */
@inline export function sum4(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = i32x4.add(v128.shuffle<i32>(a, b, 0, 1, 4, 5), v128.shuffle<i32>(a, b, 2, 3, 6, 7));
  const cd = i32x4.add(v128.shuffle<i32>(c, d, 0, 1, 4, 5), v128.shuffle<i32>(c, d, 2, 3, 6, 7));
  return i32x4.add(v128.shuffle<i32>(ab, cd, 0, 2, 4, 6), v128.shuffle<i32>(ab, cd, 1, 3, 5, 7));
}

@inline export function lanes(a: v128): f32 {
  return f32x4.extract_lane(a, 0) + f32x4.extract_lane(a, 1) + (f32x4.extract_lane(a, 2) + f32x4.extract_lane(a, 3));
}

/** The f16 scales of four blocks `bytes` apart from p, as f32x4. */
@inline export function scales4(p: usize, bytes: usize): v128 {
  let h = i32x4.splat(<i32>load<u16>(p));
  h = i32x4.replace_lane(h, 1, <i32>load<u16>(p + bytes));
  h = i32x4.replace_lane(h, 2, <i32>load<u16>(p + 2 * bytes));
  h = i32x4.replace_lane(h, 3, <i32>load<u16>(p + 3 * bytes));
  return halfLanes(h);
}
