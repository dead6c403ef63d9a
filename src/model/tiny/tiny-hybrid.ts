// Tiny Qwen3.5 / Qwen3.6 hybrid checkpoints: the config.json and HF-named weights of a
// Qwen3_5ForConditionalGeneration (or the MoE one) with seeded random weights, so the hybrid paths are
// tested on the real file layout. They always have n_k ≠ n_v (grouped value heads matter) and a mix of
// Gated DeltaNet and full-attention layers. Like a released checkpoint they also carry a (tiny) vision
// tower and an MTP block that a text engine must not load, and store A_log and linear_attn.norm as F32.
//
// Scales: as the Qwen3 tiny model (embedding std 0.05, output projections 4× 1/√fan_in), with HF's
// zero-centred norms stored as N(0, 0.1²) (effective weight 1 + w), linear_attn.norm 1 + N(0, 0.1²),
// A_log = log(U(0.05, 1)) and dt_bias N(0, 0.5²) so the state decays slowly enough (e^g ≈ 0.5–0.97)
// for a checkpoint's restored state to matter to every later token.

import { hf35 } from '../formats/qwen35-names.ts';
import { hashString, Sfc32 } from './prng.ts';
import type { ResolvedHybridOptions, ResolvedTinyOptions, TinyHybridOptions, TinyTensor } from './tiny-options.ts';

export type { ResolvedHybridOptions, TinyHybridOptions } from './tiny-options.ts';

export function resolveHybridOptions(h: TinyHybridOptions, expertIntermediate: number | undefined): ResolvedHybridOptions {
  const r: ResolvedHybridOptions = {
    linearKeyHeads: h.linearKeyHeads ?? 2, linearValueHeads: h.linearValueHeads ?? 4, linearHeadDim: h.linearHeadDim ?? 64,
    convKernel: h.convKernel ?? 4, fullAttentionInterval: h.fullAttentionInterval ?? 4, partialRotaryFactor: h.partialRotaryFactor ?? 0.25,
    sharedExpertIntermediate: h.sharedExpertIntermediate ?? expertIntermediate ?? 0, extras: h.extras ?? true,
  };
  if (r.linearValueHeads % r.linearKeyHeads !== 0) throw new RangeError(`tiny model: --linear-value-heads ${r.linearValueHeads} must be a multiple of --linear-key-heads ${r.linearKeyHeads}`);
  if (r.convKernel < 2) throw new RangeError('tiny model: --conv-kernel must be at least 2');
  return r;
}

export function hybridLayerTypes(o: ResolvedTinyOptions): ('linear_attention' | 'full_attention')[] {
  const every = o.hybrid!.fullAttentionInterval;
  return Array.from({ length: o.layers }, (_, i) => ((i + 1) % every === 0 ? 'full_attention' : 'linear_attention'));
}

/** config.json as a Qwen3.5 release writes it (text_config nested; a small vision_config). */
export function tinyHybridHfConfig(o: ResolvedTinyOptions): Record<string, unknown> {
  const h = o.hybrid!, m = o.moe;
  const moe = m ? {
    num_experts: m.experts, num_experts_per_tok: m.topK, moe_intermediate_size: m.intermediate,
    shared_expert_intermediate_size: h.sharedExpertIntermediate, norm_topk_prob: true, router_aux_loss_coef: 0.001, output_router_logits: false,
  } : { intermediate_size: o.intermediate };
  return {
    architectures: [m ? 'Qwen3_5MoeForConditionalGeneration' : 'Qwen3_5ForConditionalGeneration'],
    model_type: m ? 'qwen3_5_moe' : 'qwen3_5',
    image_token_id: 151655, video_token_id: 151656, vision_start_token_id: 151652, vision_end_token_id: 151653,
    tie_word_embeddings: o.tieWordEmbeddings,
    transformers_version: '5.2.0',
    text_config: {
      model_type: m ? 'qwen3_5_moe_text' : 'qwen3_5_text',
      attention_bias: false, attention_dropout: 0.0, attn_output_gate: true, bos_token_id: 151643, eos_token_id: 151645,
      dtype: 'bfloat16', full_attention_interval: h.fullAttentionInterval, head_dim: o.headDim, hidden_act: 'silu',
      hidden_size: o.hidden, layer_types: hybridLayerTypes(o), linear_conv_kernel_dim: h.convKernel,
      linear_key_head_dim: h.linearHeadDim, linear_num_key_heads: h.linearKeyHeads, linear_num_value_heads: h.linearValueHeads,
      linear_value_head_dim: h.linearHeadDim, mamba_ssm_dtype: 'float32', max_position_embeddings: 262144,
      mtp_num_hidden_layers: h.extras ? 1 : 0, mtp_use_dedicated_embeddings: false,
      num_attention_heads: o.heads, num_hidden_layers: o.layers, num_key_value_heads: o.kvHeads,
      rms_norm_eps: 1e-6, tie_word_embeddings: o.tieWordEmbeddings, use_cache: true, vocab_size: o.vocab,
      rope_parameters: { rope_type: 'default', rope_theta: 10000000, partial_rotary_factor: h.partialRotaryFactor, mrope_section: [11, 11, 10], mrope_interleaved: true },
      ...moe,
    },
    vision_config: { model_type: m ? 'qwen3_5_moe_vision' : 'qwen3_5_vision', depth: 1, hidden_size: 16, out_hidden_size: o.hidden, patch_size: 2, spatial_merge_size: 1, temporal_patch_size: 1, in_channels: 3 },
  };
}

