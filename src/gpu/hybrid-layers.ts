// One Qwen3.5 hybrid decoder layer on the device (the GPU twin of src/model/reference/hybrid-layer.ts):
// its weights, its KV cache (gated attention) or its recurrent state (Gated DeltaNet), and its ops.
// Projections go through the engine's matvec / matmul kernels; the rest are the hybrid kernels.
//
// Gated attention, in order:
//   rmsnorm            x -> xn                     input_layernorm
//   linear qkv         xn -> qkv                   [n, 2·Hq·D + 2·Hkv·D]  (q_proj: query|gate per head, k, v)
//   gated_qk_norm_rope qkv -> q, gate, K/V cache   q/k RMSNorm, RoPE neox on the first R dims, f16 K/V
//   attention          q, cache -> att             [n, Hq·D]
//   sigmoid_gate       att ·= σ(gate)
//   linear o           att -> x (+=)
// Gated DeltaNet:
//   rmsnorm            x -> xn
//   linear qkvz        xn -> lin                   [n, C + n_v·d_v]   (in_proj_qkv | in_proj_z)
//   linear ba          xn -> ba                    [n, 2·n_v]         (in_proj_b | in_proj_a)
//   causal_conv1d      lin[:, :C] -> conv          + SiLU, rolling conv state [K−1, C]
//   gated_delta        conv, ba -> o               delta state [n_v, d_k, d_v]
//   gated_rmsnorm      o, z = lin[:, C:] -> att    [n, n_v·d_v]
//   linear out         att -> x (+=)
// then both: rmsnorm (post_attention_layernorm), SwiGLU MLP with the residual in down's epilogue.
// Routed MoE layers (Qwen3.5 MoE) have no kernels here yet: createWebGPUEngine refuses them by name.
import { convChannels } from '../model/reference/gated-delta.ts';
import type { GatedAttentionWeights, GatedDeltaNetWeights, HybridLayerWeights, Linear, ModelConfig } from '../model/types.ts';
import { uploadLinear, uploadNorm } from './gpu-weights.ts';
import { attentionOp } from './kernels/attention.ts';
import { causalConv1dOp } from './kernels/causal-conv1d.ts';
import { gatedDeltaOp } from './kernels/gated-delta.ts';
import { gatedQkNormRopeOp } from './kernels/gated-qk-norm-rope.ts';
import { gatedRmsnormOp } from './kernels/gated-rmsnorm.ts';
import { Epilogue, linearOps } from './kernels/linear.ts';
import { rmsnormOp } from './kernels/rmsnorm.ts';
import { GateMode, sigmoidGateOp } from './kernels/sigmoid-gate.ts';
import { createKvCache, swigluOps, type Activations, type GpuLayer } from './layers.ts';
import type { Op } from './op.ts';
import type { PipelineCache } from './pipelines.ts';

/** Activations only hybrid layers use, sized for T tokens a step. */
export interface HybridActivations {
  gate: GPUBuffer;             // [T, Hq·D] gated attention's output gate
  lin: GPUBuffer;              // [T, C + n_v·d_v] q|k|v|z
  ba: GPUBuffer;               // [T, 2·n_v]
  conv: GPUBuffer;             // [T, C]
  delta: GPUBuffer;            // [T, n_v·d_v] the delta rule's output
}

/** The widths a hybrid model's activations need (att must also hold the gated norm's [T, n_v·d_v]). */
export function hybridWidths(cfg: ModelConfig): { qkv: number; att: number; lin: number; ba: number; conv: number; delta: number } {
  const h = cfg.hybrid!;
  const { numHeads: Hq, numKvHeads: Hkv, headDim: D } = cfg;
  const C = 2 * h.linearNumKeyHeads * h.linearKeyHeadDim + h.linearNumValueHeads * h.linearValueHeadDim;
  const Vd = h.linearNumValueHeads * h.linearValueHeadDim;
  return { qkv: 2 * (Hq + Hkv) * D, att: Math.max(Hq * D, Vd), lin: C + Vd, ba: 2 * h.linearNumValueHeads, conv: C, delta: Vd };
}

export function uploadHybridLayer(
  device: GPUDevice, cache: PipelineCache, cfg: ModelConfig, w: HybridLayerWeights, act: Activations,
  ctx: number, maxBindingBytes: number,
): GpuLayer {
  if (w.ffn.kind !== 'dense') throw new Error(`layer ${w.index}: routed MoE layers have no WebGPU kernels`);
  const { hiddenSize: H, rmsNormEps: eps, intermediateSize: I } = cfg;
  const name = `layer ${w.index}`;
  const [inputNorm, postNorm] = [w.inputNorm, w.postNorm].map((t) => uploadNorm(device, t)) as [GPUBuffer, GPUBuffer];
  const gateUp = uploadLinear(device, w.ffn.gateUp, maxBindingBytes);
  const down = uploadLinear(device, w.ffn.down, maxBindingBytes);
  const input = rmsnormOp(cache, { step: act.step, x: act.x, weight: inputNorm, y: act.xn }, H, eps, `${name} input_layernorm`);
  const post = rmsnormOp(cache, { step: act.step, x: act.x, weight: postNorm, y: act.xn }, H, eps, `${name} post_attention_layernorm`);
  const mixer = w.mixer.kind === 'gated_attention'
    ? gatedAttention(device, cache, cfg, w.index, w.mixer, act, ctx, maxBindingBytes)
    : gatedDeltaNet(device, cache, cfg, w.index, w.mixer, act, maxBindingBytes);
  return {
    ...mixer,
    index: w.index,
    linears: [...mixer.linears, gateUp, down],
    norms: [inputNorm, postNorm, ...mixer.norms],
    ops: [input, ...mixer.ops, post, ...swigluOps(cache, gateUp, down, act, I, name)],
    kvLength: 0,
  };
}

