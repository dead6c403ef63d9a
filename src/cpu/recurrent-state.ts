// The CPU engine's Gated DeltaNet state, in the kernels' memory (the WASM kernels update it in place):
// per held linear layer the conv state [K−1, C] and the delta state [n_v, d_k, d_v], f32, placed once at
// engine creation, plus the tokens it has consumed. Snapshots are f32 copies in JS (they would crowd a
// 4 GiB wasm32 memory otherwise): snapshot copies out of the memory, restore copies back. Only the
// storage is here: the bookkeeping and its messages are every engine's (src/model/recurrent-book.ts),
// so checkpoints behave as the reference's.
import { RecurrentStateBook, type StateSnapshot } from '../model/recurrent-book.ts';
import type { DeltaDims } from '../model/reference/gated-delta.ts';
import type { WasmKernels } from './wasm-kernels.ts';

/** One layer's live state: addresses of conv [(K−1)·C] and delta [n_v·d_k·d_v] f32, and its length. */
export interface CpuLayerState { conv: number; delta: number; length: number }

export class CpuRecurrentState extends RecurrentStateBook<CpuLayerState> {
  constructor(private readonly k: WasmKernels, opts: { layers: number[]; dims: DeltaDims; maxSnapshots?: number }) {
    super('CpuRecurrentState', opts);
    for (const i of opts.layers) {
      const s = { conv: k.alloc(this.floats.conv * 4), delta: k.alloc(this.floats.delta * 4), length: 0 };
      this.layers.set(i, s);
      this.zero(s);
    }
  }

  /** One layer's state as f32 copies (tests compare it with the reference's). */
  read(i: number): StateSnapshot {
    return this.copyOut(this.layer(i));
  }

  protected copyOut(s: CpuLayerState): StateSnapshot {
    return { conv: this.k.f32(s.conv, this.floats.conv).slice(), delta: this.k.f32(s.delta, this.floats.delta).slice() };
  }

  protected copyIn(s: CpuLayerState, from: StateSnapshot): void {
    this.k.f32(s.conv, this.floats.conv).set(from.conv);
    this.k.f32(s.delta, this.floats.delta).set(from.delta);
  }

  protected zero(s: CpuLayerState): void {
    this.k.f32(s.conv, this.floats.conv).fill(0);
    this.k.f32(s.delta, this.floats.delta).fill(0);
  }
}
