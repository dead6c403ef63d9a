// Tiny Qwen3 checkpoints with seeded random weights, laid out exactly like real repositories:
//   safetensors: config.json, generation_config.json, model.safetensors (BF16) or
//                model-0000k-of-0000N.safetensors + model.safetensors.index.json, tokenizer files.
//   mlc:         mlc-chat-config.json, tensor-cache.json, params_shard_*.bin (q4f16_1), tokenizer files.
// Browser-safe: returns file bytes; writing them to disk lives in ./write-node.ts.
//
// Scales (docs/platform.md, "Tiny random checkpoints"): with a std-1 tied embedding greedy decoding only
// repeats the last token, so the embedding is drawn at std 0.05 and o_proj / down_proj are drawn
// 4× larger than 1/√fan_in, which gives varied tokens. Norm weights are 1 + N(0, 0.1²).
// Each tensor has its own stream seeded by (seed, name): a layer's weights do not depend on how
// many layers the model has.

import { encodeMlcShards, groupByCap } from '../formats/mlc.ts';
import { HF, MLC, layerShapes } from '../formats/qwen3-names.ts';
import { encodeSafetensors } from '../formats/safetensors.ts';
import { fromFloat32, quantizeQ4f16, Q4_GROUP_SIZE } from '../tensor-utils.ts';
import type { TensorData } from '../types.ts';
import { hashString, Sfc32 } from './prng.ts';
import { resolveHybridOptions, tinyHybridHfConfig, tinyHybridWeights } from './tiny-hybrid.ts';
import type { ResolvedTinyOptions, TinyModelOptions, TinyTensor } from './tiny-options.ts';

export type { ResolvedTinyOptions, TinyModelOptions, TinyMoeOptions, TinyTensor } from './tiny-options.ts';

export type TinyFormat = 'safetensors' | 'mlc';

export const QWEN3_VOCAB = 151936;
export const EMBEDDING_STD = 0.05;
export const OUTPUT_PROJ_GAIN = 4;
export const ROUTER_GAIN = 4;
const MLC_SHARD_CAP = 32 * 1024 * 1024;      // mlc-llm's default shard size

export function resolveTinyOptions(o: TinyModelOptions = {}): ResolvedTinyOptions {
  const r: ResolvedTinyOptions = {
    layers: o.layers ?? 4, hidden: o.hidden ?? 64, heads: o.heads ?? 4, kvHeads: o.kvHeads ?? 2,
    headDim: o.headDim ?? 16, intermediate: o.intermediate ?? 128, vocab: o.vocab ?? QWEN3_VOCAB,
    seed: o.seed ?? 0, shards: o.shards ?? 1, tieWordEmbeddings: o.tieWordEmbeddings ?? true,
  };
  if (o.moe) {
    r.moe = {
      experts: o.moe.experts ?? 8, topK: o.moe.topK ?? 2, intermediate: o.moe.intermediate ?? 256,
      normTopkProb: o.moe.normTopkProb ?? true, decoderSparseStep: o.moe.decoderSparseStep ?? 1, mlpOnlyLayers: o.moe.mlpOnlyLayers ?? [],
    };
    if (!(r.moe.topK >= 1 && r.moe.topK <= r.moe.experts)) throw new RangeError(`tiny model: --top-k ${r.moe.topK} must be in [1, experts ${r.moe.experts}]`);
  }
  if (o.hybrid) {
    r.hybrid = resolveHybridOptions(o.hybrid, r.moe?.intermediate);
    const rotary = Math.floor(r.headDim * r.hybrid.partialRotaryFactor);
    if (rotary < 2 || rotary % 2 !== 0) throw new RangeError(`tiny model: head-dim ${r.headDim} · partial rotary factor ${r.hybrid.partialRotaryFactor} = ${rotary} rotary dims, which must be even and ≥ 2`);
  }
  for (const [k, v] of Object.entries(r)) {
    if (typeof v === 'number' && (!Number.isInteger(v) || v < (k === 'seed' || k === 'layers' ? 0 : 1))) {
      throw new RangeError(`tiny model: --${k} must be a ${k === 'seed' || k === 'layers' ? 'non-negative' : 'positive'} integer, got ${v}`);
    }
  }
  if (r.heads % r.kvHeads !== 0) throw new RangeError(`tiny model: heads ${r.heads} must be a multiple of kv-heads ${r.kvHeads}`);
  if (r.headDim % 2 !== 0) throw new RangeError(`tiny model: head-dim ${r.headDim} must be even (RoPE rotates pairs)`);
  return r;
}

