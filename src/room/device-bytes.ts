// What a device holding a share allocates besides its layers' weights, as the WebGPU engine
// (src/gpu/create-engine.ts) sizes it, so the deal can count every byte (test/gpu/deal-bytes.test.ts
// wraps the engine's device in a counting allocator and checks the deal against it):
//   - per attention layer: K and V at ctx, f16 (2 bytes a value) or q8_0 (llama.cpp's block_q8_0: an f16
//     scale and 32 int8 values, 34 bytes per 32 values, blocks within a head);
//   - per Gated DeltaNet layer: its recurrent state, live and once per checkpoint snapshot;
//   - per device ("engine scratch"): what its engine's row says (EngineRow.scratchBytes; the model of the
//     WebGPU engine's buffers is src/model/engine-scratch.ts);
//   - on the host: the head's logits, mask and top-k buffers, and its read-backs;
//   - the load's own peak: the weights in flight in JS while a share loads (LOAD_PEAK_BYTES).
// Layer fields are read through the helpers of src/model/types.ts (isLinearLayer, isMoeLayer), never
// from the layer types themselves.
import { LOAD_IN_FLIGHT_BYTES } from '../model/load-stream.ts';
import { isLinearLayer, linearStateBytes, type ModelConfig } from '../model/types.ts';

export type KvType = 'f16' | 'q8_0';
export const KV_TYPES: readonly KvType[] = ['f16', 'q8_0'];

/** llama.cpp block_q8_0: `d` f16 + `qs` int8[32]. */
export const Q8_0_BLOCK = { values: 32, bytes: 34 } as const;

export { ENGINE_MAX_BATCH, MAX_ATTENTION_SPLITS, MAX_ENGINE_STEP, MICRO_ROWS, engineScratchBytes, type ScratchOptions } from '../model/engine-scratch.ts';
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

/** A read-back staging buffer: a power of two, at least 256 bytes. */
const pow2 = (n: number): number => Math.max(256, 2 ** Math.ceil(Math.log2(Math.max(1, n))));

/** What the host's head allocates besides its weights: final norm, logits, mask, top-k and pick buffers, the logits' read-back. */
export function headScratchBytes(config: ModelConfig): number {
  const V = config.vocabSize, H = config.hiddenSize;
  const blocks = Math.ceil(V / TOPK.logitsPerBlock);
  return H * 4 + V * 4 + Math.ceil(V / 32) * 4 + 16 + blocks * (TOPK.maxK + 1) * 8 + 16 + (4 + 2 * TOPK.maxK) * 4 + pow2(V * 4);
}
