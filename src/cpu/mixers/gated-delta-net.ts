// Qwen3.5 Gated DeltaNet on the WASM kernels (src/model/reference/mixers/gated-delta-net.ts, HF
// Qwen3_5GatedDeltaNet), on xn [n, H], continuing the layer's state in the kernels' memory:
//   qkvz = xn · W_qkvzᵀ [n, C + n_v·d_v];  ba = xn · W_baᵀ [n, 2·n_v]
//   conv = silu(causal_conv1d(q|k|v, state.conv))  [n, C]       (./asm/gated-delta.ts convSilu)
//   q̂ = l2norm(q)/√d_k, k̂ = l2norm(k) in place;  β = σ(b), g = A · softplus(a + dt_bias)
//   o = gated delta rule(q̂, k̂, v, g, β; state.delta)  [n, n_v·d_v]
//   out = (rmsnorm(o) · norm · silu(z)) · W_outᵀ  [n, H]
import { convChannels } from '../../model/reference/gated-delta.ts';
import { deltaDims } from '../../model/reference/mixers/gated-delta-net.ts';
import { tensorToF32 } from '../../model/reference/ops.ts';
import type { GatedDeltaNetWeights } from '../../model/types.ts';
import type { CpuMixerRow } from '../layer-contract.ts';

/** The conv taps [C, K] transposed to [K, C], so each tap's channels load four at a time. */
function transposeTaps(w: Float32Array, C: number, K: number): Float32Array {
  const t = new Float32Array(C * K);
  for (let c = 0; c < C; c++) for (let j = 0; j < K; j++) t[j * C + c] = w[c * K + j]!;
  return t;
}

export const gatedDeltaNetMixer: CpuMixerRow<GatedDeltaNetWeights> = {
  linears: (m) => [m.qkvz, m.ba, m.out],
  place(k, m) {
    const qkvzW = k.placeLinear(m.qkvz), baW = k.placeLinear(m.ba), outW = k.placeLinear(m.out);
    const taps = tensorToF32(m.conv);                                             // [C, K]
    const [C0, K] = [m.conv.shape[0]!, m.conv.shape[1]!];
    const convT = k.put(transposeTaps(taps, C0, K));                              // [K, C]
    const a = k.put(tensorToF32(m.a));                                            // [n_v] A = −exp(A_log)
    const dtBias = k.put(tensorToF32(m.dtBias));                                  // [n_v]
    const norm = k.put(tensorToF32(m.norm));                                      // [d_v]
    return (ctx, _pos0, n, xn) => {
      const d = deltaDims(ctx.config, m);
      const state = ctx.state!;
      const { numKeyHeads: nk, numValueHeads: nv, keyDim: dk, valueDim: dv } = d;
      const C = convChannels(d), Vd = nv * dv, W = C + Vd;
      if (d.convKernel !== K || C !== C0) throw new RangeError(`gated delta net: conv weight [${C0}, ${K}] does not fit C ${C}, K ${d.convKernel}`);
      const qkvz = k.alloc(n * W * 4), ba = k.alloc(n * 2 * nv * 4);
      k.linearAt(qkvzW, xn, n, qkvz, W);
      k.linearAt(baW, xn, n, ba, 2 * nv);
      const conv = k.alloc(n * C * 4);                                            // [n, C] q | k | v
      k.convSiluAt(qkvz, W, n, convT, state.conv, C, K, conv);
      k.l2normHeadsAt(conv, C, n, nk, dk, 1 / Math.sqrt(dk));                     // q̂ in place
      k.l2normHeadsAt(conv + nk * dk * 4, C, n, nk, dk, 1);                       // k̂ in place
      const g = k.alloc(n * nv * 4), beta = k.alloc(n * nv * 4);
      k.deltaGatesAt(ba, a, dtBias, n, nv, g, beta);
      const o = k.alloc(n * Vd * 4);
      k.gatedDeltaRuleAt(conv, g, beta, state.delta, o, n, { ...d, tiled: d.valueHeads === 'tiled' });
      state.length += n;
      k.gatedRmsNormAt(o, qkvz + C * 4, W, norm, o, n, nv, dv, ctx.config.rmsNormEps);  // z: columns C.. of qkvz
      const H = ctx.config.hiddenSize;
      const y = k.alloc(n * H * 4);
      k.linearAt(outW, o, n, y, H);
      return y;
    };
  },
};
