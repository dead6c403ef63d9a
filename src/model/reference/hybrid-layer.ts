// One Qwen3.5 hybrid decoder layer on the CPU (HF Qwen3_5DecoderLayer / Qwen3_5MoeDecoderLayer), in place
// on the residual stream x [n, H]:
//   xn = rms(x) · input_layernorm
//   x += gated_attention(xn)   (full-attention layers)   or   x += gated_delta_net(xn)   (linear layers)
//   x += ffn(rms(x) · post_attention_layernorm): SwiGLU, or MoE + σ(shared_gate · hn) · shared SwiGLU
// Norm weights are multiplicative here (the loader added HF's 1 to the zero-centred ones).

import type { DenseFfnWeights, GatedAttentionWeights, GatedDeltaNetWeights, HybridLayerWeights, Linear, ModelConfig, MoeFfnWeights } from '../types.ts';
import {
  causalConv1dSilu, convChannels, deltaInputs, gatedDeltaChunked, gatedDeltaRecurrent, gatedRmsNorm, sigmoid, type DeltaDims,
} from './gated-delta.ts';
import type { KvCache } from './kv-cache.ts';
import { moeForward } from './moe.ts';
import { addInPlace, attention, matmul, rmsNorm, ropeNeox, siluMul, sliceColumns, tensorToF32, type DecodedLinear } from './ops.ts';
import type { LayerState } from './recurrent-state.ts';

export type WeightView = (w: Linear) => Linear | DecodedLinear;

/** A hybrid layer's small tensors decoded to f32 once. */
export interface HybridVectors {
  input: Float32Array;         // [H]
  post: Float32Array;          // [H]
  qNorm?: Float32Array;        // [D]     gated attention
  kNorm?: Float32Array;        // [D]
  conv?: Float32Array;         // [C, K]  Gated DeltaNet
  a?: Float32Array;            // [n_v]   A = −exp(A_log)
  dtBias?: Float32Array;       // [n_v]
  norm?: Float32Array;         // [d_v]
}

export function hybridVectors(w: HybridLayerWeights): HybridVectors {
  const v: HybridVectors = { input: tensorToF32(w.inputNorm), post: tensorToF32(w.postNorm) };
  const m = w.mixer;
  if (m.kind === 'gated_attention') { v.qNorm = tensorToF32(m.qNorm); v.kNorm = tensorToF32(m.kNorm); }
  else { v.conv = tensorToF32(m.conv); v.a = tensorToF32(m.a); v.dtBias = tensorToF32(m.dtBias); v.norm = tensorToF32(m.norm); }
  return v;
}

export function deltaDims(c: ModelConfig, m: GatedDeltaNetWeights): DeltaDims {
  const h = c.hybrid!;
  return {
    numKeyHeads: h.linearNumKeyHeads, numValueHeads: h.linearNumValueHeads, keyDim: h.linearKeyHeadDim,
    valueDim: h.linearValueHeadDim, convKernel: h.convKernel, valueHeads: m.valueHeads,
  };
}

export interface HybridLayerContext {
  config: ModelConfig;
  weight: WeightView;
  kv: KvCache;                 // holds this layer when it is full attention
  state?: LayerState;          // this layer's recurrent state when it is Gated DeltaNet
  deltaRule: 'recurrent' | 'chunked';
  onExpert?: (expert: number, tokens: number) => void;
}

export function hybridLayerForward(layer: HybridLayerWeights, vec: HybridVectors, ctx: HybridLayerContext, positions: number[], x: Float32Array): void {
  const c = ctx.config;
  const xn = rmsNorm(x, vec.input, c.rmsNormEps);                                         // [n, H]
  const mixed = layer.mixer.kind === 'gated_attention'
    ? gatedAttention(layer.index, layer.mixer, vec, ctx, positions, xn)
    : gatedDeltaNet(layer.mixer, vec, ctx, positions.length, xn);
  addInPlace(x, mixed);
  const hn = rmsNorm(x, vec.post, c.rmsNormEps);                                          // [n, H]
  addInPlace(x, layer.ffn.kind === 'dense' ? denseFfn(layer.ffn, ctx.weight, hn, positions.length) : moeFfn(layer.ffn, ctx, hn, positions.length));
}

/**
 * Gated attention: q_proj gives each head D query dims then D gate dims; q, k per-head RMSNorm then RoPE
 * on their first rotaryDim dims; causal GQA; output · sigmoid(gate); o_proj.
 */
