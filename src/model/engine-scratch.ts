// The scratch the WebGPU engine (src/gpu/create-engine.ts) allocates on a device besides its layers'
// weights and cache, for a share of a model: the RoPE table [ctx, R] f32 (grows with ctx: 16 MiB at 32k
// for R = 128), the activations for maxBatch tokens a step, the MoE routing / expert buffers, the decode
// attention partials, a q8_0 cache's f32 K/V stages, read-back staging. The deal asks each engine's row
// for its scratch (EngineRow.scratchBytes); the rows count this model (test/gpu/deal-bytes.test.ts checks
// it against the WebGPU engine's own allocations). Layer fields are read through the helpers of
// ./types.ts (isMoeLayer), never from the layer types themselves.
import type { KvCacheType } from './kv-quant.ts';
import { isMoeLayer, type ModelConfig } from './types.ts';

/**
 * The WebGPU engine's tokens per step when nobody picked one (createWebGPUEngine's maxBatch default, and
 * what the deal counts for a device that reports no step): activations are sized for it.
 */
export const ENGINE_MAX_BATCH = 64;
/**
 * The most tokens a step any device may report or be dealt (README, "The prefill step"): a discrete GPU's
 * class step (src/gpu/tuning.ts PREFILL_STEPS). A guest's claim past it is refused on the wire.
 */
export const MAX_ENGINE_STEP = 512;
/** Rows of the room's prefill micro-chunks (HostOptions.microChunk's default): reads of this many rows and fewer (drafts, decode) are staged apart. */
export const MICRO_ROWS = 16;
/** The most decode-attention key splits any adapter class uses (src/gpu/tuning.ts: discrete GPUs, 32). */
export const MAX_ATTENTION_SPLITS = 32;

/** An activation buffer of `floats` f32, as the engine makes it (whole 16 bytes, at least 16). */
const act = (floats: number): number => Math.max(16, Math.ceil(floats / 4) * 16);
const pow2 = (n: number): number => Math.max(256, 2 ** Math.ceil(Math.log2(Math.max(1, n))));

export interface ScratchOptions {
  ctx: number;
  /** The engine's tokens per step (default ENGINE_MAX_BATCH): its activations and its largest read-back are that many rows. */
  maxBatch?: number;
  /** A dense layer's gate|up weight is split across buffers (it then needs a [T, 2I] buffer). */
  gateUpSplit?: boolean;
  /** The KV cache's type: q8_0 adds the f32 K and V stages [T, Hkv·D] that kv_store_q8_0 quantizes from. */
  kv?: KvCacheType;
}

/**
 * Bytes every engine holding layers of this model allocates besides its layers (the largest over the
 * kinds of layer the model has: a device is dealt any of them): RoPE table, activations, attention
 * partials, MoE and hybrid buffers, read-back staging.
 */
export function engineScratchBytes(config: ModelConfig, opts: ScratchOptions): number {
  const { hiddenSize: H, numHeads: Hq, numKvHeads: Hkv, headDim: D, intermediateSize: I } = config;
  const T = opts.maxBatch ?? ENGINE_MAX_BATCH;
  const h = config.hybrid;
  const C = h ? 2 * h.linearNumKeyHeads * h.linearKeyHeadDim + h.linearNumValueHeads * h.linearValueHeadDim : 0;
  const Vd = h ? h.linearNumValueHeads * h.linearValueHeadDim : 0;
  const rotary = h?.rotaryDim ?? D;
  const layers = Array.from({ length: config.numLayers }, (_, i) => i);
  const anyMoe = layers.some((i) => isMoeLayer(config, i));
  let bytes = 16                                             // step uniform
    + 2 * act(T * H)                                         // x, xn
    + act(T * Math.max((Hq + 2 * Hkv) * D, h ? 2 * (Hq + Hkv) * D : 0))   // qkv (a hybrid's q holds its gate)
    + act(T * Hq * D)                                        // q
    + act(T * Math.max(Hq * D, Vd))                          // att
    + act(T * I)                                             // act
    + act(Hq * MAX_ATTENTION_SPLITS * (D + 2))               // decode attention partials
    + (opts.gateUpSplit ? act(T * 2 * I) : 0)
    + (opts.kv === 'q8_0' ? 2 * act(T * Hkv * D) : 0)         // q8_0: K and V stages
    + Math.max(4, opts.ctx * rotary * 4)                     // RoPE (cos, sin) [ctx, R/2] f32 pairs
    + Math.max(16, T * 4)                                    // token ids
    + pow2(T * H * 4) + 2 * pow2(MICRO_ROWS * H * 4);   // read-back staging (one per power of two): a step's rows, micro-chunks and the smaller reads below them
  if (h) bytes += act(T * Hq * D) + act(T * (C + Vd)) + act(T * 2 * h.linearNumValueHeads) + act(T * C) + act(T * Vd);
  const m = config.moe;
  if (m && anyMoe) {
    const k = m.numExpertsPerTok, pairs = T * k, Ie = m.moeIntermediateSize, E = m.numExperts;
    const moeLayers = layers.filter((i) => isMoeLayer(config, i)).length;
    bytes += 16                                              // routing params
      + act(T * E) + act(3 * pairs + E + 1)                  // router logits, routing
      + act(pairs * Ie) + act(pairs * 2 * Ie)                // expert act, gate|up (when unfused)
      + act(pairs * H) + act(moeLayers * E);                 // expert outputs, bytes-read counters (every MoE layer, a bound)
    if (m.sharedExpertIntermediateSize) bytes += act(T * m.sharedExpertIntermediateSize) + act(T * H) + act(T);
  }
  return bytes;
}
