// Qwen3.5 Gated DeltaNet on the CPU (HF Qwen3_5GatedDeltaNet): in_proj_qkv|z and in_proj_b|a; causal conv
// + SiLU over q|k|v continuing the conv state; L2-normalised q (· 1/√d_k) and k; β = σ(b), g = A ·
// softplus(a + dt_bias); the delta rule on the recurrent state; gated RMSNorm with z; out_proj.
// xn [n, H] -> [n, H]. The math is ../gated-delta.ts; the state (and its snapshots) ../recurrent-state.ts.
import type { GatedDeltaNetWeights, ModelConfig } from '../../types.ts';
import {
  causalConv1dSilu, convChannels, deltaInputs, gatedDeltaChunked, gatedDeltaRecurrent, gatedRmsNorm, type DeltaDims,
} from '../gated-delta.ts';
import type { ReferenceMixerRow } from '../layer-contract.ts';
import { matmul, sliceColumns, tensorToF32 } from '../ops.ts';

export function deltaDims(c: ModelConfig, m: GatedDeltaNetWeights): DeltaDims {
  const h = c.hybrid!;
  return {
    numKeyHeads: h.linearNumKeyHeads, numValueHeads: h.linearNumValueHeads, keyDim: h.linearKeyHeadDim,
    valueDim: h.linearValueHeadDim, convKernel: h.convKernel, valueHeads: m.valueHeads,
  };
}

export const gatedDeltaNetMixer: ReferenceMixerRow<GatedDeltaNetWeights> = {
  bind(m) {
    const convTaps = tensorToF32(m.conv);                                                 // [C, K]
    const a = tensorToF32(m.a);                                                           // [n_v] A = −exp(A_log)
    const dtBias = tensorToF32(m.dtBias);                                                 // [n_v]
    const norm = tensorToF32(m.norm);                                                     // [d_v]
    return (ctx, positions, xn) => {
      const n = positions.length;
      const d = deltaDims(ctx.config, m);
      const state = ctx.state!;
      const { numValueHeads: nv, valueDim: dv, convKernel: K } = d;
      const C = convChannels(d), Vd = nv * dv;
      const qkvz = matmul(ctx.weight(m.qkvz), xn, n);                                         // [n, C + n_v·d_v]
      const ba = matmul(ctx.weight(m.ba), xn, n);                                             // [n, 2·n_v]
      const conv = causalConv1dSilu(sliceColumns(qkvz, C + Vd, 0, C), n, convTaps, state.conv, C, K); // [n, C]
      const z = sliceColumns(qkvz, C + Vd, C, C + Vd);                                        // [n, n_v·d_v]
      const inputs = deltaInputs(conv, ba, a, dtBias, n, d);
      const o = ctx.deltaRule === 'chunked' ? gatedDeltaChunked(inputs, n, d, state.delta) : gatedDeltaRecurrent(inputs, n, d, state.delta);
      state.length += n;
      return matmul(ctx.weight(m.out), gatedRmsNorm(o, z, norm, ctx.config.rmsNormEps), n); // [n, H]
    };
  },
};