function gatedAttention(index: number, m: GatedAttentionWeights, vec: HybridVectors, ctx: HybridLayerContext, positions: number[], xn: Float32Array): Float32Array {
  const c = ctx.config;
  const n = positions.length, D = c.headDim, Hq = c.numHeads, Hkv = c.numKvHeads;
  const qgWidth = 2 * Hq * D, kvWidth = Hkv * D, width = qgWidth + 2 * kvWidth;
  const qkv = matmul(ctx.weight(m.qkv), xn, n);                                           // [n, 2·Hq·D + 2·Hkv·D]
  const q = new Float32Array(n * Hq * D);                                                 // [n, Hq·D]
  const gate = new Float32Array(n * Hq * D);                                              // [n, Hq·D]
  for (let t = 0; t < n; t++) {
    for (let h = 0; h < Hq; h++) {
      const from = t * width + 2 * h * D;
      q.set(qkv.subarray(from, from + D), (t * Hq + h) * D);
      gate.set(qkv.subarray(from + D, from + 2 * D), (t * Hq + h) * D);
    }
  }
  const qn = rmsNorm(q, vec.qNorm!, c.rmsNormEps);
  const k = rmsNorm(sliceColumns(qkv, width, qgWidth, qgWidth + kvWidth), vec.kNorm!, c.rmsNormEps); // [n, Hkv·D]
  const v = sliceColumns(qkv, width, qgWidth + kvWidth, width);                                       // [n, Hkv·D]
  const R = c.hybrid!.rotaryDim;
  ropeNeox(qn, positions, Hq, D, c.ropeTheta, R);
  ropeNeox(k, positions, Hkv, D, c.ropeTheta, R);
  ctx.kv.append(index, positions, k, v);
  const attn = attention(qn, ctx.kv.view(index), positions, Hq, Hkv, D);                  // [n, Hq·D]
  for (let i = 0; i < attn.length; i++) attn[i] = attn[i]! * sigmoid(gate[i]!);
  return matmul(ctx.weight(m.o), attn, n);                                                // [n, H]
}

/**
 * Gated DeltaNet: in_proj_qkv|z and in_proj_b|a; causal conv + SiLU over q|k|v continuing the conv
 * state; L2-normalised q (· 1/√d_k) and k; β = σ(b), g = A · softplus(a + dt_bias); the delta rule on
 * the recurrent state; gated RMSNorm with z; out_proj.
 */
function gatedDeltaNet(m: GatedDeltaNetWeights, vec: HybridVectors, ctx: HybridLayerContext, n: number, xn: Float32Array): Float32Array {
  const d = deltaDims(ctx.config, m);
  const state = ctx.state!;
  const { numValueHeads: nv, valueDim: dv, convKernel: K } = d;
  const C = convChannels(d), Vd = nv * dv;
  const qkvz = matmul(ctx.weight(m.qkvz), xn, n);                                         // [n, C + n_v·d_v]
  const ba = matmul(ctx.weight(m.ba), xn, n);                                             // [n, 2·n_v]
  const conv = causalConv1dSilu(sliceColumns(qkvz, C + Vd, 0, C), n, vec.conv!, state.conv, C, K); // [n, C]
  const z = sliceColumns(qkvz, C + Vd, C, C + Vd);                                        // [n, n_v·d_v]
  const inputs = deltaInputs(conv, ba, vec.a!, vec.dtBias!, n, d);
  const o = ctx.deltaRule === 'chunked' ? gatedDeltaChunked(inputs, n, d, state.delta) : gatedDeltaRecurrent(inputs, n, d, state.delta);
  state.length += n;
  return matmul(ctx.weight(m.out), gatedRmsNorm(o, z, vec.norm!, ctx.config.rmsNormEps), n); // [n, H]
}

function denseFfn(f: DenseFfnWeights, weight: WeightView, hn: Float32Array, n: number): Float32Array {
  const I = f.gateUp.rows / 2;
  return matmul(weight(f.down), siluMul(matmul(weight(f.gateUp), hn, n), I), n);        // [n, H]
}

/** Routed experts (./moe.ts) plus the shared expert: y = moe(hn) + f32(σ(shared_gate · hn) · shared(hn)). */
function moeFfn(f: MoeFfnWeights, ctx: HybridLayerContext, hn: Float32Array, n: number): Float32Array {
  const w = ctx.weight, m = f.moe;
  const routed = moeForward(m, { router: w(m.router), gate: w(m.gate), up: w(m.up), down: w(m.down) }, hn, n, ctx.onExpert).out; // [n, H]
  const s = f.shared;
  const shared = matmul(w(s.down), siluMul(matmul(w(s.gateUp), hn, n), s.intermediate), n);          // [n, H]
  const gate = matmul(w(s.gate), hn, n);                                                              // [n, 1]
  const H = hn.length / n;
  for (let t = 0; t < n; t++) {
    const sg = sigmoid(gate[t]!);
    for (let h = 0; h < H; h++) routed[t * H + h] = routed[t * H + h]! + Math.fround(sg * shared[t * H + h]!);
  }
  return routed;
}
