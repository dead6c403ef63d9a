// Tensor names of a Qwen3.5 / Qwen3.6 checkpoint, in HF safetensors and in llama.cpp's GGUF.
//
// HF (transformers Qwen3_5ForConditionalGeneration; ForCausalLM drops "language_model."):
//   model.language_model.embed_tokens.weight [V, H], model.language_model.norm.weight [H], lm_head.weight
//   model.language_model.layers.{i}.input_layernorm.weight / post_attention_layernorm.weight [H]
//   full attention:  self_attn.q_proj [Hq·2D, H] (per head query | gate), k_proj / v_proj [Hkv·D, H],
//                    o_proj [H, Hq·D], q_norm / k_norm [D]
//   Gated DeltaNet:  linear_attn.in_proj_qkv [C, H], in_proj_z [Vd, H], in_proj_b / in_proj_a [n_v, H],
//                    conv1d.weight [C, 1, K], A_log [n_v] (F32 in released files), dt_bias [n_v],
//                    norm.weight [d_v] (F32), out_proj [H, Vd]
//   dense MLP:       mlp.{gate,up,down}_proj
//   MoE:             mlp.gate.weight [E, H]; mlp.experts.gate_up_proj [E, 2·I_e, H] (each expert's gate rows
//                    then up rows) and mlp.experts.down_proj [E, H, I_e], or per expert
//                    mlp.experts.{e}.{gate,up,down}_proj.weight; mlp.shared_expert.{gate,up,down}_proj,
//                    mlp.shared_expert_gate.weight [1, H]
//   not loaded:      model.visual.* (the vision tower), mtp.* (the multi-token-prediction block)
// GGUF (convert_hf_to_gguf.py, arch "qwen35" / "qwen35moe"): see GGUF_HYBRID below and docs/hybrid-models.md.

export type HfPrefix = 'model.language_model.' | 'model.';

/** HF names under `prefix` ("mtp." names the MTP block's layer, "mtp.layers.0.…", which is never loaded). */
export function hf35(prefix: HfPrefix | 'mtp.') {
  const layer = (i: number, rest: string) => `${prefix}layers.${i}.${rest}`;
  return {
    embedding: `${prefix}embed_tokens.weight`,
    finalNorm: `${prefix}norm.weight`,
    lmHead: 'lm_head.weight',
    inputNorm: (i: number) => layer(i, 'input_layernorm.weight'),
    postNorm: (i: number) => layer(i, 'post_attention_layernorm.weight'),
    attn: (i: number, p: 'q_proj' | 'k_proj' | 'v_proj' | 'o_proj' | 'q_norm' | 'k_norm') => layer(i, `self_attn.${p}.weight`),
    linear: (i: number, p: 'in_proj_qkv' | 'in_proj_z' | 'in_proj_b' | 'in_proj_a' | 'conv1d' | 'norm' | 'out_proj') => layer(i, `linear_attn.${p}.weight`),
    aLog: (i: number) => layer(i, 'linear_attn.A_log'),
    dtBias: (i: number) => layer(i, 'linear_attn.dt_bias'),
    mlp: (i: number, p: 'gate' | 'up' | 'down') => layer(i, `mlp.${p}_proj.weight`),
    router: (i: number) => layer(i, 'mlp.gate.weight'),
    packedGateUp: (i: number) => layer(i, 'mlp.experts.gate_up_proj'),
    packedDown: (i: number) => layer(i, 'mlp.experts.down_proj'),
    expert: (i: number, e: number, p: 'gate' | 'up' | 'down') => layer(i, `mlp.experts.${e}.${p}_proj.weight`),
    shared: (i: number, p: 'gate' | 'up' | 'down') => layer(i, `mlp.shared_expert.${p}_proj.weight`),
    sharedGate: (i: number) => layer(i, 'mlp.shared_expert_gate.weight'),
  };
}

export type Hf35Names = ReturnType<typeof hf35>;

const blk = (i: number, name: string, suffix = '.weight'): string => `blk.${i}.${name}${suffix}`;

/** llama.cpp's names for the hybrid layers (shared with Qwen3 where the tensor is the same). */
export const GGUF_HYBRID = {
  postNorm: (i: number) => blk(i, 'post_attention_norm'),
  attnQkv: (i: number) => blk(i, 'attn_qkv'),            // in_proj_qkv, v rows tiled (see valueHeads)
  attnGate: (i: number) => blk(i, 'attn_gate'),          // in_proj_z
  ssmBeta: (i: number) => blk(i, 'ssm_beta'),            // in_proj_b
  ssmAlpha: (i: number) => blk(i, 'ssm_alpha'),          // in_proj_a
  ssmConv: (i: number) => blk(i, 'ssm_conv1d'),          // conv1d squeezed: ne [K, C]
  ssmA: (i: number) => blk(i, 'ssm_a', ''),              // −exp(A_log), no ".weight"
  ssmDt: (i: number) => blk(i, 'ssm_dt', '.bias'),       // dt_bias
  ssmNorm: (i: number) => blk(i, 'ssm_norm'),            // linear_attn.norm (no +1)
  ssmOut: (i: number) => blk(i, 'ssm_out'),              // out_proj
  sharedGate: (i: number) => blk(i, 'ffn_gate_shexp'),
  sharedUp: (i: number) => blk(i, 'ffn_up_shexp'),
  sharedDown: (i: number) => blk(i, 'ffn_down_shexp'),
  sharedRouter: (i: number) => blk(i, 'ffn_gate_inp_shexp'), // shared_expert_gate: ne [H] or [H, 1]
};
