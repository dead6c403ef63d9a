// One row of a weight matrix, as stored, decoded to K f32 values at dst: the same values, bit for bit,
// as the reference's dequantization (src/model/formats/gguf/ggml-dequant.ts for ggml blocks,
// src/model/tensor-utils.ts for dense and MLC q4f16_1). Every operation rounds to f32 in the order the
// reference writes it (wasm has no implicit FMA). Block layouts: GgmlLinear in src/model/types.ts.
import { BF16, F16, F32, MLC_Q4, Q4_0, Q4_1, Q4_K, Q5_0, Q5_1, Q5_K, Q6_K, Q8_0 } from './formats';
import { half4, halfToF32 } from './half';

/** 16 unsigned bytes (lanes of v) as f32, (q + add) · d, stored at dst. */
@inline function storeU8(v: v128, dst: usize, add: f32, d: f32): void {
  const lo = i16x8.extend_low_i8x16_u(v), hi = i16x8.extend_high_i8x16_u(v);
  const a = f32x4.splat(add), s = f32x4.splat(d);
  v128.store(dst, f32x4.mul(f32x4.add(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_u(lo)), a), s));
  v128.store(dst + 16, f32x4.mul(f32x4.add(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_u(lo)), a), s));
  v128.store(dst + 32, f32x4.mul(f32x4.add(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_u(hi)), a), s));
  v128.store(dst + 48, f32x4.mul(f32x4.add(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_u(hi)), a), s));
}

/** 16 unsigned bytes as f32, f32(q · d) + m (Q4_1's order), stored at dst. */
@inline function storeU8Min(v: v128, dst: usize, d: f32, m: f32): void {
  const lo = i16x8.extend_low_i8x16_u(v), hi = i16x8.extend_high_i8x16_u(v);
  const s = f32x4.splat(d), mm = f32x4.splat(m);
  v128.store(dst, f32x4.add(f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_u(lo)), s), mm));
  v128.store(dst + 16, f32x4.add(f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_u(lo)), s), mm));
  v128.store(dst + 32, f32x4.add(f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_u(hi)), s), mm));
  v128.store(dst + 48, f32x4.add(f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_u(hi)), s), mm));
}

function rowF16(src: usize, dst: usize, K: i32): void {
  let k = 0;
  for (; k + 4 <= K; k += 4) v128.store(dst + (<usize>k << 2), half4(src + (<usize>k << 1)));
  for (; k < K; k++) store<f32>(dst + (<usize>k << 2), halfToF32(load<u16>(src + (<usize>k << 1))));
}

function rowBF16(src: usize, dst: usize, K: i32): void {
  let k = 0;
  for (; k + 4 <= K; k += 4) v128.store(dst + (<usize>k << 2), i32x4.shl(v128.load16x4_u(src + (<usize>k << 1)), 16));
  for (; k < K; k++) store<u32>(dst + (<usize>k << 2), (<u32>load<u16>(src + (<usize>k << 1))) << 16);
}

function rowQ8_0(src: usize, dst: usize, K: i32): void {
  for (let b = 0; b < K >> 5; b++) {
    const p = src + <usize>b * 34, o = dst + (<usize>b << 7);
    const d = f32x4.splat(halfToF32(load<u16>(p)));
    for (let h = 0; h < 2; h++) {
      const v = v128.load(p + 2 + (<usize>h << 4));
      const lo = i16x8.extend_low_i8x16_s(v), hi = i16x8.extend_high_i8x16_s(v);
      const q = o + (<usize>h << 6);
      v128.store(q, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(lo)), d));
      v128.store(q + 16, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(lo)), d));
      v128.store(q + 32, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(hi)), d));
      v128.store(q + 48, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(hi)), d));
    }
  }
}

function rowQ4_0(src: usize, dst: usize, K: i32): void {
  const mask = i8x16.splat(15);
  for (let b = 0; b < K >> 5; b++) {
    const p = src + <usize>b * 18, o = dst + (<usize>b << 7);
    const d = halfToF32(load<u16>(p));
    const v = v128.load(p + 2);
    storeU8(v128.and(v, mask), o, -8, d);
    storeU8(i8x16.shr_u(v, 4), o + 64, -8, d);
  }
}

function rowQ4_1(src: usize, dst: usize, K: i32): void {
  const mask = i8x16.splat(15);
  for (let b = 0; b < K >> 5; b++) {
    const p = src + <usize>b * 20, o = dst + (<usize>b << 7);
    const d = halfToF32(load<u16>(p)), m = halfToF32(load<u16>(p + 2));
    const v = v128.load(p + 4);
    storeU8Min(v128.and(v, mask), o, d, m);
    storeU8Min(i8x16.shr_u(v, 4), o + 64, d, m);
  }
}

