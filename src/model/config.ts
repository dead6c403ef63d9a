// config.json (Hugging Face) and mlc-chat-config.json (MLC / WebLLM) -> ModelConfig; GGUF files carry
// their config in their metadata (formats/gguf/gguf-config.ts). Qwen3 dense (model_type "qwen3"), Qwen3
// MoE ("qwen3_moe") and the Qwen3.5 hybrids ("qwen3_5", "qwen3_5_moe": ./hybrid-config.ts) are accepted;
// anything else is refused by name.

import { CONFIG_LIMITS } from './config-limits.ts';
import { ConfigError, UnsupportedArchitectureError } from './errors.ts';
import { cachedGgufModel } from './formats/gguf/gguf-read.ts';
import { parseGgufConfig } from './formats/gguf/gguf-config.ts';
import { isHybridModelType, parseQwen35Config } from './hybrid-config.ts';
import type { ModelConfig, ModelSource, MoeConfig } from './types.ts';

type Json = Record<string, unknown>;

export function parseJsonFile(text: string, file: string): Json {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`not valid JSON (${(e as Error).message})`, { file, cause: e });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError('expected a JSON object at the top level', { file });
  }
  return value as Json;
}

export { CONFIG_LIMITS } from './config-limits.ts';

/** config.json / mlc-chat-config.json keys and their bounds (anything sized by them is sized after the check). */
const HF_LIMITS: Record<string, number> = {
  num_hidden_layers: CONFIG_LIMITS.layers, decoder_sparse_step: CONFIG_LIMITS.layers, full_attention_interval: CONFIG_LIMITS.layers,
  mtp_num_hidden_layers: CONFIG_LIMITS.layers,
  hidden_size: CONFIG_LIMITS.hiddenSize,
  num_attention_heads: CONFIG_LIMITS.heads, num_key_value_heads: CONFIG_LIMITS.heads,
  linear_num_key_heads: CONFIG_LIMITS.heads, linear_num_value_heads: CONFIG_LIMITS.heads,
  head_dim: CONFIG_LIMITS.headDim, linear_key_head_dim: CONFIG_LIMITS.headDim, linear_value_head_dim: CONFIG_LIMITS.headDim,
  intermediate_size: CONFIG_LIMITS.intermediateSize, moe_intermediate_size: CONFIG_LIMITS.intermediateSize,
  shared_expert_intermediate_size: CONFIG_LIMITS.intermediateSize,
  vocab_size: CONFIG_LIMITS.vocabSize,
  num_experts: CONFIG_LIMITS.experts, num_experts_per_tok: CONFIG_LIMITS.experts,
  max_position_embeddings: CONFIG_LIMITS.contextLength, context_window_size: CONFIG_LIMITS.contextLength,
  linear_conv_kernel_dim: CONFIG_LIMITS.convKernel,
  rope_theta: CONFIG_LIMITS.ropeTheta,
};

/** Every bounded key of a config object (and of its text_config / model_config), checked before parsing. */
function checkLimits(json: Json, file: string): void {
  for (const o of [json, json.text_config, json.model_config, json.rope_parameters, (json.text_config as Json | undefined)?.rope_parameters]) {
    if (o === null || typeof o !== 'object' || Array.isArray(o)) continue;
    for (const [key, max] of Object.entries(HF_LIMITS)) {
      const v = (o as Json)[key];
      if (typeof v === 'number' && v > max) throw new ConfigError(`"${key}" is ${v}, more than the ${max} pooled reads`, { file });
    }
  }
}

function int(obj: Json, key: string, file: string, fallback?: number): number {
  const v = obj[key];
  if (v === undefined || v === null) {
    if (fallback !== undefined) return fallback;
    throw new ConfigError(`missing "${key}"`, { file });
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
    throw new ConfigError(`"${key}" must be a positive integer, got ${JSON.stringify(v)}`, { file });
  }
  return v;
}

function num(obj: Json, key: string, file: string, fallback: number): number {
  const v = obj[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
    throw new ConfigError(`"${key}" must be a positive number, got ${JSON.stringify(v)}`, { file });
  }
  return v;
}

function tokenIds(v: unknown, key: string, file: string): number[] {
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  for (const id of list) {
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) {
      throw new ConfigError(`"${key}" must be a token id or a list of them, got ${JSON.stringify(v)}`, { file });
    }
  }
  return list as number[];
}

function requireQwen3(modelType: unknown, architectures: unknown, file: string): void {
  if (modelType === 'qwen3' || modelType === 'qwen3_moe') return;
  const archs = Array.isArray(architectures) ? architectures.filter((a) => typeof a === 'string') : [];
  const found = typeof modelType === 'string' && modelType !== '' ? modelType : archs[0] ?? 'unknown (no model_type)';
  throw new UnsupportedArchitectureError(String(found), { file });
}

