// Qwen3.5 / Qwen3.6 GGUFs (general.architecture "qwen35" / "qwen35moe") as llama.cpp's converter writes
// them: the config from the metadata, the tensors a request needs with the ne the metadata implies, and
// the canonical hybrid layers assembled from them. GGUF's layout is already our canonical one
// (docs/hybrid-models.md): norms hold 1 + w, ssm_a holds −exp(A_log), conv1d is [K, C]-ne, and value
// heads are in tiled order (the converter reorders them when n_k ≠ n_v), which the layers record as
// valueHeads 'tiled'. The MTP block the converter appends after the main layers (nextn_predict_layers,
// counted in block_count) is never read.

import { ConfigError } from '../../errors.ts';
import type { LoadOptions, PreparedLoad } from '../../load-plan.ts';
import type {
  DecoderLayerWeights, GatedDeltaNetWeights, HybridConfig, FfnWeights, MixerWeights, LayerType, Linear, ModelConfig, TensorData, WeightRequest,
} from '../../types.ts';
import { isLinearLayer } from '../../types.ts';
import { GGUF_HYBRID as X } from '../qwen35-names.ts';
import { GGUF_NAMES as N } from './gguf-names.ts';
import type { GgufMetadataValue, GgufModel, GgufTensorInfo } from './gguf-read.ts';

type Meta = Record<string, GgufMetadataValue>;

export const HYBRID_ARCHITECTURES = ['qwen35', 'qwen35moe'] as const;

/** The hybrid fields of a qwen35 / qwen35moe GGUF; layer types from the tensors present (cross-checked). */
export function ggufHybridConfig(model: GgufModel, arch: string, num: (key: string, fallback?: number, integer?: boolean) => number,
  numLayers: number, headDim: number): HybridConfig {
  const m = model.metadata;
  const file = model.files[0]!;
  const k = (s: string) => `${arch}.${s}`;
  const nk = num(k('ssm.group_count')), nv = num(k('ssm.time_step_rank')), dk = num(k('ssm.state_size'));
  const inner = num(k('ssm.inner_size'));
  if (inner % nv !== 0) throw new ConfigError(`"${k('ssm.inner_size')}" ${inner} is not a multiple of ssm.time_step_rank ${nv}`, { file });
  if (nv % nk !== 0) throw new ConfigError(`ssm.time_step_rank ${nv} (value heads) is not a multiple of ssm.group_count ${nk} (key heads)`, { file });
  const rotaryDim = num(k('rope.dimension_count'), headDim);
  if (rotaryDim % 2 !== 0 || rotaryDim > headDim) throw new ConfigError(`"${k('rope.dimension_count')}" ${rotaryDim} must be even and at most key_length ${headDim}`, { file });
  // A layer is Gated DeltaNet when it has ssm_a (llama.cpp's is_recr); the interval, when given, must agree.
  const layerTypes: LayerType[] = Array.from({ length: numLayers }, (_, i) => (model.tensors.has(X.ssmA(i)) ? 'linear_attention' : 'full_attention'));
  const interval = m[k('full_attention_interval')];
  if (typeof interval === 'number') {
    const bad = layerTypes.findIndex((t, i) => (t === 'full_attention') !== ((i + 1) % interval === 0));
    if (bad >= 0) throw new ConfigError(`layer ${bad} is ${layerTypes[bad]} but "${k('full_attention_interval')}" ${interval} says otherwise`, { file });
  }
  return {
    layerTypes, linearNumKeyHeads: nk, linearNumValueHeads: nv, linearKeyHeadDim: dk, linearValueHeadDim: inner / nv,
    convKernel: num(k('ssm.conv_kernel')), rotaryDim,
  };
}

/** A tensor's expected ne (or `alt`), its layer, and whether it must be a float type. */
export interface Want { ne: number[]; alt?: number[]; layer?: number; norm?: boolean }

