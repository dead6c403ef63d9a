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

/** Q4_K (five false) and Q5_K (five true), 256 values per block. */
function rowK45(src: usize, dst: usize, K: i32, five: bool): void {
  const bytes: usize = five ? 176 : 144;
  for (let b = 0; b < K >> 8; b++) {
    const p = src + <usize>b * bytes, o = dst + (<usize>b << 10);
    const d = halfToF32(load<u16>(p)), dmin = halfToF32(load<u16>(p + 2));
    for (let pair = 0; pair < 4; pair++) {
      const sm1 = scaleMin(p + 4, 2 * pair), sm2 = scaleMin(p + 4, 2 * pair + 1);
      const d1 = d * <f32>(sm1 & 255), mm1 = dmin * <f32>(sm1 >> 8);
      const d2 = d * <f32>(sm2 & 255), mm2 = dmin * <f32>(sm2 >> 8);
      const q = p + (five ? 48 : 16) + 32 * pair, out = o + (<usize>(64 * pair) << 2);
      const u1: u32 = 1 << (2 * pair), u2: u32 = 2 << (2 * pair);
      for (let l = 0; l < 32; l++) {
        const v = <u32>load<u8>(q + l);
        let lo = v & 15, hi = v >> 4;
        if (five) {
          const h = <u32>load<u8>(p + 16 + l);
          if (h & u1) lo += 16;
          if (h & u2) hi += 16;
        }
        store<f32>(out + (<usize>l << 2), d1 * <f32>lo - mm1);
        store<f32>(out + (<usize>(32 + l) << 2), d2 * <f32>hi - mm2);
      }
    }
  }
}

function rowQ6_K(src: usize, dst: usize, K: i32): void {
  for (let b = 0; b < K >> 8; b++) {
    const p = src + <usize>b * 210, o = dst + (<usize>b << 10);
    const d = halfToF32(load<u16>(p + 208));
    for (let h = 0; h < 2; h++) {
      const ql = p + 64 * h, qh = p + 128 + 32 * h, sc = p + 192 + 8 * h, out = o + (<usize>(128 * h) << 2);
      for (let l = 0; l < 32; l++) {
        const is = l >> 4;
        const a = <i32>load<u8>(ql + l), c = <i32>load<u8>(ql + 32 + l), hi = <i32>load<u8>(qh + l);
        const s0 = d * <f32>load<i8>(sc + is), s2 = d * <f32>load<i8>(sc + is + 2);
        const s4 = d * <f32>load<i8>(sc + is + 4), s6 = d * <f32>load<i8>(sc + is + 6);
        store<f32>(out + (<usize>l << 2), s0 * <f32>(((a & 15) | ((hi & 3) << 4)) - 32));
        store<f32>(out + (<usize>(l + 32) << 2), s2 * <f32>(((c & 15) | (((hi >> 2) & 3) << 4)) - 32));
        store<f32>(out + (<usize>(l + 64) << 2), s4 * <f32>(((a >> 4) | (((hi >> 4) & 3) << 4)) - 32));
        store<f32>(out + (<usize>(l + 96) << 2), s6 * <f32>(((c >> 4) | (((hi >> 6) & 3) << 4)) - 32));
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