/** The config.json a Qwen3 (or Qwen3.5) repository would have for these options. */
export function tinyHfConfig(o: ResolvedTinyOptions): Record<string, unknown> {
  if (o.hybrid) return tinyHybridHfConfig(o);
  const moe = o.moe ? {
    decoder_sparse_step: o.moe.decoderSparseStep, mlp_only_layers: o.moe.mlpOnlyLayers, moe_intermediate_size: o.moe.intermediate,
    norm_topk_prob: o.moe.normTopkProb, num_experts: o.moe.experts, num_experts_per_tok: o.moe.topK, output_router_logits: false,
    router_aux_loss_coef: 0.001,
  } : {};
  return {
    ...moe,
    architectures: [o.moe ? 'Qwen3MoeForCausalLM' : 'Qwen3ForCausalLM'],
    attention_bias: false,
    attention_dropout: 0.0,
    bos_token_id: 151643,
    eos_token_id: 151645,
    head_dim: o.headDim,
    hidden_act: 'silu',
    hidden_size: o.hidden,
    initializer_range: 0.02,
    intermediate_size: o.intermediate,
    max_position_embeddings: 40960,
    max_window_layers: o.layers,
    model_type: o.moe ? 'qwen3_moe' : 'qwen3',
    num_attention_heads: o.heads,
    num_hidden_layers: o.layers,
    num_key_value_heads: o.kvHeads,
    rms_norm_eps: 1e-6,
    rope_scaling: null,
    rope_theta: 1000000,
    sliding_window: null,
    tie_word_embeddings: o.tieWordEmbeddings,
    torch_dtype: 'bfloat16',
    transformers_version: '4.51.0',
    use_cache: true,
    use_sliding_window: false,
    vocab_size: o.vocab,
  };
}

const GENERATION_CONFIG = {
  bos_token_id: 151643, do_sample: true, eos_token_id: [151645, 151643], pad_token_id: 151643,
  temperature: 0.6, top_k: 20, top_p: 0.95, transformers_version: '4.51.0',
};

/** mlc-chat-config.json as `mlc_llm gen_config` writes it for Qwen3 q4f16_1 (fields WebLLM reads). */
export function tinyMlcChatConfig(o: ResolvedTinyOptions): Record<string, unknown> {
  return {
    version: '0.1.0',
    model_type: 'qwen3',
    quantization: 'q4f16_1',
    model_config: {
      hidden_act: 'silu', hidden_size: o.hidden, intermediate_size: o.intermediate, attention_bias: false,
      num_attention_heads: o.heads, num_hidden_layers: o.layers, num_key_value_heads: o.kvHeads,
      rms_norm_eps: 1e-6, rope_theta: 1000000, vocab_size: o.vocab, tie_word_embeddings: o.tieWordEmbeddings,
      context_window_size: 40960, prefill_chunk_size: 2048, tensor_parallel_shards: 1, head_dim: o.headDim,
      dtype: 'float16', max_batch_size: 128, weight_block_size: null,
    },
    vocab_size: o.vocab,
    context_window_size: 40960,
    sliding_window_size: -1,
    prefill_chunk_size: 2048,
    attention_sink_size: -1,
    tensor_parallel_shards: 1,
    pipeline_parallel_stages: 1,
    temperature: 0.6, presence_penalty: 0.0, frequency_penalty: 0.0, repetition_penalty: 1.0, top_p: 0.95,
    tokenizer_files: ['tokenizer.json', 'tokenizer_config.json'],
    tokenizer_info: { token_postproc_method: 'byte_level', prepend_space_in_encode: false, strip_space_in_decode: false },
    conv_template: {
      name: 'qwen2',
      system_template: '<|im_start|>system\n{system_message}<|im_end|>\n',
      system_message: 'You are a helpful assistant.',
      roles: { user: '<|im_start|>user', assistant: '<|im_start|>assistant' },
      seps: ['<|im_end|>\n'], role_content_sep: '\n', role_empty_sep: '\n',
      stop_str: ['<|endoftext|>', '<|im_end|>'], stop_token_ids: [151643, 151645],
    },
    pad_token_id: 151643,
    bos_token_id: 151643,
    eos_token_id: [151645, 151643],
  };
}

function gaussian(seed: number, name: string, n: number, std: number, mean = 0): Float32Array {
  const rng = new Sfc32(seed, hashString(name));
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = mean + std * rng.normal();
  return out;
}

