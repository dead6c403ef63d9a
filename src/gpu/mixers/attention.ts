// Qwen3 attention on the device (the reference: src/model/reference/mixers/attention.ts), between the
// layer's two norms (./layers.ts), reading act.xn:
//   linear qkv     xn -> qkv                  [n, (Hq + 2·Hkv)·D]  (decode: x with the input norm folded in)
//   qk_norm_rope   qkv -> q, K/V cache        (q/k RMSNorm per head, RoPE neox, f16 K/V at pos0..;
//                                             q8_0: f32 K/V staged, then kv_store_q8_0 quantizes them)
//   attention      q, cache -> att            [n, Hq·D]
//   linear o       att -> x (+=)              residual fused in the epilogue
import type { AttentionWeights } from '../../model/types.ts';
import { uploadLinear, uploadNorm } from '../gpu-weights.ts';
import { attentionOp } from '../kernels/attention/attention.ts';
import { Epilogue, linearOps, normToFold } from '../kernels/linear/linear.ts';
import { qkNormRopeOp } from '../kernels/attention/qk-norm-rope.ts';
import type { GpuMixerRow } from '../layer-contract.ts';
import type { Op } from '../op.ts';
import { createKvCache } from './kv-cache.ts';

export const attentionMixer: GpuMixerRow<AttentionWeights> = {
  linears: (m) => [m.qkv, m.o],
  upload({ device, cache, cfg, act, ctx, kv, maxBindingBytes, index, name, norm }, m) {
    const { hiddenSize: H, numHeads: Hq, numKvHeads: Hkv, headDim: D, rmsNormEps: eps } = cfg;
    const qkv = uploadLinear(device, m.qkv, maxBindingBytes);
    const o = uploadLinear(device, m.o, maxBindingBytes);
    const [qNorm, kNorm] = [m.qNorm, m.kNorm].map((t) => uploadNorm(device, t)) as [GPUBuffer, GPUBuffer];
    const step = act.step;
    const heads = { Hq, Hkv, D };
    const c = createKvCache(device, cache, act, index, ctx, heads, maxBindingBytes, kv);
    const { kcache, vcache } = c;
    const foldNorm = normToFold(norm, qkv);
    const ops: Op[] = [
      ...linearOps(cache, qkv, { step, x: act.xn, y: act.qkv, outStride: (Hq + 2 * Hkv) * D, epilogue: Epilogue.STORE, foldNorm }),
      qkNormRopeOp(cache, { step, qkv: act.qkv, qnorm: qNorm, knorm: kNorm, rope: act.rope, q: act.q, kcache: c.kTarget, vcache: c.vTarget }, heads, eps, `${name} qk_norm_rope`, c.stage),
      ...c.store,
      attentionOp(cache, { step, q: act.q, kcache, vcache, out: act.att, part: act.part }, heads, `${name} attention`, cache.tuning.attention, c.layout),
      ...linearOps(cache, o, { step, x: act.att, y: act.x, outStride: H, epilogue: Epilogue.ADD_RESIDUAL }),
    ];
    return { linears: [qkv, o], norms: [qNorm, kNorm], kcache, vcache, ops, normFolded: foldNorm !== undefined };
  },
};