/** Q5_0 (min false) and Q5_1 (min true): the nibble plus bit j of qh as the 5th bit. */
function rowQ5(src: usize, dst: usize, K: i32, min: bool): void {
  const bytes: usize = min ? 24 : 22;
  for (let b = 0; b < K >> 5; b++) {
    const p = src + <usize>b * bytes, o = dst + (<usize>b << 7);
    const d = halfToF32(load<u16>(p));
    const m: f32 = min ? halfToF32(load<u16>(p + 2)) : 0;
    const qhAt = p + (min ? 4 : 2);
    const qh: u32 = <u32>load<u16>(qhAt) | (<u32>load<u16>(qhAt + 2) << 16);
    const qs = qhAt + 4;
    for (let j = 0; j < 16; j++) {
      const q = <u32>load<u8>(qs + j);
      const lo = (q & 15) | (((qh >> j) << 4) & 16);
      const hi = (q >> 4) | ((qh >> (j + 12)) & 16);
      if (min) {
        store<f32>(o + (<usize>j << 2), <f32>lo * d + m);
        store<f32>(o + (<usize>(j + 16) << 2), <f32>hi * d + m);
      } else {
        store<f32>(o + (<usize>j << 2), <f32>(<i32>lo - 16) * d);
        store<f32>(o + (<usize>(j + 16) << 2), <f32>(<i32>hi - 16) * d);
      }
    }
  }
}

/** Q4_K / Q5_K sub-block s's 6-bit scale (low 8 bits) and min (next 8), ggml's get_scale_min_k4. */
@inline function scaleMin(p: usize, s: i32): u32 {
  if (s < 4) return (<u32>load<u8>(p + s) & 63) | ((<u32>load<u8>(p + s + 4) & 63) << 8);
  const sc = (<u32>load<u8>(p + s + 4) & 15) | ((<u32>load<u8>(p + s - 4) >> 6) << 4);
  const m = (<u32>load<u8>(p + s + 4) >> 4) | ((<u32>load<u8>(p + s) >> 6) << 4);
  return sc | (m << 8);
}

/** 16 unsigned bytes as f32, d · q − m (the K-quants' order), stored at dst. */
@inline function storeU8Affine(v: v128, dst: usize, d: f32, m: f32): void {
  const lo = i16x8.extend_low_i8x16_u(v), hi = i16x8.extend_high_i8x16_u(v);
  const s = f32x4.splat(d), mm = f32x4.splat(m);
  v128.store(dst, f32x4.sub(f32x4.mul(s, f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_u(lo))), mm));
  v128.store(dst + 16, f32x4.sub(f32x4.mul(s, f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_u(lo))), mm));
  v128.store(dst + 32, f32x4.sub(f32x4.mul(s, f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_u(hi))), mm));
  v128.store(dst + 48, f32x4.sub(f32x4.mul(s, f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_u(hi))), mm));
}

/** Lanes of v where bit `bit` is set, as 16 (the Q5_K 5th bit), else 0. */
@inline function bit16(v: v128, bit: i32): v128 {
  return v128.and(i8x16.ne(v128.and(v, i8x16.splat(<i8>bit)), i8x16.splat(0)), i8x16.splat(16));
}

/** Q4_K (five false) and Q5_K (five true), 256 values per block, 16 lanes at a time. */
function rowK45(src: usize, dst: usize, K: i32, five: bool): void {
  const bytes: usize = five ? 176 : 144;
  const mask = i8x16.splat(15);
  for (let b = 0; b < K >> 8; b++) {
    const p = src + <usize>b * bytes, o = dst + (<usize>b << 10);
    const d = halfToF32(load<u16>(p)), dmin = halfToF32(load<u16>(p + 2));
    const h0 = v128.load(p + 16), h1 = v128.load(p + 32);
    for (let pair = 0; pair < 4; pair++) {
      const sm1 = scaleMin(p + 4, 2 * pair), sm2 = scaleMin(p + 4, 2 * pair + 1);
      const d1 = d * <f32>(sm1 & 255), mm1 = dmin * <f32>(sm1 >> 8);
      const d2 = d * <f32>(sm2 & 255), mm2 = dmin * <f32>(sm2 >> 8);
      const q = p + (five ? 48 : 16) + 32 * pair, out = o + (<usize>(64 * pair) << 2);
      const v0 = v128.load(q), v1 = v128.load(q + 16);
      let lo0 = v128.and(v0, mask), lo1 = v128.and(v1, mask), hi0 = i8x16.shr_u(v0, 4), hi1 = i8x16.shr_u(v1, 4);
      if (five) {
        const u1 = 1 << (2 * pair), u2 = 2 << (2 * pair);
        lo0 = v128.or(lo0, bit16(h0, u1)); lo1 = v128.or(lo1, bit16(h1, u1));
        hi0 = v128.or(hi0, bit16(h0, u2)); hi1 = v128.or(hi1, bit16(h1, u2));
      }
      storeU8Affine(lo0, out, d1, mm1);
      storeU8Affine(lo1, out + 64, d1, mm1);
      storeU8Affine(hi0, out + 128, d2, mm2);
      storeU8Affine(hi1, out + 192, d2, mm2);
    }
  }
}

