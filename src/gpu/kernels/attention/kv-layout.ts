// How a layer's K (or V) cache buffer is laid out, for the kernels that write and read it:
//   f16:  [ctx, Hkv·D/2] u32, two f16 a word (2 bytes a value);
//   q8_0: int8 quants [ctx, Hkv, NB·32] four to a word from word 0, then the f16 scales [ctx, Hkv, NB]
//         two to a word from word scalesWord = ctx·Hkv·NB·8, NB = ⌈D/32⌉: 34 bytes a block of 32, as
//         llama.cpp's block_q8_0 (src/room/device-bytes.ts counts the same), the buffer rounded up to a word.
// Readers: shaders/lib/kv_read.wgsl; writers: qk_norm_rope / gated_qk_norm_rope (f16, or f32 staging
// for q8_0) and kv_store_q8_0.
import type { KvCacheType } from '../../../model/kv-quant.ts';
import type { HeadShape } from './qk-norm-rope.ts';

export interface KvLayout {
  type: KvCacheType;
  ctx: number;                 // tokens the cache holds
}

export const F16_KV: KvLayout = { type: 'f16', ctx: 0 };

/** Blocks of 32 per head. */
export function q8Blocks(D: number): number {
  return Math.ceil(D / 32);
}

/** The word of a q8_0 cache buffer where its scales start. */
export function q8ScalesWord(s: Pick<HeadShape, 'Hkv' | 'D'>, ctx: number): number {
  return ctx * s.Hkv * q8Blocks(s.D) * 8;
}

/** Bytes of one cache buffer (K or V) of `ctx` tokens. */
export function kvBufferBytes(s: Pick<HeadShape, 'Hkv' | 'D'>, kv: KvLayout): number {
  if (kv.type === 'f16') return kv.ctx * s.Hkv * s.D * 2;
  return Math.ceil((kv.ctx * s.Hkv * q8Blocks(s.D) * 34) / 4) * 4;
}

/** The readers' override constants (shaders/lib/kv_read.wgsl). */
export function kvReadConsts(s: Pick<HeadShape, 'Hkv' | 'D'>, kv: KvLayout): { KV_Q8: number; KV_SCALES: number } {
  return kv.type === 'q8_0' ? { KV_Q8: 1, KV_SCALES: q8ScalesWord(s, kv.ctx) } : { KV_Q8: 0, KV_SCALES: 0 };
}
