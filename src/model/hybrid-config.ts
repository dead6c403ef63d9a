// Hugging Face config.json of a Qwen3.5 / Qwen3.6 model → ModelConfig. Released checkpoints are
// multimodal (architectures Qwen3_5ForConditionalGeneration / Qwen3_5MoeForConditionalGeneration,
// model_type "qwen3_5" / "qwen3_5_moe") with the language model's config under "text_config"; we read
// only that (the vision tower is never loaded). A text-only config ("qwen3_5_text" / "qwen3_5_moe_text"
// at the top level) reads the same. Names follow transformers' Qwen3_5TextConfig / Qwen3_5MoeTextConfig.
//
// What we refuse rather than ignore: attention biases, an ungated attention output (attn_output_gate
// false), rope scaling types other than "default", activations other than SiLU, layer_types that are not
// one of the two mixers, and linear-attention heads where n_v is not a multiple of n_k.

import { ConfigError } from './errors.ts';
import type { HybridConfig, LayerType, ModelConfig, ModelType, MoeConfig } from './types.ts';

type Json = Record<string, unknown>;

export const HYBRID_MODEL_TYPES = ['qwen3_5', 'qwen3_5_moe', 'qwen3_5_text', 'qwen3_5_moe_text'] as const;

export function isHybridModelType(t: unknown): boolean {
  return typeof t === 'string' && (HYBRID_MODEL_TYPES as readonly string[]).includes(t);
}

function obj(v: unknown): Json | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
}

function positiveInt(o: Json, key: string, file: string, fallback?: number): number {
  const v = o[key];
  if (v === undefined || v === null) {
    if (fallback !== undefined) return fallback;
    throw new ConfigError(`missing "text_config.${key}"`, { file });
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) throw new ConfigError(`"${key}" must be a positive integer, got ${JSON.stringify(v)}`, { file });
  return v;
}

function positive(v: unknown, key: string, file: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new ConfigError(`"${key}" must be a positive number, got ${JSON.stringify(v)}`, { file });
  return v;
}

function ids(v: unknown, key: string, file: string): number[] {
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  if (!list.every((id) => typeof id === 'number' && Number.isInteger(id) && id >= 0)) throw new ConfigError(`"${key}" must be a token id or a list of them, got ${JSON.stringify(v)}`, { file });
  return list as number[];
}

/** layer_types as given, or from full_attention_interval (HF's default: every 4th layer is full attention). */
function layerTypes(text: Json, numLayers: number, file: string): LayerType[] {
  const given = text.layer_types;
  if (given === undefined || given === null) {
    const every = positiveInt(text, 'full_attention_interval', file, 4);
    return Array.from({ length: numLayers }, (_, i) => ((i + 1) % every === 0 ? 'full_attention' : 'linear_attention'));
  }
  if (!Array.isArray(given) || given.length !== numLayers || !given.every((t) => t === 'linear_attention' || t === 'full_attention')) {
    throw new ConfigError(`"layer_types" must list "linear_attention" or "full_attention" for each of the ${numLayers} layers, got ${JSON.stringify(given)}`, { file });
  }
  return given as LayerType[];
}

