// The CPU engine's KV cache, in the kernels' memory: per attention layer keys and values f16
// [capacity, Hkv·D], every value rounded to f16 exactly as src/model/reference/kv-cache.ts rounds it
// (so attention reads the same numbers), placed once for the whole context at engine creation.
import { ContextFullError, PositionError } from '../model/engine-errors.ts';
import type { WasmKernels } from './wasm-kernels.ts';

interface Slot { keys: number; values: number; length: number }

export class CpuKvCache {
  readonly capacity: number;
  readonly kvWidth: number;
  private readonly slots = new Map<number, Slot>();

  constructor(private readonly k: WasmKernels, opts: { capacity: number; kvWidth: number; layers: number[] }) {
    this.capacity = opts.capacity;
    this.kvWidth = opts.kvWidth;
    const bytes = opts.capacity * opts.kvWidth * 2;
    for (const layer of opts.layers) this.slots.set(layer, { keys: k.alloc(bytes), values: k.alloc(bytes), length: 0 });
  }

  /** Bytes the cache holds (all layers, K and V). */
  get bytes(): number {
    return this.slots.size * 2 * this.capacity * this.kvWidth * 2;
  }

  has(layer: number): boolean {
    return this.slots.has(layer);
  }

  length(layer: number): number {
    return this.slot(layer).length;
  }

  /** The smallest length over the held layers (0 when none are held). */
  commonLength(): number {
    let min = Infinity;
    for (const s of this.slots.values()) min = Math.min(min, s.length);
    return min === Infinity ? 0 : min;
  }

  /** Append n tokens' K and V (f32 [n, kvWidth] at kp, vp) at position pos0, which must continue the layer. */
  append(layer: number, pos0: number, n: number, kp: number, vp: number): void {
    const s = this.slot(layer);
    if (pos0 !== s.length) throw new PositionError(`layer ${layer}: position ${pos0} does not continue the KV cache of ${s.length} tokens (expected ${s.length})`);
    if (s.length + n > this.capacity) throw new ContextFullError(`layer ${layer}: ${s.length} + ${n} tokens exceed the context of ${this.capacity}`);
    const at = pos0 * this.kvWidth * 2;
    this.k.toHalfAt(kp, s.keys + at, n * this.kvWidth);
    this.k.toHalfAt(vp, s.values + at, n * this.kvWidth);
    s.length += n;
  }

  /** Addresses of one layer's f16 keys and values; rows [0, length) are valid. */
  view(layer: number): { keys: number; values: number } {
    const s = this.slot(layer);
    return { keys: s.keys, values: s.values };
  }

  /** One layer's cached K/V as f32 [length, kvWidth] each (tests compare caches with it). */
  read(layer: number): { keys: Float32Array; values: Float32Array } {
    const s = this.slot(layer);
    const count = s.length * this.kvWidth;
    return this.k.frame(() => {
      const kp = this.k.alloc(count * 4), vp = this.k.alloc(count * 4);
      this.k.fromHalfAt(s.keys, kp, count);
      this.k.fromHalfAt(s.values, vp, count);
      return { keys: this.k.f32(kp, count).slice(), values: this.k.f32(vp, count).slice() };
    });
  }

  truncate(length: number): void {
    for (const s of this.slots.values()) s.length = Math.min(s.length, length);
  }

  private slot(layer: number): Slot {
    const s = this.slots.get(layer);
    if (!s) throw new RangeError(`CpuKvCache: layer ${layer} is not held`);
    return s;
  }
}
