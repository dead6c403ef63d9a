// The reference KV cache: for each layer a device holds, keys and values [capacity, Hkv·D] (f32 arrays).
// By default every stored K/V value is rounded to f16, exactly as the GPU engine stores its cache
// (f16 packed in u32), so the two agree token for token even where top-2 logits are 1e-3 apart.
// With kvType 'q8_0' each head's values are rounded to what llama.cpp's q8_0 blocks read back
// (../kv-quant.ts), as the GPU engine's q8_0 cache stores them.
// Storage grows by doubling up to `capacity`, so a 40k-token context costs nothing until it is used.

import { roundHeadToQ8_0, type KvCacheType } from '../kv-quant.ts';
import { roundToF16 } from '../tensor-utils.ts';
import { KvBook } from '../kv-book.ts';
import type { KvView } from './ops.ts';

export interface KvCacheOptions {
  capacity: number;            // max tokens (the context size `ctx`)
  kvWidth: number;             // Hkv·D values per token per layer, for K and for V
  layers: number[];            // absolute layer indices held
  roundToF16?: boolean;        // store K/V rounded to f16 like the GPU engine (default true)
  kvType?: KvCacheType;        // 'q8_0': blocks of 32 within each head (needs headDim); default f16
  headDim?: number;            // D: kvWidth = Hkv·D
}

interface LayerSlot {
  keys: Float32Array;          // [allocated, kvWidth]
  values: Float32Array;        // [allocated, kvWidth]
  length: number;              // tokens stored
}

const INITIAL_TOKENS = 64;

export class KvCache extends KvBook<LayerSlot> {
  readonly kvWidth: number;
  readonly roundsToF16: boolean;
  readonly kvType: KvCacheType;
  private readonly headDim: number;

  constructor(opts: KvCacheOptions) {
    if (!(Number.isInteger(opts.capacity) && opts.capacity > 0)) throw new RangeError(`KvCache: capacity ${opts.capacity} must be a positive integer`);
    super('KvCache', opts.capacity);
    this.kvWidth = opts.kvWidth;
    this.roundsToF16 = opts.roundToF16 ?? true;
    this.kvType = opts.kvType ?? 'f16';
    this.headDim = opts.headDim ?? this.kvWidth;
    if (this.kvType === 'q8_0' && !(Number.isInteger(this.headDim) && this.headDim > 0 && this.kvWidth % this.headDim === 0)) {
      throw new RangeError(`KvCache: a q8_0 cache needs a head dimension dividing ${this.kvWidth}, not ${opts.headDim}`);
    }
    const initial = Math.min(INITIAL_TOKENS, this.capacity) * this.kvWidth;
    for (const layer of opts.layers) {
      this.slots.set(layer, { keys: new Float32Array(initial), values: new Float32Array(initial), length: 0 });
    }
  }

  /**
   * Append K/V for tokens at `positions` (which must continue this layer's cache).
   * keys/values: [n, kvWidth]. Rounded to f16 when the cache does so.
   */
  append(layer: number, positions: readonly number[], keys: Float32Array, values: Float32Array): void {
    const n = positions.length;
    const slot = this.slotToAppend(layer, n, (i) => positions[i]!);
    this.ensure(slot, slot.length + n);
    const at = slot.length * this.kvWidth;
    if (this.kvType === 'q8_0') {
      slot.keys.set(keys.subarray(0, n * this.kvWidth), at);
      slot.values.set(values.subarray(0, n * this.kvWidth), at);
      for (let h = 0; h < n * this.kvWidth; h += this.headDim) {
        roundHeadToQ8_0(slot.keys, at + h, this.headDim);
        roundHeadToQ8_0(slot.values, at + h, this.headDim);
      }
    } else {
      for (let i = 0; i < n * this.kvWidth; i++) {
        slot.keys[at + i] = this.roundsToF16 ? roundToF16(keys[i]!) : keys[i]!;
        slot.values[at + i] = this.roundsToF16 ? roundToF16(values[i]!) : values[i]!;
      }
    }
    slot.length += n;
  }

  /** Keys and values of one layer; rows [0, length(layer)) are valid. */
  view(layer: number): KvView {
    const s = this.slot(layer);
    return { keys: s.keys, values: s.values };
  }

  /** Drop entries at positions >= length in every layer (a checkpoint restore for dense models). */

  private ensure(slot: LayerSlot, tokens: number): void {
    const allocated = slot.keys.length / this.kvWidth;
    if (tokens <= allocated) return;
    let next = Math.max(allocated, 1);
    while (next < tokens) next *= 2;
    next = Math.min(next, this.capacity);
    const keys = new Float32Array(next * this.kvWidth);
    const values = new Float32Array(next * this.kvWidth);
    keys.set(slot.keys.subarray(0, slot.length * this.kvWidth));
    values.set(slot.values.subarray(0, slot.length * this.kvWidth));
    slot.keys = keys;
    slot.values = values;
  }
}
