// What llama.cpp's convert_hf_to_gguf.py (Qwen3_5TextModel / Qwen3_5MoeTextModel) makes of a tiny Qwen3.5
// checkpoint, transform by transform, so the loader's reading of real GGUFs is tested on the same bytes:
//   1. tensors arrive as the HF file holds them (BF16, A_log and linear_attn.norm F32), widened to f32;
//   2. value heads reordered from grouped to tiled when n_k ≠ n_v (_LinearAttentionVReorderBase): the v
//      rows of in_proj_qkv, the rows of in_proj_z, in_proj_b, in_proj_a, A_log, dt_bias, the v channels of
//      conv1d and the columns of out_proj;
//   3. A_log → −exp(A_log) (ssm_a); dt_bias → ssm_dt.bias; conv1d [C, 1, K] squeezed to [C, K];
//      every "…norm.weight" except linear_attn.norm.weight gets + 1 (Qwen3NextModel.modify_tensors);
//   4. packed experts: gate_up_proj [E, 2·I, H] split on dim −2 into ffn_gate_exps / ffn_up_exps;
//   5. the MTP block (mtp.*) becomes layer L (block_count L + 1, nextn_predict_layers 1) with nextn.*;
//   6. model.visual.* is left to the separate mmproj conversion (not in the text GGUF).
// Tensors keep BF16 unless the converter forces F32 (1-D tensors, norms, ssm_conv1d, ffn_gate_inp(_shexp),
// names not ending in ".weight"); llama-quantize then picks each type (./gguf-mix.ts).

import { GGUF_NAMES as N } from '../formats/gguf/gguf-names.ts';
import type { GgufValue } from '../formats/gguf/gguf-write.ts';
import { GGUF_HYBRID as X, hf35, type Hf35Names } from '../formats/qwen35-names.ts';
import { bf16BitsToF32, f32ToBf16Bits } from '../tensor-utils.ts';
import type { GgmlType } from '../types.ts';
import { hybridLayerTypes } from './tiny-hybrid.ts';
import { tinyWeights, type ResolvedTinyOptions, type TinyTensor } from './tiny-model.ts';

export interface GgufTensorValues { name: string; ne: number[]; base: GgmlType; values: Float32Array }

/** The values as the HF file stores them: BF16-rounded unless stored F32. */
const stored = (t: TinyTensor): Float32Array => (t.dtype === 'F32' ? t.values : t.values.map((x) => bf16BitsToF32(f32ToBf16Bits(x))));

/**
 * Reorder value heads from grouped [k0: v0..v(r−1), k1: …] to tiled [v0 of k0, v0 of k1, …, v1 of k0, …]
 * along `axis` of a row-major tensor of `shape` whose axis holds n_v · headDim entries.
 */
export function reorderValueHeads(values: Float32Array, shape: number[], axis: number, nk: number, r: number, headDim: number): Float32Array {
  const outer = shape.slice(0, axis).reduce((a, b) => a * b, 1), inner = shape.slice(axis + 1).reduce((a, b) => a * b, 1);
  const out = new Float32Array(values.length);
  const len = shape[axis]!;
  for (let o = 0; o < outer; o++) {
    for (let k = 0; k < nk; k++) {
      for (let ri = 0; ri < r; ri++) {
        for (let d = 0; d < headDim; d++) {
          const from = (k * r + ri) * headDim + d, to = (ri * nk + k) * headDim + d;
          for (let i = 0; i < inner; i++) out[(o * len + to) * inner + i] = values[(o * len + from) * inner + i]!;
        }
      }
    }
  }
  return out;
}

