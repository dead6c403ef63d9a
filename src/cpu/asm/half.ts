// IEEE half <-> f32 on raw bits. f16 -> f32 is exact: the 15 magnitude bits shifted into an f32's place
// and scaled by 2^112 give every normal and subnormal half exactly; exponent 31 (Inf/NaN) is patched.
// f32 -> f16 rounds to nearest even exactly as src/model/float-bits.ts f32ToF16Bits does.

const TWO_112: f32 = reinterpret<f32>(0x77800000);

@inline export function halfToF32(h: u32): f32 {
  let bits: u32 = (h & 0x7fff) << 13;
  let f = reinterpret<f32>(bits) * TWO_112;
  if ((h & 0x7c00) == 0x7c00) f = reinterpret<f32>(bits | 0x7f800000);
  return reinterpret<f32>(reinterpret<u32>(f) | ((h & 0x8000) << 16));
}

/** Four halves at p (2-byte aligned) as f32x4. */
@inline export function half4(p: usize): v128 {
  return halfLanes(v128.load16x4_u(p));
}

/** Four halves, one in the low 16 bits of each i32 lane of h, as f32x4 (each exactly as halfToF32). */
@inline export function halfLanes(h: v128): v128 {
  const bits = i32x4.shl(v128.and(h, i32x4.splat(0x7fff)), 13);
  let f = f32x4.mul(bits, f32x4.splat(TWO_112));
  const special = i32x4.eq(v128.and(h, i32x4.splat(0x7c00)), i32x4.splat(0x7c00));
  f = v128.bitselect(v128.or(bits, i32x4.splat(0x7f800000)), f, special);
  return v128.or(f, i32x4.shl(v128.and(h, i32x4.splat(0x8000)), 16));
}

export function f32ToHalf(x: f32): u32 {
  const bits = reinterpret<u32>(x);
  const sign: u32 = (bits >> 16) & 0x8000;
  const exp: i32 = <i32>((bits >> 23) & 0xff);
  let mant: u32 = bits & 0x7fffff;
  if (exp == 0xff) return sign | 0x7c00 | (mant != 0 ? 0x200 | (mant >> 13) : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = <u32>(14 - e);
    const halfway: u32 = 1 << (shift - 1);
    let r: u32 = mant >> shift;
    const rem: u32 = mant & ((1 << shift) - 1);
    if (rem > halfway || (rem == halfway && (r & 1) == 1)) r++;
    return sign | r;
  }
  let r: u32 = (<u32>e << 10) | (mant >> 13);
  const rem: u32 = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (r & 1) == 1)) r++;
  return sign | r;
}