type Mixer = Pick<GpuLayer, 'linears' | 'norms' | 'ops' | 'kcache' | 'vcache' | 'state'>;

function gatedAttention(
  device: GPUDevice, cache: PipelineCache, cfg: ModelConfig, index: number, m: GatedAttentionWeights, act: Activations,
  ctx: number, maxBindingBytes: number,
): Mixer {
  const { hiddenSize: H, numHeads: Hq, numKvHeads: Hkv, headDim: D, rmsNormEps: eps } = cfg;
  const hy = act.hybrid!;
  const name = `layer ${index}`;
  const step = act.step;
  const qkv = uploadLinear(device, m.qkv, maxBindingBytes);
  const o = uploadLinear(device, m.o, maxBindingBytes);
  const [qNorm, kNorm] = [m.qNorm, m.kNorm].map((t) => uploadNorm(device, t)) as [GPUBuffer, GPUBuffer];
  const { kcache, vcache } = createKvCache(device, index, ctx, Hkv * D, maxBindingBytes);
  const heads = { Hq, Hkv, D };
  const ops: Op[] = [
    ...linearOps(cache, qkv, { step, x: act.xn, y: act.qkv, outStride: 2 * (Hq + Hkv) * D, epilogue: Epilogue.STORE }),
    gatedQkNormRopeOp(cache, {
      step, qkv: act.qkv, qnorm: qNorm, knorm: kNorm, rope: act.rope, q: act.q, gate: hy.gate, kcache, vcache,
    }, { ...heads, rot: cfg.hybrid!.rotaryDim }, eps, `${name} gated_qk_norm_rope`),
    attentionOp(cache, { step, q: act.q, kcache, vcache, out: act.att, part: act.part }, heads, `${name} attention`, cache.tuning.attention),
    sigmoidGateOp(cache, { step, g: hy.gate, x: hy.gate, y: act.att }, { W: Hq * D, GS: Hq * D, mode: GateMode.OUTPUT }, `${name} output gate`),
    ...linearOps(cache, o, { step, x: act.att, y: act.x, outStride: H, epilogue: Epilogue.ADD_RESIDUAL }),
  ];
  return { linears: [qkv, o], norms: [qNorm, kNorm], ops, kcache, vcache };
}

function gatedDeltaNet(
  device: GPUDevice, cache: PipelineCache, cfg: ModelConfig, index: number, m: GatedDeltaNetWeights, act: Activations, maxBindingBytes: number,
): Mixer {
  const h = cfg.hybrid!;
  const { hiddenSize: H, rmsNormEps: eps } = cfg;
  const hy = act.hybrid!;
  const name = `layer ${index}`;
  const step = act.step;
  const nk = h.linearNumKeyHeads, nv = h.linearNumValueHeads, dk = h.linearKeyHeadDim, dv = h.linearValueHeadDim, K = h.convKernel;
  const C = convChannels({ numKeyHeads: nk, numValueHeads: nv, keyDim: dk, valueDim: dv, convKernel: K, valueHeads: m.valueHeads });
  const Vd = nv * dv;
  const qkvz = uploadLinear(device, m.qkvz, maxBindingBytes);
  const ba = uploadLinear(device, m.ba, maxBindingBytes);
  const out = uploadLinear(device, m.out, maxBindingBytes);
  const [conv, a, dtBias, norm] = [m.conv, m.a, m.dtBias, m.norm].map((t) => uploadNorm(device, t)) as [GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer];
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const convBytes = (K - 1) * C * 4, deltaBytes = nv * dk * dv * 4;
  const state = {
    index, convBytes, deltaBytes,
    conv: device.createBuffer({ label: `${name} conv state`, size: convBytes, usage }),
    delta: device.createBuffer({ label: `${name} delta state`, size: deltaBytes, usage }),
  };
  const ops: Op[] = [
    ...linearOps(cache, qkvz, { step, x: act.xn, y: hy.lin, outStride: C + Vd, epilogue: Epilogue.STORE }),
    ...linearOps(cache, ba, { step, x: act.xn, y: hy.ba, outStride: 2 * nv, epilogue: Epilogue.STORE }),
    causalConv1dOp(cache, { step, x: hy.lin, weight: conv, state: state.conv, y: hy.conv }, { C, K, XS: C + Vd }, `${name} conv1d`),
    gatedDeltaOp(cache, { step, conv: hy.conv, ba: hy.ba, a, dt_bias: dtBias, state: state.delta, out: hy.delta },
      { NK: nk, NV: nv, DK: dk, DV: dv, tiled: m.valueHeads === 'tiled' }, `${name} gated_delta`),
    gatedRmsnormOp(cache, { step, o: hy.delta, z: hy.lin, weight: norm, y: act.att }, { NV: nv, DV: dv, ZS: C + Vd, ZOFF: C }, eps, `${name} gated_rmsnorm`),
    ...linearOps(cache, out, { step, x: act.att, y: act.x, outStride: H, epilogue: Epilogue.ADD_RESIDUAL }),
  ];
  return { linears: [qkvz, ba, out], norms: [conv, a, dtBias, norm], ops, state };
}

/** The linears of a hybrid layer the engine uploads (dense MLP only). */
export function hybridLinears(w: HybridLayerWeights): Linear[] {
  const m = w.mixer;
  const mixer = m.kind === 'gated_attention' ? [m.qkv, m.o] : [m.qkvz, m.ba, m.out];
  return w.ffn.kind === 'dense' ? [...mixer, w.ffn.gateUp, w.ffn.down] : mixer;
}