/** All weights in HF names and shapes, as f32 (before rounding to BF16 or quantizing). */
export function tinyWeights(o: ResolvedTinyOptions): TinyTensor[] {
  if (o.hybrid) return tinyHybridWeights(o, EMBEDDING_STD, OUTPUT_PROJ_GAIN, ROUTER_GAIN);
  const s = layerShapes({
    modelType: 'qwen3', hiddenSize: o.hidden, numLayers: o.layers, numHeads: o.heads, numKvHeads: o.kvHeads,
    headDim: o.headDim, intermediateSize: o.intermediate, vocabSize: o.vocab, ropeTheta: 1e6, rmsNormEps: 1e-6,
    tieWordEmbeddings: o.tieWordEmbeddings, maxPositionEmbeddings: 40960, eosTokenIds: [],
  });
  const out: TinyTensor[] = [];
  const mat = (name: string, rows: number, cols: number, gain = 1) =>
    out.push({ name, shape: [rows, cols], values: gaussian(o.seed, name, rows * cols, gain / Math.sqrt(cols)) });
  const norm = (name: string, size: number) => out.push({ name, shape: [size], values: gaussian(o.seed, name, size, 0.1, 1) });
  out.push({ name: HF.embedding, shape: [o.vocab, o.hidden], values: gaussian(o.seed, HF.embedding, o.vocab * o.hidden, EMBEDDING_STD) });
  for (let i = 0; i < o.layers; i++) {
    norm(HF.inputNorm(i), o.hidden);
    mat(HF.proj(i, 'q'), s.q.rows, s.q.cols);
    mat(HF.proj(i, 'k'), s.k.rows, s.k.cols);
    mat(HF.proj(i, 'v'), s.v.rows, s.v.cols);
    norm(HF.qNorm(i), o.headDim);
    norm(HF.kNorm(i), o.headDim);
    mat(HF.proj(i, 'o'), s.o.rows, s.o.cols, OUTPUT_PROJ_GAIN);
    norm(HF.postNorm(i), o.hidden);
    const m = o.moe;
    if (m && !m.mlpOnlyLayers.includes(i) && (i + 1) % m.decoderSparseStep === 0) {
      // A router gain of 4 makes the routing decisive (top-k gaps well above rounding noise).
      mat(HF.router(i), m.experts, o.hidden, ROUTER_GAIN);
      for (let e = 0; e < m.experts; e++) {
        mat(HF.expert(i, e, 'gate'), m.intermediate, o.hidden);
        mat(HF.expert(i, e, 'up'), m.intermediate, o.hidden);
        mat(HF.expert(i, e, 'down'), o.hidden, m.intermediate, OUTPUT_PROJ_GAIN);
      }
      continue;
    }
    mat(HF.mlp(i, 'gate'), s.gate.rows, s.gate.cols);
    mat(HF.mlp(i, 'up'), s.up.rows, s.up.cols);
    mat(HF.mlp(i, 'down'), s.down.rows, s.down.cols, OUTPUT_PROJ_GAIN);
  }
  norm(HF.finalNorm, o.hidden);
  if (!o.tieWordEmbeddings) mat(HF.lmHead, o.vocab, o.hidden);
  return out;
}

/** n contiguous groups of (nearly) equal tensor count, none empty. */
function splitEvenly<T>(items: readonly T[], n: number): T[][] {
  const k = Math.min(n, items.length);
  return Array.from({ length: k }, (_, g) => items.slice(Math.floor((g * items.length) / k), Math.floor(((g + 1) * items.length) / k)));
}

const json = (v: unknown): Uint8Array => new TextEncoder().encode(`${JSON.stringify(v, null, 2)}\n`);

export interface TokenizerFiles { 'tokenizer.json': Uint8Array; 'tokenizer_config.json': Uint8Array }

