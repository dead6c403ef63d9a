// llama.cpp's tensor names for Qwen3 (arch "qwen3") and Qwen3 MoE ("qwen3moe"); Qwen3.5's own are in
// ../qwen35-names.ts (GGUF_HYBRID). GGUF ne is the HF
// shape reversed (ne[0] contiguous): attn_q [H, Hq·D] holds HF q_proj.weight [Hq·D, H] as stored, no
// permutation; experts are stacked: ffn_gate_exps ne [H, I_e, E] is HF experts.{e}.gate_proj [I_e, H]
// for e = 0..E−1 back to back; ffn_gate_inp ne [H, E] is HF mlp.gate.weight [E, H].

const blk = (i: number, name: string): string => `blk.${i}.${name}.weight`;

export const GGUF_NAMES = {
  embedding: 'token_embd.weight',
  finalNorm: 'output_norm.weight',
  lmHead: 'output.weight',
  attnNorm: (i: number) => blk(i, 'attn_norm'),
  q: (i: number) => blk(i, 'attn_q'),
  k: (i: number) => blk(i, 'attn_k'),
  v: (i: number) => blk(i, 'attn_v'),
  o: (i: number) => blk(i, 'attn_output'),
  qNorm: (i: number) => blk(i, 'attn_q_norm'),
  kNorm: (i: number) => blk(i, 'attn_k_norm'),
  ffnNorm: (i: number) => blk(i, 'ffn_norm'),
  gate: (i: number) => blk(i, 'ffn_gate'),
  up: (i: number) => blk(i, 'ffn_up'),
  down: (i: number) => blk(i, 'ffn_down'),
  router: (i: number) => blk(i, 'ffn_gate_inp'),
  gateExps: (i: number) => blk(i, 'ffn_gate_exps'),
  upExps: (i: number) => blk(i, 'ffn_up_exps'),
  downExps: (i: number) => blk(i, 'ffn_down_exps'),
};

export const GGUF_ARCHITECTURES = ['qwen3', 'qwen3moe', 'qwen35', 'qwen35moe'] as const;
export type GgufArchitecture = (typeof GGUF_ARCHITECTURES)[number];