/** Things Qwen3 configs can switch on that our forward pass does not implement: refuse, do not ignore. */
function refuseUnsupportedOptions(c: Json, file: string): void {
  if (c.attention_bias === true) throw new ConfigError('"attention_bias": true is not supported (Qwen3 dense has no biases)', { file });
  if (c.rope_scaling !== undefined && c.rope_scaling !== null) {
    throw new ConfigError(`"rope_scaling" ${JSON.stringify(c.rope_scaling)} is not supported (plain RoPE only)`, { file });
  }
  if (c.use_sliding_window === true) throw new ConfigError('"use_sliding_window": true is not supported', { file });
  const act = c.hidden_act;
  if (act !== undefined && act !== 'silu' && act !== 'swish') {
    throw new ConfigError(`"hidden_act" ${JSON.stringify(act)} is not supported (SwiGLU with silu only)`, { file });
  }
}

function validateShape(cfg: ModelConfig, file: string): ModelConfig {
  if (cfg.numHeads % cfg.numKvHeads !== 0) {
    throw new ConfigError(`num_attention_heads ${cfg.numHeads} is not a multiple of num_key_value_heads ${cfg.numKvHeads}`, { file });
  }
  return cfg;
}

/** HF Qwen3MoeConfig's MoE fields (defaults as in transformers: norm_topk_prob false, step 1, no dense layers). */
function parseMoe(json: Json, file: string, numLayers: number): MoeConfig {
  const mlpOnly = json.mlp_only_layers ?? [];
  if (!Array.isArray(mlpOnly) || !mlpOnly.every((i) => Number.isInteger(i) && i >= 0 && i < numLayers)) {
    throw new ConfigError(`"mlp_only_layers" must be a list of layer indices below ${numLayers}, got ${JSON.stringify(mlpOnly)}`, { file });
  }
  const norm = json.norm_topk_prob ?? false;
  if (typeof norm !== 'boolean') throw new ConfigError(`"norm_topk_prob" must be true or false, got ${JSON.stringify(norm)}`, { file });
  const moe: MoeConfig = {
    numExperts: int(json, 'num_experts', file, 128),
    numExpertsPerTok: int(json, 'num_experts_per_tok', file, 8),
    moeIntermediateSize: int(json, 'moe_intermediate_size', file, 768),
    normTopkProb: norm,
    decoderSparseStep: int(json, 'decoder_sparse_step', file, 1),
    mlpOnlyLayers: mlpOnly as number[],
  };
  if (moe.numExpertsPerTok > moe.numExperts) {
    throw new ConfigError(`num_experts_per_tok ${moe.numExpertsPerTok} exceeds num_experts ${moe.numExperts}`, { file });
  }
  if (json.shared_expert_intermediate_size) throw new ConfigError('"shared_expert_intermediate_size" is set: shared experts are not Qwen3 MoE (Qwen2 MoE?)', { file });
  return moe;
}

/** Hugging Face config.json of a Qwen3 dense or Qwen3 MoE model. */
export function parseHfConfig(json: Json, file = 'config.json'): ModelConfig {
  checkLimits(json, file);
  if (isHybridModelType(json.model_type)) return parseQwen35Config(json, file);
  requireQwen3(json.model_type, json.architectures, file);
  refuseUnsupportedOptions(json, file);
  const hiddenSize = int(json, 'hidden_size', file);
  const numHeads = int(json, 'num_attention_heads', file);
  const bos = tokenIds(json.bos_token_id, 'bos_token_id', file);
  const numLayers = int(json, 'num_hidden_layers', file);
  const moe = json.model_type === 'qwen3_moe' ? { moe: parseMoe(json, file, numLayers) } : {};
  return validateShape({
    modelType: json.model_type === 'qwen3_moe' ? 'qwen3_moe' : 'qwen3',
    hiddenSize,
    numLayers,
    numHeads,
    numKvHeads: int(json, 'num_key_value_heads', file, numHeads),
    headDim: int(json, 'head_dim', file, Math.floor(hiddenSize / numHeads)),
    intermediateSize: int(json, 'intermediate_size', file),
    vocabSize: int(json, 'vocab_size', file),
    ropeTheta: num(json, 'rope_theta', file, 1e6),
    rmsNormEps: num(json, 'rms_norm_eps', file, 1e-6),
    tieWordEmbeddings: json.tie_word_embeddings === true,
    maxPositionEmbeddings: int(json, 'max_position_embeddings', file, 40960),
    ...(bos.length > 0 ? { bosTokenId: bos[0]! } : {}),
    eosTokenIds: tokenIds(json.eos_token_id, 'eos_token_id', file),
    ...moe,
  }, file);
}

