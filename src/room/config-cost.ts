// The deal's cost from a model's config alone (no weight plan at hand: the start screen's "needs N
// devices", a config-only source). Bytes per weight by format: BF16 2; MLC q4f16_1 4 bits + an f16
// scale per 32 (0.5625); GGUF as llama-quantize's Q4_K_M mix lays it out (src/model/tiny/gguf-mix.ts):
// Q4_K (144 bytes / 256) by default, Q6_K (210 / 256) for the output (the tied embedding) and for attn_v,
// a hybrid's attn_qkv and ffn_down (experts' and shared too) in the layers use_more_bits picks; norms,
// routers and the conv kernel F32. Counting Q6_K layers at Q4_K's 4.5 bits was ~13% low on them.
import { useMoreBits } from '../model/tiny/gguf-mix.ts';
import { isLinearLayer, isMoeLayer, type ModelConfig, type WeightFormat } from '../model/types.ts';
import type { DealCost } from './deal.ts';
import { engineScratchBytes, headScratchBytes, layerCacheBytes, LOAD_PEAK_BYTES, type KvType } from './device-bytes.ts';

const Q4_K = 144 / 256, Q6_K = 210 / 256, F32 = 4;

/** Bytes a weight of `params` values takes: `more` = a tensor Q4_K_M gives Q6_K in this layer. */
function perParam(format: WeightFormat, more: boolean): number {
  if (format === 'safetensors') return 2;
  if (format === 'mlc') return 0.5 + 2 / 32;
  return more ? Q6_K : Q4_K;
}

/** Weight bytes of layer i (every expert of an MoE layer: a device holds them all). */
export function layerWeightEstimate(config: ModelConfig, format: WeightFormat, i: number): number {
  const { hiddenSize: H, headDim: D, numHeads, numKvHeads, intermediateSize: I } = config;
  const more = useMoreBits(i, config.numLayers);
  const q = (params: number, m = false) => params * perParam(format, m);
  const normBytes = format === 'safetensors' ? 2 : F32;
  const h = config.hybrid;
  let bytes = 2 * H * normBytes;                                           // input and post-attention norms
  if (h && isLinearLayer(config, i)) {
    const Kd = h.linearNumKeyHeads * h.linearKeyHeadDim, Vd = h.linearNumValueHeads * h.linearValueHeadDim, C = 2 * Kd + Vd;
    bytes += q(H * C, more) + q(H * Vd) + q(2 * H * h.linearNumValueHeads) + q(Vd * H)   // qkv, z (gate), b|a, out
      + C * h.convKernel * F32 + 2 * h.linearNumValueHeads * F32 + h.linearValueHeadDim * F32;   // conv, A and dt, norm
  } else {
    const gate = h ? 2 : 1;                                                // Qwen3.5's q_proj holds the output gate too
    bytes += q(H * gate * numHeads * D) + q(H * numKvHeads * D) + q(H * numKvHeads * D, more) + q(numHeads * D * H) + 2 * D * normBytes;
  }
  const m = config.moe;
  if (m && isMoeLayer(config, i)) {
    const E = m.numExperts, Ie = m.moeIntermediateSize;
    bytes += E * H * (format === 'gguf' ? F32 : perParam(format, false)) + q(2 * E * Ie * H) + q(E * H * Ie, more);
    if (m.sharedExpertIntermediateSize) {
      const Is = m.sharedExpertIntermediateSize;
      bytes += q(2 * Is * H) + q(H * Is, more) + H * (format === 'gguf' ? F32 : perParam(format, false));
    }
  } else {
    bytes += q(2 * I * H) + q(H * I, more);
  }
  return Math.ceil(bytes);
}

/** Embedding, final norm and head: the output (or the tied embedding) Q6_K in a Q4_K_M file. */
export function fixedWeightEstimate(config: ModelConfig, format: WeightFormat): number {
  const { vocabSize: V, hiddenSize: H } = config;
  const embedding = V * H * (format === 'gguf' && config.tieWordEmbeddings ? Q6_K : perParam(format, false));
  const head = config.tieWordEmbeddings ? 0 : V * H * (format === 'gguf' ? Q6_K : perParam(format, false));
  return Math.ceil(embedding + head + H * (format === 'safetensors' ? 2 : F32));
}

/** The DealCost at ctx from the config alone: each layer's estimated weights + cache, as dealCostFromPlan adds the rest. */
export function dealCost(config: ModelConfig, format: WeightFormat, ctx: number, snapshots = 0, kv: KvType = 'f16'): DealCost {
  const layerBytes = Array.from({ length: config.numLayers }, (_, i) => layerWeightEstimate(config, format, i) + layerCacheBytes(config, i, ctx, snapshots, kv));
  const uniform = layerBytes.every((b) => b === layerBytes[0]);
  const gateUp = 2 * config.intermediateSize * config.hiddenSize * perParam(format, false);
  return {
    numLayers: config.numLayers, bytesPerLayer: Math.max(0, ...layerBytes), ...(uniform ? {} : { layerBytes }),
    hostFixedBytes: fixedWeightEstimate(config, format) + headScratchBytes(config),
    deviceFixedBytes: engineScratchBytes(config, { ctx, gateUpSplit: gateUp > SPLIT_BINDING_BYTES, kv }) + LOAD_PEAK_BYTES,
    scratch: { ctx, gateUpSplit: gateUp > SPLIT_BINDING_BYTES, kv }, ctx, kv,
  };
}

/** The binding limit a share is dealt for: WebGPU's default maxStorageBufferBindingSize (128 MiB), what phones give. */
export const SPLIT_BINDING_BYTES = 128 * 2 ** 20;
