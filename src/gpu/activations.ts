// The activation buffers an engine's layers share (layer-contract.ts Activations), sized for T tokens a
// step and for the kinds of layer it holds: the Qwen3.5 mixers' scratch when it holds one, the MoE
// buffers when it holds an MoE ffn, a [T, 2·I] gate|up when a dense ffn's gate|up is split.
import type { KvCacheType } from '../model/kv-quant.ts';
import type { DecoderLayerWeights, ModelConfig } from '../model/types.ts';
import { createMoeActivations, type MoeLayer } from './ffns/moe.ts';
import { chunkCount, uploadF32 } from './gpu-weights.ts';
import { attentionPartFloats } from './kernels/attention/attention.ts';
import type { Activations } from './layer-contract.ts';
import { ropeTable } from './layers.ts';
import type { PipelineCache } from './pipelines.ts';

/** The widths a hybrid model's activations need (att must also hold the gated norm's [T, n_v·d_v]). */
/** What a step's activation widths depend on. */
type WidthConfig = Pick<ModelConfig, 'hiddenSize' | 'numHeads' | 'numKvHeads' | 'headDim' | 'intermediateSize' | 'moe' | 'hybrid'>;

export function hybridWidths(cfg: WidthConfig): { qkv: number; att: number; lin: number; ba: number; conv: number; delta: number } {
  const h = cfg.hybrid!;
  const { numHeads: Hq, numKvHeads: Hkv, headDim: D } = cfg;
  const C = 2 * h.linearNumKeyHeads * h.linearKeyHeadDim + h.linearNumValueHeads * h.linearValueHeadDim;
  const Vd = h.linearNumValueHeads * h.linearValueHeadDim;
  return { qkv: 2 * (Hq + Hkv) * D, att: Math.max(Hq * D, Vd), lin: C + Vd, ba: 2 * h.linearNumValueHeads, conv: C, delta: Vd };
}

/**
 * The widest activation a step allocates per token, in floats: the [T, width] buffer that first meets a
 * device's binding limit as the step grows (src/gpu/tuning.ts prefillStepFor). A dense gate|up counts as
 * split ([T, 2·I]); MoE counts its k expert rows of a token ([T·k, 2·I_e] and [T·k, H]).
 */
export function widestActivationRow(cfg: WidthConfig): number {
  const { hiddenSize: H, numHeads: Hq, numKvHeads: Hkv, headDim: D, intermediateSize: I } = cfg;
  const m = cfg.moe;
  const moe = m ? [m.numExperts, m.numExpertsPerTok * Math.max(2 * m.moeIntermediateSize, H), m.sharedExpertIntermediateSize ?? 0] : [];
  return Math.max(H, (Hq + 2 * Hkv) * D, Hq * D, 2 * I, ...moe, ...(cfg.hybrid ? Object.values(hybridWidths(cfg)) : []));
}

/** The sparse MLPs of these layers (Qwen3 MoE and Qwen3.5 MoE), by ascending layer index. */
export function moeLayersOf(layers: Iterable<DecoderLayerWeights>): MoeLayer[] {
  const out: MoeLayer[] = [];
  for (const w of layers) if (w.ffn.kind === 'moe') out.push({ index: w.index, moe: w.ffn.moe });
  return out.sort((a, b) => a.index - b.index);
}

export interface ActivationSizes {
  T: number;                   // tokens a step (maxBatch)
  ctx: number;                 // RoPE table rows
  maxBindingBytes: number;     // decides whether a dense gate|up is split
  kv?: KvCacheType;            // q8_0: a [T, Hkv·D] f32 stage for K and for V
}

export function createActivations(
  device: GPUDevice, cache: PipelineCache, cfg: ModelConfig, held: readonly DecoderLayerWeights[], { T, ctx, maxBindingBytes, kv }: ActivationSizes,
): Activations {
  const { hiddenSize: H, numHeads: Hq, numKvHeads: Hkv, headDim: D, intermediateSize: I } = cfg;
  const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  // Activations are read in vec4s: sizes are whole 16 bytes.
  const buf = (label: string, floats: number): GPUBuffer => device.createBuffer({ label, size: Math.max(16, Math.ceil(floats / 4) * 16), usage: storage });
  const moeLayers = moeLayersOf(held);
  const gateUpSplit = held.some((w) => w.ffn.kind === 'dense' && chunkCount(w.ffn.gateUp, maxBindingBytes) > 1);
  const hybrid = cfg.hybrid && held.some((w) => w.mixer.kind !== 'attention') ? hybridWidths(cfg) : undefined;
  return {
    step: device.createBuffer({ label: 'step', size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST }),
    x: buf('x', T * H), xn: buf('xn', T * H), qkv: buf('qkv', T * Math.max((Hq + 2 * Hkv) * D, hybrid?.qkv ?? 0)),
    q: buf('q', T * Hq * D), att: buf('att', T * Math.max(Hq * D, hybrid?.att ?? 0)), act: buf('act', T * I),
    part: buf('attention partials', attentionPartFloats({ Hq, Hkv, D }, cache.tuning.attention.splits)),
    gu: gateUpSplit ? buf('gate|up', T * 2 * I) : undefined,
    rope: uploadF32(device, ropeTable(ctx, cfg.hybrid?.rotaryDim ?? D, cfg.ropeTheta), 'rope cos/sin'),
    hybrid: hybrid && {
      gate: buf('output gate', T * Hq * D), lin: buf('q|k|v|z', T * hybrid.lin), ba: buf('b|a', T * hybrid.ba),
      conv: buf('conv out', T * hybrid.conv), delta: buf('delta out', T * hybrid.delta),
    },
    moe: moeLayers.length > 0 ? createMoeActivations(device, cfg.moe!, H, T, moeLayers) : undefined,
    kvStage: kv === 'q8_0' ? { k: buf('K stage', T * Hkv * D), v: buf('V stage', T * Hkv * D) } : undefined,
  };
}