/** Q6_K, 256 values per block: 16 lanes share a scale (l < 16 and l ≥ 16 of each quarter). */
function rowQ6_K(src: usize, dst: usize, K: i32): void {
  const low = i8x16.splat(15), two = i8x16.splat(3);
  for (let b = 0; b < K >> 8; b++) {
    const p = src + <usize>b * 210, o = dst + (<usize>b << 10);
    const d = halfToF32(load<u16>(p + 208));
    for (let h = 0; h < 2; h++) {
      const ql = p + 64 * h, qh = p + 128 + 32 * h, sc = p + 192 + 8 * h, out = o + (<usize>(128 * h) << 2);
      for (let j = 0; j < 2; j++) {
        const a = v128.load(ql + 16 * j), c = v128.load(ql + 32 + 16 * j), hi = v128.load(qh + 16 * j);
        const q1 = v128.or(v128.and(a, low), i8x16.shl(v128.and(hi, two), 4));
        const q2 = v128.or(v128.and(c, low), i8x16.shl(v128.and(i8x16.shr_u(hi, 2), two), 4));
        const q3 = v128.or(i8x16.shr_u(a, 4), i8x16.shl(v128.and(i8x16.shr_u(hi, 4), two), 4));
        const q4 = v128.or(i8x16.shr_u(c, 4), i8x16.shl(i8x16.shr_u(hi, 6), 4));
        const at = out + (<usize>(16 * j) << 2);
        storeU8(q1, at, -32, d * <f32>load<i8>(sc + j));
        storeU8(q2, at + 128, -32, d * <f32>load<i8>(sc + j + 2));
        storeU8(q3, at + 256, -32, d * <f32>load<i8>(sc + j + 4));
        storeU8(q4, at + 384, -32, d * <f32>load<i8>(sc + j + 6));
      }
    }
  }
}

/** MLC q4f16_1: nibble k at bits (k % 8)·4 of word k / 8, w = (q − 7) · scale of group k / 32. */
function rowMlcQ4(words: usize, scales: usize, dst: usize, K: i32): void {
  const mask = i8x16.splat(15);
  for (let g = 0; g < K >> 5; g++) {
    const v = v128.load(words + (<usize>g << 4));
    const s = halfToF32(load<u16>(scales + (<usize>g << 1)));
    const lo = v128.and(v, mask), hi = i8x16.shr_u(v, 4);
    const first = i8x16.shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const second = i8x16.shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const o = dst + (<usize>g << 7);
    storeU8(first, o, -7, s);
    storeU8(second, o + 64, -7, s);
  }
}

/** Bytes of one stored row of K values (for MLC q4f16_1: of its words; its scales are K / 16 bytes). */
export function rowBytes(fmt: i32, K: i32): i32 {
  if (fmt == F32) return K * 4;
  if (fmt == F16 || fmt == BF16) return K * 2;
  if (fmt == Q8_0) return (K >> 5) * 34;
  if (fmt == Q4_0) return (K >> 5) * 18;
  if (fmt == Q4_1) return (K >> 5) * 20;
  if (fmt == Q5_0) return (K >> 5) * 22;
  if (fmt == Q5_1) return (K >> 5) * 24;
  if (fmt == Q4_K) return (K >> 8) * 144;
  if (fmt == Q5_K) return (K >> 8) * 176;
  if (fmt == Q6_K) return (K >> 8) * 210;
  if (fmt == MLC_Q4) return K >> 1;
  return -1;
}

/** Row `src` (scales: MLC q4f16_1's scale row, else unused) decoded to K f32 at dst. */
export function dequantRow(fmt: i32, src: usize, scales: usize, dst: usize, K: i32): void {
  if (fmt == F32) memory.copy(dst, src, <usize>K << 2);
  else if (fmt == F16) rowF16(src, dst, K);
  else if (fmt == BF16) rowBF16(src, dst, K);
  else if (fmt == Q8_0) rowQ8_0(src, dst, K);
  else if (fmt == Q4_0) rowQ4_0(src, dst, K);
  else if (fmt == Q4_1) rowQ4_1(src, dst, K);
  else if (fmt == Q5_0) rowQ5(src, dst, K, false);
  else if (fmt == Q5_1) rowQ5(src, dst, K, true);
  else if (fmt == Q4_K) rowK45(src, dst, K, false);
  else if (fmt == Q5_K) rowK45(src, dst, K, true);
  else if (fmt == Q6_K) rowQ6_K(src, dst, K);
  else if (fmt == MLC_Q4) rowMlcQ4(src, scales, dst, K);
  else unreachable();
}