export function hybridGgufTensors(o: ResolvedTinyOptions): GgufTensorValues[] {
  const h = o.hybrid!, L = o.layers;
  const hf = new Map(tinyWeights(o).map((t) => [t.name, t]));
  const nk = h.linearKeyHeads, nv = h.linearValueHeads, d = h.linearHeadDim, r = nv / nk, Kd = nk * d;
  const out: GgufTensorValues[] = [];
  const get = (name: string) => { const t = hf.get(name); if (!t) throw new RangeError(`tiny hybrid GGUF: no tensor ${name}`); return t; };
  /** One tensor: GGUF ne = the HF shape reversed; F32 where the converter forces it. */
  const put = (gguf: string, shape: number[], values: Float32Array, forceF32 = false) => {
    const f32 = forceF32 || shape.length <= 1 || gguf.endsWith('_norm.weight') || !gguf.endsWith('.weight');
    out.push({ name: gguf, ne: [...shape].reverse(), base: f32 ? 'F32' : 'BF16', values });
  };
  const plusOne = (v: Float32Array) => v.map((x) => 1 + x);
  const reorder = (v: Float32Array, shape: number[], axis: number, headDim: number) => (r > 1 ? reorderValueHeads(v, shape, axis, nk, r, headDim) : v);
  const types = hybridLayerTypes(o);

  /** GGUF layer i from the HF layer j of S (the MTP block's layer 0 becomes GGUF layer L). */
  const block = (i: number, j: number, S: Hf35Names, full: boolean) => {
    const take = (gguf: string, name: string, f: (v: Float32Array) => Float32Array = (v) => v, forceF32 = false) => {
      const t = get(name);
      put(gguf, t.shape, f(stored(t)), forceF32);
    };
    take(N.attnNorm(i), S.inputNorm(j), plusOne);
    take(X.postNorm(i), S.postNorm(j), plusOne);
    if (full) {
      take(N.q(i), S.attn(j, 'q_proj')); take(N.k(i), S.attn(j, 'k_proj')); take(N.v(i), S.attn(j, 'v_proj'));
      take(N.o(i), S.attn(j, 'o_proj')); take(N.qNorm(i), S.attn(j, 'q_norm'), plusOne); take(N.kNorm(i), S.attn(j, 'k_norm'), plusOne);
    } else {
      const qkv = get(S.linear(j, 'in_proj_qkv'));
      const qkvValues = stored(qkv), H = qkv.shape[1]!;
      const v = reorder(qkvValues.slice(2 * Kd * H), [nv * d, H], 0, d);
      const merged = new Float32Array(qkvValues.length);
      merged.set(qkvValues.subarray(0, 2 * Kd * H));
      merged.set(v, 2 * Kd * H);
      put(X.attnQkv(i), qkv.shape, merged);
      take(X.attnGate(i), S.linear(j, 'in_proj_z'), (x) => reorder(x, [nv * d, H], 0, d));
      take(X.ssmBeta(i), S.linear(j, 'in_proj_b'), (x) => reorder(x, [nv, H], 0, 1));
      take(X.ssmAlpha(i), S.linear(j, 'in_proj_a'), (x) => reorder(x, [nv, H], 0, 1));
      const conv = get(S.linear(j, 'conv1d')), K = conv.shape[2]!, C = conv.shape[0]!;
      const convValues = stored(conv);                                 // [C, 1, K] → squeezed [C, K]
      const convOut = new Float32Array(convValues.length);
      convOut.set(convValues.subarray(0, 2 * Kd * K));
      convOut.set(reorder(convValues.slice(2 * Kd * K), [nv * d, K], 0, d), 2 * Kd * K);
      put(X.ssmConv(i), [C, K], convOut, true);
      take(X.ssmA(i), S.aLog(j), (x) => reorder(x.map((a) => -Math.exp(a)), [nv], 0, 1));
      take(X.ssmDt(i), S.dtBias(j), (x) => reorder(x, [nv], 0, 1));
      take(X.ssmNorm(i), S.linear(j, 'norm'));                          // a plain weight: no + 1
      take(X.ssmOut(i), S.linear(j, 'out_proj'), (x) => reorder(x, [H, nv * d], 1, d));
    }
    const m = o.moe;
    if (m) {
      take(N.router(i), S.router(j), undefined, true);
      const gu = get(S.packedGateUp(j)), gv = stored(gu), E = m.experts, I = m.intermediate, H = o.hidden;
      const gate = new Float32Array(E * I * H), up = new Float32Array(E * I * H);
      for (let e = 0; e < E; e++) {
        gate.set(gv.subarray(2 * e * I * H, (2 * e + 1) * I * H), e * I * H);
        up.set(gv.subarray((2 * e + 1) * I * H, (2 * e + 2) * I * H), e * I * H);
      }
      put(N.gateExps(i), [E, I, H], gate); put(N.upExps(i), [E, I, H], up);
      take(N.downExps(i), S.packedDown(j));
      take(X.sharedGate(i), S.shared(j, 'gate')); take(X.sharedUp(i), S.shared(j, 'up')); take(X.sharedDown(i), S.shared(j, 'down'));
      take(X.sharedRouter(i), S.sharedGate(j), undefined, true);       // [1, H] → ne [H, 1], F32
    } else {
      take(N.gate(i), S.mlp(j, 'gate')); take(N.up(i), S.mlp(j, 'up')); take(N.down(i), S.mlp(j, 'down'));
    }
  };

  const M = hf35('model.language_model.');
  const takeTop = (gguf: string, name: string, f: (v: Float32Array) => Float32Array = (v) => v) => { const t = get(name); put(gguf, t.shape, f(stored(t))); };
  takeTop(N.embedding, M.embedding);
  takeTop(N.finalNorm, M.finalNorm, plusOne);
  if (!o.tieWordEmbeddings) takeTop(N.lmHead, M.lmHead);
  for (let i = 0; i < L; i++) block(i, i, M, types[i] === 'full_attention');
  if (h.extras) {
    // The MTP block: its layer's tensors renamed to layer L, plus the nextn tensors (norms + 1).
    block(L, 0, hf35('mtp.'), true);
    takeTop(`blk.${L}.nextn.eh_proj.weight`, 'mtp.fc.weight');
    takeTop(`blk.${L}.nextn.enorm.weight`, 'mtp.pre_fc_norm_embedding.weight', plusOne);
    takeTop(`blk.${L}.nextn.hnorm.weight`, 'mtp.pre_fc_norm_hidden.weight', plusOne);
    takeTop(`blk.${L}.nextn.shared_head_norm.weight`, 'mtp.norm.weight', plusOne);
  }
  return out;
}