export function parseQwen35Config(json: Json, file = 'config.json'): ModelConfig {
  const text = obj(json.text_config) ?? json;
  const textType = typeof text.model_type === 'string' ? text.model_type : json.model_type;
  const moe = textType === 'qwen3_5_moe_text' || json.model_type === 'qwen3_5_moe' || textType === 'qwen3_5_moe';
  if (text.attention_bias === true) throw new ConfigError('"attention_bias": true is not supported (Qwen3.5 has no biases)', { file });
  if (text.attn_output_gate === false) throw new ConfigError('"attn_output_gate": false is not supported (Qwen3.5 gates its attention output)', { file });
  const act = text.hidden_act;
  if (act !== undefined && act !== 'silu' && act !== 'swish') throw new ConfigError(`"hidden_act" ${JSON.stringify(act)} is not supported (SiLU only)`, { file });
  const rope = obj(text.rope_parameters) ?? obj(text.rope_scaling) ?? {};
  const ropeType = rope.rope_type ?? rope.type ?? 'default';
  if (ropeType !== 'default') throw new ConfigError(`rope type ${JSON.stringify(ropeType)} is not supported (plain RoPE only)`, { file });
  const hiddenSize = positiveInt(text, 'hidden_size', file);
  const numLayers = positiveInt(text, 'num_hidden_layers', file);
  const numHeads = positiveInt(text, 'num_attention_heads', file);
  const headDim = positiveInt(text, 'head_dim', file, 256);
  const factor = positive(rope.partial_rotary_factor ?? text.partial_rotary_factor ?? 0.25, 'partial_rotary_factor', file);
  const rotaryDim = Math.floor(headDim * factor);
  if (rotaryDim < 2 || rotaryDim % 2 !== 0 || rotaryDim > headDim) throw new ConfigError(`head_dim ${headDim} · partial_rotary_factor ${factor} = ${rotaryDim} rotary dims: must be even, ≥ 2 and ≤ head_dim`, { file });
  const theta = rope.rope_theta ?? text.rope_theta;
  if (theta === undefined) throw new ConfigError('missing "rope_parameters.rope_theta"', { file });
  const hybrid: HybridConfig = {
    layerTypes: layerTypes(text, numLayers, file),
    linearNumKeyHeads: positiveInt(text, 'linear_num_key_heads', file, 16),
    linearNumValueHeads: positiveInt(text, 'linear_num_value_heads', file, 32),
    linearKeyHeadDim: positiveInt(text, 'linear_key_head_dim', file, 128),
    linearValueHeadDim: positiveInt(text, 'linear_value_head_dim', file, 128),
    convKernel: positiveInt(text, 'linear_conv_kernel_dim', file, 4),
    rotaryDim,
  };
  if (hybrid.linearNumValueHeads % hybrid.linearNumKeyHeads !== 0) {
    throw new ConfigError(`linear_num_value_heads ${hybrid.linearNumValueHeads} is not a multiple of linear_num_key_heads ${hybrid.linearNumKeyHeads}`, { file });
  }
  const numKvHeads = positiveInt(text, 'num_key_value_heads', file, numHeads);
  if (numHeads % numKvHeads !== 0) throw new ConfigError(`num_attention_heads ${numHeads} is not a multiple of num_key_value_heads ${numKvHeads}`, { file });
  let moeConfig: MoeConfig | undefined;
  if (moe) {
    moeConfig = {
      numExperts: positiveInt(text, 'num_experts', file), numExpertsPerTok: positiveInt(text, 'num_experts_per_tok', file),
      moeIntermediateSize: positiveInt(text, 'moe_intermediate_size', file),
      normTopkProb: true,                 // Qwen3_5MoeTopKRouter always renormalises the top-k weights
      decoderSparseStep: 1, mlpOnlyLayers: [],  // every Qwen3.5 MoE layer is sparse
      sharedExpertIntermediateSize: positiveInt(text, 'shared_expert_intermediate_size', file),
    };
    if (moeConfig.numExpertsPerTok > moeConfig.numExperts) throw new ConfigError(`num_experts_per_tok ${moeConfig.numExpertsPerTok} exceeds num_experts ${moeConfig.numExperts}`, { file });
  }
  const bos = ids(text.bos_token_id ?? json.bos_token_id, 'bos_token_id', file);
  const modelType: ModelType = moe ? 'qwen3_5_moe' : 'qwen3_5';
  return {
    modelType, hiddenSize, numLayers, numHeads, numKvHeads, headDim,
    intermediateSize: moe ? moeConfig!.moeIntermediateSize : positiveInt(text, 'intermediate_size', file),
    vocabSize: positiveInt(text, 'vocab_size', file),
    ropeTheta: positive(theta, 'rope_theta', file),
    rmsNormEps: positive(text.rms_norm_eps ?? 1e-6, 'rms_norm_eps', file),
    tieWordEmbeddings: (text.tie_word_embeddings ?? json.tie_word_embeddings) === true,
    maxPositionEmbeddings: positiveInt(text, 'max_position_embeddings', file, 262144),
    ...(bos.length > 0 ? { bosTokenId: bos[0]! } : {}),
    eosTokenIds: ids(text.eos_token_id ?? json.eos_token_id, 'eos_token_id', file),
    ...(moeConfig ? { moe: moeConfig } : {}),
    hybrid,
  };
}
