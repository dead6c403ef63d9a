// Tensor names and shapes of a Qwen3 dense checkpoint in each format, derived from the config.
// HF (transformers Qwen3ForCausalLM):  model.layers.{i}.self_attn.{q,k,v,o}_proj.weight, ...
// MLC (mlc-llm python/mlc_llm/model/qwen3, read 2026-11-30): q,k,v stacked as self_attn.c_attn,
//   gate,up stacked as mlp.gate_up_proj (rows: gate then up), each linear as .q_weight U32 [N, K/8] +
//   .q_scale F16 [N, K/32]; the embedding is quantized the same way (model.embed_tokens.q_weight /
//   q_scale) and, when tied, is also the head; norms stay F16 ".weight".

import type { ModelConfig } from '../types.ts';

export interface LinearSpec { rows: number; cols: number }

export interface LayerShapes {
  q: LinearSpec; k: LinearSpec; v: LinearSpec; o: LinearSpec;
  gate: LinearSpec; up: LinearSpec; down: LinearSpec;
  qkv: LinearSpec; gateUp: LinearSpec;
}

export function layerShapes(c: ModelConfig): LayerShapes {
  const H = c.hiddenSize, D = c.headDim, I = c.intermediateSize;
  const q = { rows: c.numHeads * D, cols: H };
  const kv = { rows: c.numKvHeads * D, cols: H };
  return {
    q, k: kv, v: kv,
    o: { rows: H, cols: c.numHeads * D },
    gate: { rows: I, cols: H }, up: { rows: I, cols: H },
    down: { rows: H, cols: I },
    qkv: { rows: q.rows + 2 * kv.rows, cols: H },
    gateUp: { rows: 2 * I, cols: H },
  };
}

export const layerPrefix = (i: number): string => `model.layers.${i}`;

export const HF = {
  embedding: 'model.embed_tokens.weight',
  finalNorm: 'model.norm.weight',
  lmHead: 'lm_head.weight',
  inputNorm: (i: number) => `${layerPrefix(i)}.input_layernorm.weight`,
  postNorm: (i: number) => `${layerPrefix(i)}.post_attention_layernorm.weight`,
  qNorm: (i: number) => `${layerPrefix(i)}.self_attn.q_norm.weight`,
  kNorm: (i: number) => `${layerPrefix(i)}.self_attn.k_norm.weight`,
  proj: (i: number, p: 'q' | 'k' | 'v' | 'o') => `${layerPrefix(i)}.self_attn.${p}_proj.weight`,
  mlp: (i: number, p: 'gate' | 'up' | 'down') => `${layerPrefix(i)}.mlp.${p}_proj.weight`,
  /** Qwen3 MoE (transformers Qwen3MoeSparseMoeBlock): the router and expert e's projections. */
  router: (i: number) => `${layerPrefix(i)}.mlp.gate.weight`,
  expert: (i: number, e: number, p: 'gate' | 'up' | 'down') => `${layerPrefix(i)}.mlp.experts.${e}.${p}_proj.weight`,
};

/** MLC linear names are a prefix; the tensors are `${prefix}.q_weight` and `${prefix}.q_scale`. */
export const MLC = {
  embedding: 'model.embed_tokens',
  finalNorm: 'model.norm.weight',
  lmHead: 'lm_head',
  inputNorm: HF.inputNorm,
  postNorm: HF.postNorm,
  qNorm: HF.qNorm,
  kNorm: HF.kNorm,
  qkv: (i: number) => `${layerPrefix(i)}.self_attn.c_attn`,
  o: (i: number) => `${layerPrefix(i)}.self_attn.o_proj`,
  gateUp: (i: number) => `${layerPrefix(i)}.mlp.gate_up_proj`,
  down: (i: number) => `${layerPrefix(i)}.mlp.down_proj`,
};