function gaussian(seed: number, name: string, n: number, std: number, mean = 0): Float32Array {
  const rng = new Sfc32(seed, hashString(name));
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = mean + std * rng.normal();
  return out;
}

function uniformLog(seed: number, name: string, n: number, lo: number, hi: number): Float32Array {
  const rng = new Sfc32(seed, hashString(name));
  return Float32Array.from({ length: n }, () => Math.log(lo + (hi - lo) * rng.uniform()));
}

/** Every tensor of the checkpoint in HF names (Qwen3_5ForConditionalGeneration), f32 before storing. */
export function tinyHybridWeights(o: ResolvedTinyOptions, embeddingStd: number, outputGain: number, routerGain: number): TinyTensor[] {
  const h = o.hybrid!, N = hf35('model.language_model.'), H = o.hidden, D = o.headDim;
  const Kd = h.linearKeyHeads * h.linearHeadDim, Vd = h.linearValueHeads * h.linearHeadDim, C = 2 * Kd + Vd, nv = h.linearValueHeads;
  const out: TinyTensor[] = [];
  const mat = (name: string, rows: number, cols: number, gain = 1) => out.push({ name, shape: [rows, cols], values: gaussian(o.seed, name, rows * cols, gain / Math.sqrt(cols)) });
  const zeroCentred = (name: string, size: number) => out.push({ name, shape: [size], values: gaussian(o.seed, name, size, 0.1) });
  out.push({ name: N.embedding, shape: [o.vocab, H], values: gaussian(o.seed, N.embedding, o.vocab * H, embeddingStd) });
  const types = hybridLayerTypes(o);
  const block = (i: number, L: typeof N, full: boolean) => {
    zeroCentred(L.inputNorm(i), H);
    zeroCentred(L.postNorm(i), H);
    if (full) {
      mat(L.attn(i, 'q_proj'), 2 * o.heads * D, H);
      mat(L.attn(i, 'k_proj'), o.kvHeads * D, H);
      mat(L.attn(i, 'v_proj'), o.kvHeads * D, H);
      mat(L.attn(i, 'o_proj'), H, o.heads * D, outputGain);
      zeroCentred(L.attn(i, 'q_norm'), D);
      zeroCentred(L.attn(i, 'k_norm'), D);
    } else {
      mat(L.linear(i, 'in_proj_qkv'), C, H);
      mat(L.linear(i, 'in_proj_z'), Vd, H);
      mat(L.linear(i, 'in_proj_b'), nv, H);
      mat(L.linear(i, 'in_proj_a'), nv, H);
      const conv = L.linear(i, 'conv1d');
      out.push({ name: conv, shape: [C, 1, h.convKernel], values: gaussian(o.seed, conv, C * h.convKernel, 1 / Math.sqrt(h.convKernel)) });
      out.push({ name: L.aLog(i), shape: [nv], values: uniformLog(o.seed, L.aLog(i), nv, 0.05, 1), dtype: 'F32' });
      out.push({ name: L.dtBias(i), shape: [nv], values: gaussian(o.seed, L.dtBias(i), nv, 0.5) });
      out.push({ name: L.linear(i, 'norm'), shape: [h.linearHeadDim], values: gaussian(o.seed, L.linear(i, 'norm'), h.linearHeadDim, 0.1, 1), dtype: 'F32' });
      mat(L.linear(i, 'out_proj'), H, Vd, outputGain);
    }
    const m = o.moe;
    if (m) {
      mat(L.router(i), m.experts, H, routerGain);
      // Packed experts, as Qwen3.6 releases store them: gate_up_proj [E, 2·I_e, H], down_proj [E, H, I_e].
      const gu = L.packedGateUp(i), dn = L.packedDown(i);
      out.push({ name: gu, shape: [m.experts, 2 * m.intermediate, H], values: gaussian(o.seed, gu, m.experts * 2 * m.intermediate * H, 1 / Math.sqrt(H)) });
      out.push({ name: dn, shape: [m.experts, H, m.intermediate], values: gaussian(o.seed, dn, m.experts * H * m.intermediate, outputGain / Math.sqrt(m.intermediate)) });
      mat(L.shared(i, 'gate'), h.sharedExpertIntermediate, H);
      mat(L.shared(i, 'up'), h.sharedExpertIntermediate, H);
      mat(L.shared(i, 'down'), H, h.sharedExpertIntermediate, outputGain);
      mat(L.sharedGate(i), 1, H, routerGain);
    } else {
      mat(L.mlp(i, 'gate'), o.intermediate, H);
      mat(L.mlp(i, 'up'), o.intermediate, H);
      mat(L.mlp(i, 'down'), H, o.intermediate, outputGain);
    }
  };
  for (let i = 0; i < o.layers; i++) block(i, N, types[i] === 'full_attention');
  zeroCentred(N.finalNorm, H);
  if (!o.tieWordEmbeddings) mat(N.lmHead, o.vocab, H);
  if (h.extras) {
    // What a text engine skips: one tensor of the vision tower and the MTP block (a full-attention layer).
    mat('model.visual.patch_embed.proj.weight', 16, 12);
    mat('mtp.fc.weight', H, 2 * H);
    zeroCentred('mtp.pre_fc_norm_embedding.weight', H);
    zeroCentred('mtp.pre_fc_norm_hidden.weight', H);
    zeroCentred('mtp.norm.weight', H);
    block(0, hf35('mtp.'), true);
  }
  return out;
}
