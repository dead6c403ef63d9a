// The bookkeeping of a KV cache, shared by every engine that keeps its own: per held layer how many tokens
// it stores, the capacity (the context), cutting back (truncate) and the checks before an append (a
// position that does not continue the layer is a PositionError, one past the context a ContextFullError,
// both before anything changes). Each engine keeps only its storage in its slots: the reference's
// Float32Arrays (src/model/reference/kv-cache.ts), the WASM engine's rows in its kernels' memory
// (src/cpu/kv-cache.ts).
import { ContextFullError, PositionError } from './engine-errors.ts';

export abstract class KvBook<S extends { length: number }> {
  protected readonly slots = new Map<number, S>();

  /** name: the class, for messages. */
  protected constructor(private readonly name: string, readonly capacity: number) {}

  has(layer: number): boolean {
    return this.slots.has(layer);
  }

  /** Tokens stored for one layer. */
  length(layer: number): number {
    return this.slot(layer).length;
  }

  /** Tokens stored in every layer (the smallest per-layer length; 0 when no layers are held). */
  commonLength(): number {
    let min = Infinity;
    for (const s of this.slots.values()) min = Math.min(min, s.length);
    return min === Infinity ? 0 : min;
  }

  /** Drop every layer's tokens at positions >= length (the storage stays: it is overwritten). */
  truncate(length: number): void {
    if (!(Number.isInteger(length) && length >= 0)) throw new RangeError(`${this.name}.truncate: ${length} is not a length`);
    for (const s of this.slots.values()) s.length = Math.min(s.length, length);
  }

  protected slot(layer: number): S {
    const s = this.slots.get(layer);
    if (!s) throw new RangeError(`${this.name}: layer ${layer} is not held (holds ${[...this.slots.keys()].join(', ') || 'none'})`);
    return s;
  }

  /** The layer's slot once `positions` (n of them, each `at(i)`) continue it and fit the context; throws otherwise, changing nothing. */
  protected slotToAppend(layer: number, n: number, at: (i: number) => number): S {
    const s = this.slot(layer);
    for (let i = 0; i < n; i++) {
      const p = at(i);
      if (p !== s.length + i) throw new PositionError(`layer ${layer}: position ${p} does not continue the KV cache of ${s.length} tokens (expected ${s.length + i})`);
    }
    if (s.length + n > this.capacity) throw new ContextFullError(`layer ${layer}: ${s.length} + ${n} tokens exceed the context of ${this.capacity}`);
    return s;
  }
}