/** Every file of a safetensors repo: path → bytes. */
export function tinySafetensorsFiles(opts: TinyModelOptions, tokenizer: TokenizerFiles): Map<string, Uint8Array> {
  const o = resolveTinyOptions(opts);
  const tensors: TensorData[] = tinyWeights(o)
    .map((t) => fromFloat32(t.name, t.values, t.shape, t.dtype ?? 'BF16'))
    .sort((a, b) => (a.name < b.name ? -1 : 1));             // HF files list tensors by name
  const files = new Map<string, Uint8Array>([
    ['config.json', json(tinyHfConfig(o))],
    ['generation_config.json', json(GENERATION_CONFIG)],
    ['tokenizer.json', tokenizer['tokenizer.json']],
    ['tokenizer_config.json', tokenizer['tokenizer_config.json']],
  ]);
  if (o.shards <= 1) {
    files.set('model.safetensors', encodeSafetensors(tensors));
    return files;
  }
  // N shards, tensors in order, split evenly by count so that layers spread over the files.
  const nonEmpty = splitEvenly(tensors, o.shards);
  const weightMap: Record<string, string> = {};
  nonEmpty.forEach((g, k) => {
    const file = `model-${String(k + 1).padStart(5, '0')}-of-${String(nonEmpty.length).padStart(5, '0')}.safetensors`;
    files.set(file, encodeSafetensors(g));
    for (const t of g) weightMap[t.name] = file;
  });
  const total = tensors.reduce((a, t) => a + t.bytes.byteLength, 0);
  files.set('model.safetensors.index.json', json({ metadata: { total_size: total }, weight_map: weightMap }));
  return files;
}

/** Every file of an MLC q4f16_1 repo: path → bytes. Dimensions must be multiples of 32. */
export function tinyMlcFiles(opts: TinyModelOptions, tokenizer: TokenizerFiles): Map<string, Uint8Array> {
  const o = resolveTinyOptions(opts);
  if (o.moe) throw new RangeError('tiny model: MLC q4f16_1 has no Qwen3 MoE layout; use --format safetensors or gguf');
  if (o.hybrid) throw new RangeError('tiny model: MLC has no Qwen3.5 hybrid layout; use --format safetensors or gguf');
  for (const [k, v] of [['hidden', o.hidden], ['intermediate', o.intermediate], ['heads × head-dim', o.heads * o.headDim]] as const) {
    if (v % Q4_GROUP_SIZE !== 0) throw new RangeError(`tiny model: q4f16_1 needs ${k} to be a multiple of 32, got ${v}`);
  }
  const f32 = new Map(tinyWeights(o).map((t) => [t.name, t]));
  const get = (name: string) => f32.get(name)!;
  const stack = (names: string[]) => {
    const parts = names.map(get);
    const values = new Float32Array(parts.reduce((a, p) => a + p.values.length, 0));
    let off = 0;
    for (const p of parts) { values.set(p.values, off); off += p.values.length; }
    return { rows: parts.reduce((a, p) => a + p.shape[0]!, 0), cols: parts[0]!.shape[1]!, values };
  };
  const tensors: TensorData[] = [];
  const q4 = (prefix: string, m: { rows: number; cols: number; values: Float32Array }) => {
    const q = quantizeQ4f16(prefix, m.values, m.rows, m.cols);
    tensors.push(q.qweight, q.scales);
  };
  const f16 = (name: string) => { const t = get(name); tensors.push(fromFloat32(name, t.values, t.shape, 'F16')); };
  const single = (name: string) => { const t = get(name); return { rows: t.shape[0]!, cols: t.shape[1]!, values: t.values }; };
  // Parameter order of mlc-llm's Qwen3LMHeadModel: embedding, then per layer attention, mlp, norms.
  q4(MLC.embedding, single(HF.embedding));
  for (let i = 0; i < o.layers; i++) {
    q4(MLC.qkv(i), stack([HF.proj(i, 'q'), HF.proj(i, 'k'), HF.proj(i, 'v')]));
    q4(MLC.o(i), single(HF.proj(i, 'o')));
    f16(HF.qNorm(i));
    f16(HF.kNorm(i));
    q4(MLC.gateUp(i), stack([HF.mlp(i, 'gate'), HF.mlp(i, 'up')]));
    q4(MLC.down(i), single(HF.mlp(i, 'down')));
    f16(HF.inputNorm(i));
    f16(HF.postNorm(i));
  }
  f16(HF.finalNorm);
  if (!o.tieWordEmbeddings) q4(MLC.lmHead, single(HF.lmHead));
  const { shards, cache } = encodeMlcShards(o.shards <= 1 ? groupByCap(tensors, MLC_SHARD_CAP) : splitEvenly(tensors, o.shards));
  const files = new Map<string, Uint8Array>([
    ['mlc-chat-config.json', json(tinyMlcChatConfig(o))],
    ['tensor-cache.json', json(cache)],
    ['tokenizer.json', tokenizer['tokenizer.json']],
    ['tokenizer_config.json', tokenizer['tokenizer_config.json']],
  ]);
  for (const s of shards) files.set(s.file, s.bytes);
  return files;
}
