// What a row of the reference engine's layer table (./layer-table.ts) is: for each mixer or ffn kind,
// `bind` decodes the layer's small tensors once (at engine construction) and returns the step that runs
// it on a batch of rows. A step returns what the layer adds to the residual stream; it never writes x.
import type { Linear, ModelConfig } from '../types.ts';
import type { KvCache } from './kv-cache.ts';
import type { DecodedLinear } from './ops.ts';
import type { LayerState } from './recurrent-state.ts';

/** A weight as matmul takes it: decoded to f32 once when the engine's budget allows, else as stored. */
export type WeightView = (w: Linear) => Linear | DecodedLinear;

/** What a layer's steps read and write besides its weights: the engine's caches, for this layer. */
export interface LayerContext {
  config: ModelConfig;
  weight: WeightView;
  kv: KvCache;                 // holds this layer when its mixer keeps a KV cache
  state?: LayerState;          // this layer's recurrent state when its mixer has one (Gated DeltaNet)
  deltaRule: 'recurrent' | 'chunked';
  onExpert?: (expert: number, tokens: number) => void;   // every (expert, tokens) run, for accounting
}

/** xn [n, H] (normalised input) at `positions` -> the mixer's output [n, H]. */
export type MixerStep = (ctx: LayerContext, positions: number[], xn: Float32Array) => Float32Array;

/** hn [n, H] (normalised) -> the ffn's output [n, H]. */
export type FfnStep = (ctx: LayerContext, hn: Float32Array, n: number) => Float32Array;

export interface ReferenceMixerRow<M> {
  bind(m: M, index: number): MixerStep;
}

export interface ReferenceFfnRow<F> {
  bind(f: F, index: number): FfnStep;
}
