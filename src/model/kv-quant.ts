// How the KV cache stores a value: f16 (the default) or q8_0, llama.cpp's --cache-type-k/v q8_0 block:
// per block of 32 values of one head, d = max|x| / 127 kept as f16 and q = round(x / d) as int8
// (llama.cpp's quantize_row_q8_0_ref, in f32: id = 1/d, q = roundf(x·id), half away from zero); a
// value reads back as q·f16(d). A head of D values takes ⌈D/32⌉ blocks (the last padded with zeros).
// The reference KV cache (./reference/kv-cache.ts) stores the value it would read back, so it stays
// the oracle of the WebGPU engine's q8_0 cache (shaders/kv_store_q8_0.wgsl writes it the same way).
import { f16BitsToF32, f32ToF16Bits } from './tensor-utils.ts';

export type KvCacheType = 'f16' | 'q8_0';
export const KV_CACHE_TYPES: readonly KvCacheType[] = ['f16', 'q8_0'];
export const Q8_0_VALUES = 32;

export function isKvCacheType(v: unknown): v is KvCacheType {
  return v === 'f16' || v === 'q8_0';
}

/** One q8_0 block of `x[from .. from + count)` (count ≤ 32): its f16 scale bits and 32 int8 quants. */
export function quantizeQ8_0Block(x: ArrayLike<number>, from: number, count: number): { d: number; qs: Int8Array } {
  let amax = 0;
  for (let j = 0; j < count; j++) amax = Math.max(amax, Math.abs(x[from + j]!));
  const d = Math.fround(amax / 127);
  const id = d !== 0 ? Math.fround(1 / d) : 0;
  const qs = new Int8Array(Q8_0_VALUES);
  for (let j = 0; j < count; j++) {
    const v = Math.fround(x[from + j]! * id);
    qs[j] = Math.sign(v) * Math.floor(Math.abs(v) + 0.5);
  }
  return { d: f32ToF16Bits(d), qs };
}

/** Round `count` values of one head at `from` to what a q8_0 cache reads back, block by block, in place. */
export function roundHeadToQ8_0(x: Float32Array, from: number, count: number): void {
  for (let b = 0; b < count; b += Q8_0_VALUES) {
    const n = Math.min(Q8_0_VALUES, count - b);
    const { d, qs } = quantizeQ8_0Block(x, from + b, n);
    const scale = f16BitsToF32(d);
    for (let j = 0; j < n; j++) x[from + b + j] = Math.fround(qs[j]! * scale);
  }
}
