// What a row of the CPU engine's layer table (./layers.ts) is: for each mixer or ffn kind, what it
// refuses before anything is placed, and `place`, which copies the kind's weights into the kernels'
// memory once and returns the step that runs it. Steps work on addresses in the current frame of the
// kernels' memory (./wasm-kernels.ts): they read the normalised input [n, H] and return the address of
// what the layer adds to the residual stream [n, H].
import type { Linear, ModelConfig } from '../model/types.ts';
import type { CpuKvCache } from './kv-cache.ts';
import type { CpuLayerState } from './recurrent-state.ts';
import type { WasmKernels } from './wasm-kernels.ts';

export interface CpuLayerContext {
  k: WasmKernels;
  config: ModelConfig;
  kv: CpuKvCache;              // holds this layer when its mixer keeps a KV cache
  state?: CpuLayerState;       // this layer's recurrent state (in the kernels' memory) when its mixer has one (Gated DeltaNet)
  onExpert?: (expert: number, tokens: number) => void;
}

/** xn [n, H] at address xn, tokens at positions pos0.. -> address of the mixer's output [n, H]. */
export type CpuMixerStep = (ctx: CpuLayerContext, pos0: number, n: number, xn: number) => number;

/** hn [n, H] at address hn -> address of the ffn's output [n, H]. */
export type CpuFfnStep = (ctx: CpuLayerContext, n: number, hn: number) => number;

export interface CpuMixerRow<M> {
  /** The linears it places (for the byte count and the refusals). */
  linears(m: M): Linear[];
  place(k: WasmKernels, m: M, index: number): CpuMixerStep;
}

export interface CpuFfnRow<F> {
  linears(f: F): Linear[];
  place(k: WasmKernels, f: F, index: number): CpuFfnStep;
}
