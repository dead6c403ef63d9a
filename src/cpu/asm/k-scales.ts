// The K-quants' (Q4_K, Q5_K) eight 6-bit scales and mins of a 256-value super-block, unpacked from their
// 12 packed bytes in SIMD at once (ggml's get_scale_min_k4 reads them one at a time), for the f32 and
// the integer linears (./linear.ts, ./linear-q8.ts). Super-block: f16 d, f16 dmin, the 12 bytes, codes.
import { halfToF32 } from './half';

/**
 * A Q4_K super-block's eight 6-bit scales (bytes 0..7) and mins (bytes 8..15), all unpacked at once from
 * its 12 scale bytes at p (the 4 bytes after them are read and dropped). As get_scale_min_k4, for s < 4:
 * sc = q[s] & 63, m = q[s + 4] & 63; for s ≥ 4: sc = (q[s + 4] & 15) | (q[s − 4] >> 6) << 4,
 * m = (q[s + 4] >> 4) | (q[s] >> 6) << 4.
 */
@inline export function scalesMinsQ4K(p: usize): v128 {
  const v = v128.load(p);
  const low6 = v128.and(v, i8x16.splat(63));
  // bytes 0..3: q[8..11] & 15, bytes 4..7: q[8..11] >> 4 (the rest unused)
  const nib = v128.shuffle<u8>(v128.and(v, i8x16.splat(15)), i8x16.shr_u(v, 4), 8, 9, 10, 11, 24, 25, 26, 27, 8, 9, 10, 11, 24, 25, 26, 27);
  const high = v128.or(nib, i8x16.shr_u(v128.and(v, i8x16.splat(<i8>0xc0)), 2));   // | (q[0..7] >> 6) << 4
  return v128.shuffle<u8>(low6, high, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
}

/**
 * The super-block at p's eight d·sc (to at + 0..31) and dmin·m (at + 32..63) as f32 (each rounded once,
 * as d · f32(sc) in scalars), for a caller to splat one at a time (v128.load32_splat).
 */
@inline export function q4kScales(p: usize, at: usize): void {
  const d = f32x4.splat(halfToF32(load<u16>(p))), dmin = f32x4.splat(halfToF32(load<u16>(p + 2)));
  const sm = scalesMinsQ4K(p + 4), sc = i16x8.extend_low_i8x16_u(sm), m = i16x8.extend_high_i8x16_u(sm);
  v128.store(at, f32x4.mul(d, u16Quarter(sc, 0))); v128.store(at + 16, f32x4.mul(d, u16Quarter(sc, 1)));
  v128.store(at + 32, f32x4.mul(dmin, u16Quarter(m, 0))); v128.store(at + 48, f32x4.mul(dmin, u16Quarter(m, 1)));
}

/** Lanes 0..3 (half 0) or 4..7 (half 1) of u16x8 v as f32x4. */
@inline export function u16Quarter(v: v128, half: i32): v128 {
  return f32x4.convert_i32x4_u(half ? i32x4.extend_high_i16x8_u(v) : i32x4.extend_low_i16x8_u(v));
}
