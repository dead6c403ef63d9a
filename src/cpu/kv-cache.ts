// The CPU engine's KV cache, in the kernels' memory, placed once for the whole context at engine
// creation. Per attention layer, keys and values [capacity, Hkv·D] stored as
//   f16: every value rounded to f16 exactly as src/model/reference/kv-cache.ts rounds it;
//   q8_0: llama.cpp's blocks of 32 values of one head (src/model/kv-quant.ts, ./asm/kv-q8.ts), int8
//         quants [capacity, Hkv·nb, 32] and f16 scales [capacity, Hkv·nb], nb = ⌈D/32⌉ a head; they
//         read back as exactly the values the reference's q8_0 cache holds.
// so attention reads the same numbers as the reference's.
import { KvBook } from '../model/kv-book.ts';
import { Q8_0_VALUES, type KvCacheType } from '../model/kv-quant.ts';
import type { Q8Blocks, WasmKernels } from './wasm-kernels.ts';

interface Slot { keys: number; values: number; keyScales: number; valueScales: number; length: number }

/** One layer's cache: f16 rows at keys/values, or q8_0 blocks. */
export type KvLayerView =
  | { type: 'f16'; keys: number; values: number }
  | { type: 'q8_0'; keys: Q8Blocks; values: Q8Blocks };

/** Bytes a token's K (or V) row takes in a cache of `type`: f16 2 a value; q8_0 34 a 32-value block of a head. */
export function kvRowBytes(type: KvCacheType, kvHeads: number, headDim: number): number {
  return type === 'f16' ? kvHeads * headDim * 2 : kvHeads * Math.ceil(headDim / Q8_0_VALUES) * (Q8_0_VALUES + 2);
}

export class CpuKvCache extends KvBook<Slot> {
  readonly kvWidth: number;
  readonly type: KvCacheType;
  private readonly headDim: number;
  private readonly blocks: number;           // q8_0 blocks a token row: Hkv·⌈D/32⌉

  constructor(private readonly k: WasmKernels, opts: { capacity: number; kvHeads: number; headDim: number; layers: number[]; type?: KvCacheType }) {
    super('CpuKvCache', opts.capacity);
    this.headDim = opts.headDim;
    this.kvWidth = opts.kvHeads * opts.headDim;
    this.type = opts.type ?? 'f16';
    this.blocks = opts.kvHeads * Math.ceil(opts.headDim / Q8_0_VALUES);
    const cap = opts.capacity;
    for (const layer of opts.layers) {
      this.slots.set(layer, this.type === 'f16'
        ? { keys: k.alloc(cap * this.kvWidth * 2), values: k.alloc(cap * this.kvWidth * 2), keyScales: 0, valueScales: 0, length: 0 }
        : { keys: k.alloc(cap * this.blocks * Q8_0_VALUES), values: k.alloc(cap * this.blocks * Q8_0_VALUES), keyScales: k.alloc(cap * this.blocks * 2), valueScales: k.alloc(cap * this.blocks * 2), length: 0 });
    }
  }

  /** Bytes the cache holds (all layers, K and V). */
  get bytes(): number {
    return this.slots.size * 2 * this.capacity * kvRowBytes(this.type, this.kvWidth / this.headDim, this.headDim);
  }

  /** Append n tokens' K and V (f32 [n, kvWidth] at kp, vp) at position pos0, which must continue the layer. */
  append(layer: number, pos0: number, n: number, kp: number, vp: number): void {
    const s = this.slotToAppend(layer, n, (i) => pos0 + i);
    if (this.type === 'f16') {
      const at = pos0 * this.kvWidth * 2;
      this.k.toHalfAt(kp, s.keys + at, n * this.kvWidth);
      this.k.toHalfAt(vp, s.values + at, n * this.kvWidth);
    } else {
      const rows = n * (this.kvWidth / this.headDim), b0 = pos0 * this.blocks;
      this.k.quantizeQ8At(kp, { quants: s.keys + b0 * Q8_0_VALUES, scales: s.keyScales + b0 * 2 }, rows, this.headDim);
      this.k.quantizeQ8At(vp, { quants: s.values + b0 * Q8_0_VALUES, scales: s.valueScales + b0 * 2 }, rows, this.headDim);
    }
    s.length += n;
  }

  /** Where one layer's keys and values are; rows [0, length) are valid. */
  view(layer: number): KvLayerView {
    const s = this.slot(layer);
    return this.type === 'f16'
      ? { type: 'f16', keys: s.keys, values: s.values }
      : { type: 'q8_0', keys: { quants: s.keys, scales: s.keyScales }, values: { quants: s.values, scales: s.valueScales } };
  }

  /** One layer's cached K/V as f32 [length, kvWidth] each (tests compare caches with it). */
  read(layer: number): { keys: Float32Array; values: Float32Array } {
    const s = this.slot(layer);
    const count = s.length * this.kvWidth;
    const v = this.view(layer);
    return this.k.frame(() => {
      const kp = this.k.alloc(count * 4), vp = this.k.alloc(count * 4);
      if (v.type === 'f16') {
        this.k.fromHalfAt(v.keys, kp, count);
        this.k.fromHalfAt(v.values, vp, count);
      } else {
        this.k.dequantQ8At(v.keys, count / this.headDim, this.headDim, kp);
        this.k.dequantQ8At(v.values, count / this.headDim, this.headDim, vp);
      }
      return { keys: this.k.f32(kp, count).slice(), values: this.k.f32(vp, count).slice() };
    });
  }

}
