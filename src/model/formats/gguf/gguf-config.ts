// GGUF metadata → ModelConfig, for general.architecture "qwen3", "qwen3moe", and the Qwen3.5 hybrids
// "qwen35" / "qwen35moe" (keys as llama.cpp's convert_hf_to_gguf.py writes them: {arch}.block_count,
// .embedding_length, .attention.head_count, ...; the hybrid's own in ./gguf-hybrid.ts).
//
// Qwen3.5: block_count counts the MTP block(s) appended after the main layers (nextn_predict_layers);
// the model has block_count − nextn_predict_layers layers. Its MoE has a shared expert
// (expert_shared_feed_forward_length) and always renormalises the top-k weights.
//
// Where llama.cpp and HF differ for Qwen3 MoE we follow HF, the definition:
//   - norm_topk_prob: llama.cpp always renormalises the top-k weights for qwen3moe. GGUF has no key for
//     it unless {arch}.expert_weights_norm is written; without it we take true (what llama.cpp does and
//     what the released Qwen3 MoE configs say).
//   - decoder_sparse_step / mlp_only_layers: llama.cpp assumes every layer is MoE. We read a layer as
//     dense when its tensors are the dense ffn_{gate,up,down} (no ffn_gate_inp), as HF would build it.

import { CONFIG_LIMITS as C } from '../../config-limits.ts';
import { ConfigError, UnsupportedArchitectureError } from '../../errors.ts';
import type { ModelConfig } from '../../types.ts';
import { ggufHybridConfig } from './gguf-hybrid.ts';
import { GGUF_ARCHITECTURES, GGUF_NAMES, type GgufArchitecture } from './gguf-names.ts';
import type { GgufMetadataValue, GgufModel } from './gguf-read.ts';

type Meta = Record<string, GgufMetadataValue>;

/** The shortest decimal that rounds to this f32 (1e-6 stored as f32 reads back as 1e-6, as written). */
function shortestF32(x: number): number {
  for (let p = 1; p <= 9; p++) {
    const y = Number(x.toPrecision(p));
    if (Math.fround(y) === x) return y;
  }
  return x;
}

/** The bound of each architecture number, by the key after "{arch}." (CONFIG_LIMITS says why each is what it is). */
const LIMITS_BY_KEY: Record<string, number> = {
  block_count: C.layers, embedding_length: C.hiddenSize,
  'attention.head_count': C.heads, 'attention.head_count_kv': C.heads,
  'attention.key_length': C.headDim, 'attention.value_length': C.headDim, 'rope.dimension_count': C.headDim,
  feed_forward_length: C.intermediateSize, expert_feed_forward_length: C.intermediateSize,
  expert_shared_feed_forward_length: C.intermediateSize, 'ssm.inner_size': C.intermediateSize,
  vocab_size: C.vocabSize, expert_count: C.experts, expert_used_count: C.experts, context_length: C.contextLength,
  'ssm.conv_kernel': C.convKernel, 'ssm.state_size': C.headDim, 'ssm.group_count': C.heads, 'ssm.time_step_rank': C.heads,
  'rope.freq_base': C.ropeTheta, 'attention.layer_norm_rms_epsilon': 1,
};

function num(m: Meta, key: string, file: string, fallback?: number, integer = true): number {
  const v = m[key];
  if (v === undefined) {
    if (fallback !== undefined) return fallback;
    throw new ConfigError(`GGUF metadata has no "${key}"`, { file });
  }
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || (integer && !Number.isInteger(v))) {
    throw new ConfigError(`GGUF metadata "${key}" must be a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(v)}`, { file });
  }
  const max = LIMITS_BY_KEY[key.slice(key.indexOf('.') + 1)] ?? C.other;
  if (v > max) throw new ConfigError(`GGUF metadata "${key}" is ${v}, more than the ${max} pooled reads`, { file });
  return integer ? v : shortestF32(v);
}

/** The architecture named by general.architecture, or an UnsupportedArchitectureError naming it. */
export function ggufArchitecture(m: Meta, file: string): GgufArchitecture {
  const arch = m['general.architecture'];
  if (typeof arch !== 'string') throw new ConfigError('GGUF metadata has no "general.architecture"', { file });
  if (!(GGUF_ARCHITECTURES as readonly string[]).includes(arch)) throw new UnsupportedArchitectureError(arch, { file });
  return arch as GgufArchitecture;
}

/** Ids generation stops on: eos, eot, and the chat-end tokens llama.cpp also treats as end of generation. */
function stopIds(m: Meta): number[] {
  const ids: number[] = [];
  for (const key of ['tokenizer.ggml.eos_token_id', 'tokenizer.ggml.eot_token_id']) {
    const v = m[key];
    if (typeof v === 'number' && !ids.includes(v)) ids.push(v);
  }
  const tokens = m['tokenizer.ggml.tokens'];
  if (Array.isArray(tokens)) {
    for (const text of ['<|im_end|>', '<|endoftext|>']) {
      const id = tokens.indexOf(text);
      if (id >= 0 && !ids.includes(id)) ids.push(id);
    }
  }
  return ids;
}