/** The qwen35 / qwen35moe keys convert_hf_to_gguf.py writes (besides general.* and tokenizer.*). */
export function hybridGgufMetadata(o: ResolvedTinyOptions, arch: 'qwen35' | 'qwen35moe'): [string, GgufValue][] {
  const h = o.hybrid!, m = o.moe;
  const u32 = (value: number): GgufValue => ({ kind: 'u32', value });
  const f32 = (value: number): GgufValue => ({ kind: 'f32', value });
  const md: [string, GgufValue][] = [
    [`${arch}.block_count`, u32(o.layers + (h.extras ? 1 : 0))],
    [`${arch}.context_length`, u32(262144)],
    [`${arch}.embedding_length`, u32(o.hidden)],
    ...(m ? [] : [[`${arch}.feed_forward_length`, u32(o.intermediate)] as [string, GgufValue]]),
    [`${arch}.attention.head_count`, u32(o.heads)],
    [`${arch}.attention.head_count_kv`, u32(o.kvHeads)],
    [`${arch}.rope.freq_base`, f32(10000000)],
    [`${arch}.attention.layer_norm_rms_epsilon`, f32(1e-6)],
    [`${arch}.attention.key_length`, u32(o.headDim)],
    [`${arch}.attention.value_length`, u32(o.headDim)],
  ];
  if (m) {
    md.push([`${arch}.expert_count`, u32(m.experts)], [`${arch}.expert_used_count`, u32(m.topK)],
      [`${arch}.expert_feed_forward_length`, u32(m.intermediate)], [`${arch}.expert_shared_feed_forward_length`, u32(h.sharedExpertIntermediate)]);
  }
  md.push(
    [`${arch}.ssm.conv_kernel`, u32(h.convKernel)],
    [`${arch}.ssm.state_size`, u32(h.linearHeadDim)],
    [`${arch}.ssm.group_count`, u32(h.linearKeyHeads)],
    [`${arch}.ssm.time_step_rank`, u32(h.linearValueHeads)],
    [`${arch}.ssm.inner_size`, u32(h.linearHeadDim * h.linearValueHeads)],
    [`${arch}.full_attention_interval`, u32(h.fullAttentionInterval)],
    [`${arch}.rope.dimension_count`, u32(Math.floor(o.headDim * h.partialRotaryFactor))],
    [`${arch}.rope.dimension_sections`, { kind: 'array', of: 'i32', values: [11, 11, 10, 0] }],
  );
  if (h.extras) md.push([`${arch}.nextn_predict_layers`, u32(1)]);
  return md;
}
