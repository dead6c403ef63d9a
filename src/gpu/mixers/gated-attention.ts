// Qwen3.5 gated attention on the device (the reference: src/model/reference/mixers/gated-attention.ts),
// reading act.xn:
//   linear qkv         xn -> qkv                   [n, 2·Hq·D + 2·Hkv·D]  (q_proj: query|gate per head, k, v)
//   gated_qk_norm_rope qkv -> q, gate, K/V cache   q/k RMSNorm, RoPE neox on the first R dims, f16 K/V
//                                                  (q8_0: staged in f32, then kv_store_q8_0)
//   attention          q, cache -> att             [n, Hq·D]
//   sigmoid_gate       att ·= σ(gate)
//   linear o           att -> x (+=)
import type { GatedAttentionWeights } from '../../model/types.ts';
import { uploadLinear, uploadNorm } from '../gpu-weights.ts';
import { attentionOp } from '../kernels/attention/attention.ts';
import { gatedQkNormRopeOp } from '../kernels/hybrid/gated-qk-norm-rope.ts';
import { Epilogue, linearOps, normToFold } from '../kernels/linear/linear.ts';
import { GateMode, sigmoidGateOp } from '../kernels/hybrid/sigmoid-gate.ts';
import type { GpuMixerRow } from '../layer-contract.ts';
import type { Op } from '../op.ts';
import { createKvCache } from './kv-cache.ts';

export const gatedAttentionMixer: GpuMixerRow<GatedAttentionWeights> = {
  linears: (m) => [m.qkv, m.o],
  upload({ device, cache, cfg, act, ctx, kv, maxBindingBytes, index, name, norm }, m) {
    const { hiddenSize: H, numHeads: Hq, numKvHeads: Hkv, headDim: D, rmsNormEps: eps } = cfg;
    const hy = act.hybrid;
    if (!hy) throw new Error('engine: a gated attention layer but no hybrid activations were made');
    const step = act.step;
    const qkv = uploadLinear(device, m.qkv, maxBindingBytes);
    const o = uploadLinear(device, m.o, maxBindingBytes);
    const [qNorm, kNorm] = [m.qNorm, m.kNorm].map((t) => uploadNorm(device, t)) as [GPUBuffer, GPUBuffer];
    const heads = { Hq, Hkv, D };
    const c = createKvCache(device, cache, act, index, ctx, heads, maxBindingBytes, kv);
    const { kcache, vcache } = c;
    const foldNorm = normToFold(norm, qkv);
    const ops: Op[] = [
      ...linearOps(cache, qkv, { step, x: act.xn, y: act.qkv, outStride: 2 * (Hq + Hkv) * D, epilogue: Epilogue.STORE, foldNorm }),
      gatedQkNormRopeOp(cache, {
        step, qkv: act.qkv, qnorm: qNorm, knorm: kNorm, rope: act.rope, q: act.q, gate: hy.gate, kcache: c.kTarget, vcache: c.vTarget,
      }, { ...heads, rot: cfg.hybrid!.rotaryDim }, eps, `${name} gated_qk_norm_rope`, c.stage),
      ...c.store,
      attentionOp(cache, { step, q: act.q, kcache, vcache, out: act.att, part: act.part }, heads, `${name} attention`, cache.tuning.attention, c.layout),
      sigmoidGateOp(cache, { step, g: hy.gate, x: hy.gate, y: act.att }, { W: Hq * D, GS: Hq * D, mode: GateMode.OUTPUT }, `${name} output gate`),
      ...linearOps(cache, o, { step, x: act.att, y: act.x, outStride: H, epilogue: Epilogue.ADD_RESIDUAL }),
    ];
    return { linears: [qkv, o], norms: [qNorm, kNorm], ops, kcache, vcache, normFolded: foldNorm !== undefined };
  },
};
