// Qwen3.5 Gated DeltaNet on the device (the reference: src/model/reference/mixers/gated-delta-net.ts),
// reading act.xn, with its recurrent state (conv [K−1, C], delta [n_v, d_k, d_v], f32):
//   linear qkvz        xn -> lin                   [n, C + n_v·d_v]   (in_proj_qkv | in_proj_z)
//   linear ba          xn -> ba                    [n, 2·n_v]         (in_proj_b | in_proj_a)
//   causal_conv1d      lin[:, :C] -> conv          + SiLU, rolling conv state [K−1, C]
//   gated_delta        conv, ba -> o               delta state [n_v, d_k, d_v]
//   gated_rmsnorm      o, z = lin[:, C:] -> att    [n, n_v·d_v]
//   linear out         att -> x (+=)
import { convChannels } from '../../model/reference/gated-delta.ts';
import type { GatedDeltaNetWeights } from '../../model/types.ts';
import { UnsupportedWeightError } from '../errors.ts';
import { uploadLinear, uploadNorm } from '../gpu-weights.ts';
import { MAX_CONV_KERNEL, causalConv1dOp } from '../kernels/hybrid/causal-conv1d.ts';
import { MAX_DELTA_KEY_DIM, gatedDeltaOp } from '../kernels/hybrid/gated-delta.ts';
import { gatedRmsnormOp } from '../kernels/hybrid/gated-rmsnorm.ts';
import { Epilogue, linearOps, normToFold } from '../kernels/linear/linear.ts';
import type { GpuMixerRow } from '../layer-contract.ts';
import type { Op } from '../op.ts';

export const gatedDeltaNetMixer: GpuMixerRow<GatedDeltaNetWeights> = {
  linears: (m) => [m.qkvz, m.ba, m.out],
  check(cfg, _m, i) {
    const h = cfg.hybrid;
    if (!h) return;
    if (h.linearKeyHeadDim > MAX_DELTA_KEY_DIM) throw new UnsupportedWeightError(`layer ${i}: Gated DeltaNet key heads of ${h.linearKeyHeadDim} dims; the WebGPU delta-rule kernel holds at most ${MAX_DELTA_KEY_DIM}`);
    if (h.convKernel < 2 || h.convKernel > MAX_CONV_KERNEL) throw new UnsupportedWeightError(`layer ${i}: a causal conv of ${h.convKernel} taps; the WebGPU kernel takes 2 .. ${MAX_CONV_KERNEL}`);
  },
  upload({ device, cache, cfg, act, maxBindingBytes, index, name, norm: inputNorm }, m) {
    const h = cfg.hybrid!;
    const { hiddenSize: H, rmsNormEps: eps } = cfg;
    const hy = act.hybrid;
    if (!hy) throw new Error('engine: a Gated DeltaNet layer but no hybrid activations were made');
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
    // both read xn: each folds the input norm (each sums x² itself) or neither does
    const foldNorm = normToFold(inputNorm, qkvz, ba);
    const ops: Op[] = [
      ...linearOps(cache, qkvz, { step, x: act.xn, y: hy.lin, outStride: C + Vd, epilogue: Epilogue.STORE, foldNorm }),
      ...linearOps(cache, ba, { step, x: act.xn, y: hy.ba, outStride: 2 * nv, epilogue: Epilogue.STORE, foldNorm }),
      causalConv1dOp(cache, { step, x: hy.lin, weight: conv, state: state.conv, y: hy.conv }, { C, K, XS: C + Vd }, `${name} conv1d`),
      gatedDeltaOp(cache, { step, conv: hy.conv, ba: hy.ba, a, dt_bias: dtBias, state: state.delta, out: hy.delta },
        { NK: nk, NV: nv, DK: dk, DV: dv, tiled: m.valueHeads === 'tiled' }, `${name} gated_delta`),
      gatedRmsnormOp(cache, { step, o: hy.delta, z: hy.lin, weight: norm, y: act.att }, { NV: nv, DV: dv, ZS: C + Vd, ZOFF: C }, eps, `${name} gated_rmsnorm`),
      ...linearOps(cache, out, { step, x: act.att, y: act.x, outStride: H, epilogue: Epilogue.ADD_RESIDUAL }),
    ];
    return { linears: [qkvz, ba, out], norms: [conv, a, dtBias, norm], ops, state, normFolded: foldNorm !== undefined };
  },
};
