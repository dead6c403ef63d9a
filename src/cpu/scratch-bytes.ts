// The scratch the WASM engine (./engine.ts) takes in its memory besides its weights, KV cache and
// recurrent state, for a share of a model: what its row tells the deal (EngineRow.scratchBytes). The
// kernels allocate from the bottom up and free by frames (./wasm-kernels.ts), and the memory never
// shrinks, so what counts is the deepest frame of one call:
//   runLayers on n tokens: the input x [n, H], then per layer, one after the other,
//     the mixer's frame: xn [n, H] + the mixer's buffers (below) and each linear's scratch,
//     the FFN's frame:   hn [n, H] + the FFN's buffers and each linear's scratch;
//   logits: the last row [H], the logits [V] and the head linear's scratch.
// A linear takes per thread two decoded rows of K floats (linearScratchBytes), and with q8 activations
// its input quantized once (q8Bytes). n is the tokens of one call: the room's micro-chunks and decode
// rows stay within ENGINE_MAX_BATCH (a bound, as for the WebGPU engine). Pure and small: the row loads it
// on the start page. test/unit/cpu/scratch-bytes.test.ts holds it to the engine's own allocations.
import { ENGINE_MAX_BATCH, type ScratchOptions } from '../model/engine-scratch.ts';
import { isLinearLayer, isMoeLayer, type ModelConfig } from '../model/types.ts';
import { WASM_MAX_THREADS } from './threads-here.ts';

/** The memory grows by WebAssembly pages: the last one may be partly used. */
const PAGE = 65536;

/** A linear's scratch per thread: two rows of K floats (the f32 prefill's row pairs), 16-byte aligned. */
export const LINEAR_SCRATCH_BYTES_PER_K = 8;
export function linearScratchBytes(K: number): number {
  return Math.ceil((K * LINEAR_SCRATCH_BYTES_PER_K) / 16) * 16;
}

/** Bytes of x [n, K] quantized for the integer linears (./asm/quantize.ts q8Bytes: codes, tiles' scales and sums, rows' records). */
export function q8Bytes(n: number, K: number): number {
  return n * K * 2 + ((n + 3) >> 2) * (K >> 5) * 48 + n * K + n * (K >> 5) * 12;
}

const a16 = (bytes: number): number => Math.ceil(bytes / 16) * 16;
const f32s = (count: number): number => a16(count * 4);

/**
 * The WASM engine's scratch for a share of `config` (the deepest frame over the kinds of layer the model
 * has: a device is dealt any of them). threads: the pool's (default WASM_MAX_THREADS, a bound).
 */
export function wasmScratchBytes(config: ModelConfig, o: ScratchOptions, threads = WASM_MAX_THREADS): number {
  const { layers, head } = wasmScratchFrames(config, o, threads);
  return Math.max(layers, head) + PAGE;
}

/** The deepest frame of runLayers on `maxBatch` tokens (layers) and of the head's logits (head). */
export function wasmScratchFrames(config: ModelConfig, o: ScratchOptions, threads = WASM_MAX_THREADS): { layers: number; head: number } {
  const { hiddenSize: H, numHeads: Hq, numKvHeads: Hkv, headDim: D, intermediateSize: I, vocabSize: V } = config;
  const n = o.maxBatch ?? ENGINE_MAX_BATCH, T = threads;
  const linear = (K: number): number => a16(T * linearScratchBytes(K)) + a16(q8Bytes(n, K));
  const layers = Array.from({ length: config.numLayers }, (_, i) => i);
  // attention over the cache: per thread a key row and a query group's scores (f64) up to ctx positions
  const scores = T * (Math.max(f32s(D) + a16((Hq / Hkv) * o.ctx * 8), 2 * f32s(D) + a16(o.ctx * 8)));
  const attend = (qkvWidth: number, extra: number): number => f32s(n * qkvWidth) + linear(H) + extra
    + f32s(n * Hq * D) + 2 * f32s(n * Hkv * D) + f32s(n * (config.hybrid?.rotaryDim ?? D))   // q, k, v, the RoPE table of the call
    + f32s(n * Hq * D) + scores + f32s(n * H) + linear(Hq * D);                             // attention out, scores, o
  const mixers: number[] = [];
  const h = config.hybrid;
  if (layers.some((i) => !isLinearLayer(config, i))) {
    mixers.push(h ? attend((2 * Hq + 2 * Hkv) * D, f32s(n * Hq * D)) : attend((Hq + 2 * Hkv) * D, 0));   // a hybrid's q carries its gate
  }
  if (h && layers.some((i) => isLinearLayer(config, i))) {
    const C = 2 * h.linearNumKeyHeads * h.linearKeyHeadDim + h.linearNumValueHeads * h.linearValueHeadDim;
    const Vd = h.linearNumValueHeads * h.linearValueHeadDim, nv = h.linearNumValueHeads;
    mixers.push(f32s(n * (C + Vd)) + f32s(n * 2 * nv) + 2 * linear(H)    // q|k|v|z, b|a
      + f32s(n * C) + 2 * f32s(n * nv) + f32s(n * Vd) + f32s(n * H) + linear(Vd));   // conv, g, β, o, out
  }
  const swiglu = (Ii: number): number => f32s(n * 2 * Ii) + linear(H) + f32s(n * Ii) + f32s(n * H) + linear(Ii);
  const ffns = [layers.some((i) => !isMoeLayer(config, i)) ? swiglu(I) : 0];
  const m = config.moe;
  if (m && layers.some((i) => isMoeLayer(config, i))) {
    const Ie = m.moeIntermediateSize, Is = m.sharedExpertIntermediateSize;
    const expert = f32s(n * H) + f32s(n * 2 * Ie) + f32s(n * Ie) + f32s(n * H) + 3 * linear(Math.max(H, Ie));   // one expert's frame: up to n tokens
    ffns.push(f32s(n * m.numExperts) + linear(H) + Math.max(expert, Is ? swiglu(Is) + f32s(n) + linear(H) : 0) + f32s(n * H));
  }
  return { layers: f32s(n * H) + f32s(n * H) + Math.max(...mixers, ...ffns), head: f32s(H) + f32s(V) + linear(H) };
}
