// What a device holding a share allocates besides its layers' weights, as the WebGPU engine
// (src/gpu/create-engine.ts) sizes it, so the deal can count every byte (test/gpu/deal-bytes.test.ts
// wraps the engine's device in a counting allocator and checks the deal against it):
//   - per attention layer: K and V at ctx, f16 (2 bytes a value) or q8_0 (llama.cpp's block_q8_0: an f16
//     scale and 32 int8 values, 34 bytes per 32 values, blocks within a head);
//   - per Gated DeltaNet layer: its recurrent state, live and once per checkpoint snapshot;
//   - per device ("engine scratch"): the RoPE table [ctx, R] f32 (grows with ctx: 16 MiB at 32k for
//     R = 128), the activations for maxBatch tokens a step, the MoE routing / expert buffers, the decode
//     attention partials, a q8_0 cache's f32 K/V stages, read-back staging;
//   - on the host: the head's logits, mask and top-k buffers, and its read-backs;
//   - the load's own peak: the weights in flight in JS while a share loads (LOAD_PEAK_BYTES).
// Layer fields are read through the helpers of src/model/types.ts (isLinearLayer, isMoeLayer), never
// from the layer types themselves.
import { LOAD_IN_FLIGHT_BYTES } from '../model/load-stream.ts';
import { isLinearLayer, isMoeLayer, linearStateBytes, type ModelConfig } from '../model/types.ts';

export type KvType = 'f16' | 'q8_0';
export const KV_TYPES: readonly KvType[] = ['f16', 'q8_0'];

/** llama.cpp block_q8_0: `d` f16 + `qs` int8[32]. */
export const Q8_0_BLOCK = { values: 32, bytes: 34 } as const;

/** The WebGPU engine's tokens per step (createWebGPUEngine's maxBatch default): activations are sized for it. */
export const ENGINE_MAX_BATCH = 64;
/** The most rows one read-back holds: the engine runs and reads a forward maxBatch rows at a time. */
export const MAX_READ_ROWS = ENGINE_MAX_BATCH;
/** Rows of the room's prefill micro-chunks (HostOptions.microChunk's default): reads of this many rows and fewer (drafts, decode) are staged apart. */
export const MICRO_ROWS = 16;
/** The most decode-attention key splits any adapter class uses (src/gpu/tuning.ts: discrete GPUs, 32). */
export const MAX_ATTENTION_SPLITS = 32;
/** Top-k candidates: 2 words each, 64 + 1 a block (src/gpu/head.ts); blocks of WG·ITEMS logits, 256 at the smallest (a CPU adapter's). */
const TOPK = { maxK: 64, logitsPerBlock: 256 } as const;
/**
 * What a load holds at its peak beyond its share's place on the GPU: the streamed load's bound on weights
 * in flight in JS (src/model/load-stream.ts LOAD_IN_FLIGHT_BYTES, one constant: pieces are written to
 * their GPU buffers as they pass; test/gpu/streamed-load.test.ts measures it on a 30B-A3B share).
 */
export const LOAD_PEAK_BYTES = LOAD_IN_FLIGHT_BYTES;

/** Bytes of one token's K (or V) row of an attention layer: numKvHeads heads of headDim values. */
export function kvRowBytes(config: Pick<ModelConfig, 'numKvHeads' | 'headDim'>, kv: KvType = 'f16'): number {
  const { numKvHeads: Hkv, headDim: D } = config;
  return kv === 'f16' ? Hkv * D * 2 : Hkv * Math.ceil(D / Q8_0_BLOCK.values) * Q8_0_BLOCK.bytes;
}

/** KV cache bytes of one attention layer at ctx tokens (K and V). */
export function kvBytesPerLayer(config: Pick<ModelConfig, 'numKvHeads' | 'headDim'>, ctx: number, kv: KvType = 'f16'): number {
  return 2 * ctx * kvRowBytes(config, kv);
}

/**
 * What layer i holds besides its weights: its KV at ctx, or (Gated DeltaNet) its recurrent state, live
 * and in each of `snapshots` checkpoint snapshots (the Generator keeps the pinned one and ckpt answers).
 */
export function layerCacheBytes(config: ModelConfig, i: number, ctx: number, snapshots: number, kv: KvType = 'f16'): number {
  return isLinearLayer(config, i) ? (1 + snapshots) * linearStateBytes(config) : kvBytesPerLayer(config, ctx, kv);
}

/** An activation buffer of `floats` f32, as the engine makes it (whole 16 bytes, at least 16). */
const act = (floats: number): number => Math.max(16, Math.ceil(floats / 4) * 16);
const pow2 = (n: number): number => Math.max(256, 2 ** Math.ceil(Math.log2(Math.max(1, n))));

export interface ScratchOptions {
  ctx: number;
  /** The engine's tokens per step (default ENGINE_MAX_BATCH). */
  maxBatch?: number;
  /** A dense layer's gate|up weight is split across buffers (it then needs a [T, 2I] buffer). */
  gateUpSplit?: boolean;
  /** The KV cache's type: q8_0 adds the f32 K and V stages [T, Hkv·D] that kv_store_q8_0 quantizes from. */
  kv?: KvType;
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
    + pow2(MAX_READ_ROWS * H * 4) + 2 * pow2(MICRO_ROWS * H * 4);   // read-back staging (one per power of two): a step's rows, micro-chunks and the smaller reads below them
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

/** What the host's head allocates besides its weights: final norm, logits, mask, top-k and pick buffers, the logits' read-back. */
export function headScratchBytes(config: ModelConfig): number {
  const V = config.vocabSize, H = config.hiddenSize;
  const blocks = Math.ceil(V / TOPK.logitsPerBlock);
  return H * 4 + V * 4 + Math.ceil(V / 32) * 4 + 16 + blocks * (TOPK.maxK + 1) * 8 + 16 + (4 + 2 * TOPK.maxK) * 4 + pow2(V * 4);
}