/** Tensor names of a hybrid request with their ne (any of the listed shapes), from the metadata. */
export function hybridWanted(c: ModelConfig, req: WeightRequest): Map<string, Want> {
  const h = c.hybrid!, H = c.hiddenSize, D = c.headDim;
  const Kd = h.linearNumKeyHeads * h.linearKeyHeadDim, Vd = h.linearNumValueHeads * h.linearValueHeadDim, C = 2 * Kd + Vd, nv = h.linearNumValueHeads;
  const out = new Map<string, Want>();
  for (let i = req.layers[0]; i < req.layers[1]; i++) {
    const at = (name: string, ne: number[], norm = false) => out.set(name, { ne, layer: i, ...(norm ? { norm } : {}) });
    at(N.attnNorm(i), [H], true);
    at(X.postNorm(i), [H], true);
    if (isLinearLayer(c, i)) {
      at(X.attnQkv(i), [H, C]); at(X.attnGate(i), [H, Vd]); at(X.ssmBeta(i), [H, nv]); at(X.ssmAlpha(i), [H, nv]);
      at(X.ssmConv(i), [h.convKernel, C], true); at(X.ssmA(i), [nv], true); at(X.ssmDt(i), [nv], true);
      at(X.ssmNorm(i), [h.linearValueHeadDim], true); at(X.ssmOut(i), [Vd, H]);
    } else {
      at(N.q(i), [H, 2 * c.numHeads * D]); at(N.k(i), [H, c.numKvHeads * D]); at(N.v(i), [H, c.numKvHeads * D]);
      at(N.o(i), [c.numHeads * D, H]); at(N.qNorm(i), [D], true); at(N.kNorm(i), [D], true);
    }
    const m = c.moe;
    if (m) {
      const E = m.numExperts, I = m.moeIntermediateSize, Is = m.sharedExpertIntermediateSize!;
      at(N.router(i), [H, E]); at(N.gateExps(i), [H, I, E]); at(N.upExps(i), [H, I, E]); at(N.downExps(i), [I, H, E]);
      at(X.sharedGate(i), [H, Is]); at(X.sharedUp(i), [H, Is]); at(X.sharedDown(i), [Is, H]);
      out.set(X.sharedRouter(i), { ne: [H, 1], alt: [H], layer: i });  // shared_expert_gate [1, H]; some converters squeeze it
    } else {
      at(N.gate(i), [H, c.intermediateSize]); at(N.up(i), [H, c.intermediateSize]); at(N.down(i), [c.intermediateSize, H]);
    }
  }
  return out;
}

export interface HybridAssembly {
  tensor: (name: string) => TensorData;       // a small float tensor as F32, shape = ne reversed
  linear: (...names: string[]) => Linear;     // tensors stacked along rows
}

/** The canonical hybrid layers of a request from the located GGUF tensors. */
export function assembleHybridLayers(c: ModelConfig, req: WeightRequest, { tensor, linear }: HybridAssembly): Map<number, DecoderLayerWeights> {
  const layers = new Map<number, DecoderLayerWeights>();
  for (let i = req.layers[0]; i < req.layers[1]; i++) {
    const mixer: MixerWeights = isLinearLayer(c, i)
      ? deltaNet(i)
      : { kind: 'gated_attention', qkv: linear(N.q(i), N.k(i), N.v(i)), qNorm: tensor(N.qNorm(i)), kNorm: tensor(N.kNorm(i)), o: linear(N.o(i)) };
    const m = c.moe;
    const ffn: FfnWeights = !m ? { kind: 'dense', gateUp: linear(N.gate(i), N.up(i)), down: linear(N.down(i)) } : {
      kind: 'moe',
      moe: {
        numExperts: m.numExperts, topK: m.numExpertsPerTok, normTopkProb: m.normTopkProb, intermediate: m.moeIntermediateSize,
        router: linear(N.router(i)), gate: linear(N.gateExps(i)), up: linear(N.upExps(i)), down: linear(N.downExps(i)),
      },
      shared: {
        intermediate: m.sharedExpertIntermediateSize!, gateUp: linear(X.sharedGate(i), X.sharedUp(i)), down: linear(X.sharedDown(i)),
        gate: linear(X.sharedRouter(i)),
      },
    };
    layers.set(i, { index: i, inputNorm: tensor(N.attnNorm(i)), postNorm: tensor(X.postNorm(i)), mixer, ffn });
  }
  return layers;

  function deltaNet(i: number): GatedDeltaNetWeights {
    return {
      kind: 'gated_delta_net', qkvz: linear(X.attnQkv(i), X.attnGate(i)), ba: linear(X.ssmBeta(i), X.ssmAlpha(i)),
      conv: tensor(X.ssmConv(i)),                       // ne [K, C] → [C, K]
      a: tensor(X.ssmA(i)), dtBias: tensor(X.ssmDt(i)), norm: tensor(X.ssmNorm(i)), out: linear(X.ssmOut(i)), valueHeads: 'tiled',
    };
  }
}

export type { GgufTensorInfo, LoadOptions, Meta, PreparedLoad };
