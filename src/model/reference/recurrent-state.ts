// The recurrent state of the Gated DeltaNet layers the reference engine holds. Per layer: the conv state
// [K−1, C] (the last K−1 q|k|v inputs, oldest first) and the delta state [n_v, d_k, d_v], both f32
// Float32Arrays, plus how many tokens the layer has consumed. A snapshot copies every layer's state at
// one position; going back to a position restores it (zeros at 0). This is what makes a checkpoint of a
// hybrid model: the KV of its attention layers is cut, the state of its linear layers restored. The
// bookkeeping (snapshots, limits, the rules of restore) is every engine's: src/model/recurrent-book.ts.
import { DEFAULT_MAX_SNAPSHOTS, RecurrentStateBook, type StateSnapshot } from '../recurrent-book.ts';
import type { DeltaDims } from './gated-delta.ts';

export { DEFAULT_MAX_SNAPSHOTS };

export interface LayerState {
  conv: Float32Array;          // [(K−1)·C]
  delta: Float32Array;         // [n_v·d_k·d_v]
  length: number;              // tokens consumed
}

export interface RecurrentStateOptions {
  layers: number[];            // absolute indices of the linear-attention layers held
  dims: DeltaDims;
  /** Snapshots kept at most (default 66: the Generator's 64 answer checkpoints, the pinned one, one spare). */
  maxSnapshots?: number;
}

export class RecurrentState extends RecurrentStateBook<LayerState> {
  constructor(opts: RecurrentStateOptions) {
    super('RecurrentState', opts);
    for (const i of opts.layers) this.layers.set(i, { conv: new Float32Array(this.floats.conv), delta: new Float32Array(this.floats.delta), length: 0 });
  }

  protected copyOut(s: LayerState): StateSnapshot {
    return { conv: s.conv.slice(), delta: s.delta.slice() };
  }

  protected copyIn(s: LayerState, from: StateSnapshot): void {
    s.conv.set(from.conv);
    s.delta.set(from.delta);
  }

  protected zero(s: LayerState): void {
    s.conv.fill(0);
    s.delta.fill(0);
  }
}