export function parseGgufConfig(model: GgufModel): ModelConfig {
  const m = model.metadata;
  const file = model.files[0]!;
  const arch = ggufArchitecture(m, file);
  const k = (s: string) => `${arch}.${s}`;
  const scaling = m[k('rope.scaling.type')];
  if (scaling !== undefined && scaling !== 'none') throw new ConfigError(`"${k('rope.scaling.type')}" ${JSON.stringify(scaling)} is not supported (plain RoPE only)`, { file });
  const hybrid = arch === 'qwen35' || arch === 'qwen35moe';
  const moeArch = arch === 'qwen3moe' || arch === 'qwen35moe';
  const hiddenSize = num(m, k('embedding_length'), file);
  const numHeads = num(m, k('attention.head_count'), file);
  const blocks = num(m, k('block_count'), file);
  const nextn = m[k('nextn_predict_layers')] ?? 0;
  if (typeof nextn !== 'number' || !Number.isInteger(nextn) || nextn < 0 || nextn >= blocks) {
    throw new ConfigError(`"${k('nextn_predict_layers')}" ${JSON.stringify(nextn)} must be a whole number below block_count ${blocks}`, { file });
  }
  const numLayers = blocks - nextn;
  const embedding = model.tensors.get(GGUF_NAMES.embedding);
  const tokens = m['tokenizer.ggml.tokens'];
  const vocabSize = embedding?.ne[1] ?? (Array.isArray(tokens) ? tokens.length : num(m, k('vocab_size'), file));
  if (vocabSize > C.vocabSize) throw new ConfigError(`the vocabulary has ${vocabSize} tokens, more than the ${C.vocabSize} pooled reads`, { file });
  const bos = m['tokenizer.ggml.bos_token_id'];
  const cfg: ModelConfig = {
    modelType: hybrid ? (moeArch ? 'qwen3_5_moe' : 'qwen3_5') : moeArch ? 'qwen3_moe' : 'qwen3',
    hiddenSize,
    numLayers,
    numHeads,
    numKvHeads: num(m, k('attention.head_count_kv'), file, numHeads),
    headDim: num(m, k('attention.key_length'), file, Math.floor(hiddenSize / numHeads)),
    intermediateSize: num(m, k('feed_forward_length'), file, moeArch ? num(m, k('expert_feed_forward_length'), file) : undefined),
    vocabSize,
    ropeTheta: num(m, k('rope.freq_base'), file, 1e6, false),
    rmsNormEps: num(m, k('attention.layer_norm_rms_epsilon'), file, 1e-6, false),
    tieWordEmbeddings: !model.tensors.has(GGUF_NAMES.lmHead),
    maxPositionEmbeddings: num(m, k('context_length'), file, 40960),
    ...(typeof bos === 'number' ? { bosTokenId: bos } : {}),
    eosTokenIds: stopIds(m),
  };
  const valueLength = m[k('attention.value_length')];
  if (valueLength !== undefined && valueLength !== cfg.headDim) {
    throw new ConfigError(`"${k('attention.value_length')}" ${valueLength} differs from key_length ${cfg.headDim}: not a Qwen3 layout`, { file });
  }
  if (cfg.numHeads % cfg.numKvHeads !== 0) {
    throw new ConfigError(`head_count ${cfg.numHeads} is not a multiple of head_count_kv ${cfg.numKvHeads}`, { file });
  }
  if (hybrid) cfg.hybrid = ggufHybridConfig(model, arch, (key, fallback, integer) => num(m, key, file, fallback, integer), numLayers, cfg.headDim);
  if (arch === 'qwen35moe') {
    cfg.moe = {
      numExperts: num(m, k('expert_count'), file), numExpertsPerTok: num(m, k('expert_used_count'), file),
      moeIntermediateSize: num(m, k('expert_feed_forward_length'), file), normTopkProb: true, decoderSparseStep: 1, mlpOnlyLayers: [],
      sharedExpertIntermediateSize: num(m, k('expert_shared_feed_forward_length'), file),
    };
    if (cfg.moe.numExpertsPerTok > cfg.moe.numExperts) {
      throw new ConfigError(`expert_used_count ${cfg.moe.numExpertsPerTok} exceeds expert_count ${cfg.moe.numExperts}`, { file });
    }
  }
  if (arch === 'qwen3moe') {
    const norm = m[k('expert_weights_norm')];
    const dense: number[] = [];
    for (let i = 0; i < numLayers; i++) if (!model.tensors.has(GGUF_NAMES.router(i))) dense.push(i);
    cfg.moe = {
      numExperts: num(m, k('expert_count'), file),
      numExpertsPerTok: num(m, k('expert_used_count'), file),
      moeIntermediateSize: num(m, k('expert_feed_forward_length'), file),
      normTopkProb: typeof norm === 'boolean' ? norm : true,
      decoderSparseStep: 1,
      mlpOnlyLayers: dense,
    };
    if (cfg.moe.numExpertsPerTok > cfg.moe.numExperts) {
      throw new ConfigError(`expert_used_count ${cfg.moe.numExpertsPerTok} exceeds expert_count ${cfg.moe.numExperts}`, { file });
    }
  }
  return cfg;
}
