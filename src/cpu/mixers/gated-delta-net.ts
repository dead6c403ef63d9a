// Qwen3.5 Gated DeltaNet on the CPU engine (src/model/reference/mixers/gated-delta-net.ts): the three
// linears (in_proj_qkv|z, in_proj_b|a, out_proj) run on the WASM kernels; the causal conv, the delta
// rule and the gated RMSNorm are the reference's own functions (src/model/reference/gated-delta.ts) on
// the layer's recurrent state, so snapshots and truncation behave bit for bit as the reference's.
// (Moving those three into WASM is later work: they are a small share of a token's time.)
import {
  causalConv1dSilu, convChannels, deltaInputs, gatedDeltaRecurrent, gatedRmsNorm,
} from '../../model/reference/gated-delta.ts';
import { deltaDims } from '../../model/reference/mixers/gated-delta-net.ts';
import { sliceColumns, tensorToF32 } from '../../model/reference/ops.ts';
import type { GatedDeltaNetWeights } from '../../model/types.ts';
import type { CpuMixerRow } from '../layer-contract.ts';

export const gatedDeltaNetMixer: CpuMixerRow<GatedDeltaNetWeights> = {
  linears: (m) => [m.qkvz, m.ba, m.out],
  place(k, m) {
    const qkvzW = k.placeLinear(m.qkvz), baW = k.placeLinear(m.ba), outW = k.placeLinear(m.out);
    const convTaps = tensorToF32(m.conv);                                         // [C, K]
    const a = tensorToF32(m.a);                                                   // [n_v]
    const dtBias = tensorToF32(m.dtBias);                                         // [n_v]
    const norm = tensorToF32(m.norm);                                             // [d_v]
    return (ctx, _pos0, n, xn) => {
      const d = deltaDims(ctx.config, m);
      const state = ctx.state!;
      const C = convChannels(d), Vd = d.numValueHeads * d.valueDim;
      const qkvzP = k.alloc(n * (C + Vd) * 4), baP = k.alloc(n * 2 * d.numValueHeads * 4);
      k.linearAt(qkvzW, xn, n, qkvzP, C + Vd);
      k.linearAt(baW, xn, n, baP, 2 * d.numValueHeads);
      const qkvz = k.f32(qkvzP, n * (C + Vd)).slice();                            // [n, C + n_v·d_v]
      const ba = k.f32(baP, n * 2 * d.numValueHeads).slice();                     // [n, 2·n_v]
      const conv = causalConv1dSilu(sliceColumns(qkvz, C + Vd, 0, C), n, convTaps, state.conv, C, d.convKernel);
      const z = sliceColumns(qkvz, C + Vd, C, C + Vd);
      const o = gatedDeltaRecurrent(deltaInputs(conv, ba, a, dtBias, n, d), n, d, state.delta);
      state.length += n;
      const yIn = k.input(gatedRmsNorm(o, z, norm, ctx.config.rmsNormEps));       // [n, n_v·d_v]
      const H = ctx.config.hiddenSize;
      const y = k.alloc(n * H * 4);
      k.linearAt(outW, yIn, n, y, H);
      return y;
    };
  },
};