/**
 * MLC's mlc-chat-config.json: model_type and token ids at the top, the model's shape under
 * "model_config" (same key names as config.json, plus context_window_size; head_dim 0 means H / heads).
 */
export function parseMlcChatConfig(json: Json, file = 'mlc-chat-config.json'): ModelConfig {
  checkLimits(json, file);
  const mc = json.model_config;
  if (mc === null || typeof mc !== 'object' || Array.isArray(mc)) {
    throw new ConfigError('missing "model_config" object', { file });
  }
  const m = mc as Json;
  requireQwen3(json.model_type ?? m.model_type, m.architectures, file);
  if ((json.model_type ?? m.model_type) !== 'qwen3') throw new UnsupportedArchitectureError(`${String(json.model_type ?? m.model_type)} (MLC)`, { file });
  refuseUnsupportedOptions(m, file);
  const hiddenSize = int(m, 'hidden_size', file);
  const numHeads = int(m, 'num_attention_heads', file);
  const headDim = m.head_dim === 0 ? undefined : m.head_dim;
  const bos = tokenIds(json.bos_token_id, 'bos_token_id', file);
  return validateShape({
    modelType: 'qwen3',
    hiddenSize,
    numLayers: int(m, 'num_hidden_layers', file),
    numHeads,
    numKvHeads: int(m, 'num_key_value_heads', file, numHeads),
    headDim: int({ head_dim: headDim }, 'head_dim', file, Math.floor(hiddenSize / numHeads)),
    intermediateSize: int(m, 'intermediate_size', file),
    vocabSize: int(m, 'vocab_size', file),
    ropeTheta: num(m, 'rope_theta', file, 1e6),
    rmsNormEps: num(m, 'rms_norm_eps', file, 1e-6),
    tieWordEmbeddings: m.tie_word_embeddings === true,
    maxPositionEmbeddings: int(m, 'context_window_size', file, int(json, 'context_window_size', file, 40960)),
    ...(bos.length > 0 ? { bosTokenId: bos[0]! } : {}),
    eosTokenIds: tokenIds(json.eos_token_id, 'eos_token_id', file),
  }, file);
}

const decoder = new TextDecoder();

/** The config file a model's shape came from, for messages ("… but config.json implies …"). */
export type ConfigFileName = 'config.json' | 'mlc-chat-config.json' | 'the GGUF metadata';

/**
 * The config of the model at `source`: config.json when present, else mlc-chat-config.json.
 * Stop tokens from generation_config.json are added (Qwen3 instruct models stop on both
 * <|im_end|> and <|endoftext|>, and config.json lists only one).
 */
export async function loadModelConfig(source: ModelSource): Promise<ModelConfig> {
  return (await readModelConfig(source)).config;
}

export async function readModelConfig(source: ModelSource): Promise<{ config: ModelConfig; file: ConfigFileName; bytes: number }> {
  let cfg: ModelConfig;
  let file: ConfigFileName;
  let bytes: Uint8Array;
  if (source.modelFile) {
    const model = await cachedGgufModel(source, source.modelFile);
    return { config: parseGgufConfig(model), file: 'the GGUF metadata', bytes: model.headers.reduce((a, h) => a + h.headerBytes, 0) };
  }
  if (await source.exists('config.json')) {
    file = 'config.json';
    bytes = await source.readFile(file);
    cfg = parseHfConfig(parseJsonFile(decoder.decode(bytes), file), file);
  } else if (await source.exists('mlc-chat-config.json')) {
    file = 'mlc-chat-config.json';
    bytes = await source.readFile(file);
    cfg = parseMlcChatConfig(parseJsonFile(decoder.decode(bytes), file), file);
  } else {
    throw new ConfigError('neither config.json nor mlc-chat-config.json found', { file: source.label });
  }
  let total = bytes.byteLength;
  if (await source.exists('generation_config.json')) {
    const gfile = 'generation_config.json';
    const gbytes = await source.readFile(gfile);
    total += gbytes.byteLength;
    const gen = parseJsonFile(decoder.decode(gbytes), gfile);
    for (const id of tokenIds(gen.eos_token_id, 'eos_token_id', gfile)) {
      if (!cfg.eosTokenIds.includes(id)) cfg.eosTokenIds.push(id);
    }
  }
  return { config: cfg, file, bytes: total };
}
