// Qwen3.5 gated attention on the WASM kernels (src/model/reference/mixers/gated-attention.ts): q_proj gives
// each head D query dims then D gate dims; q, k per-head RMSNorm then RoPE on their first rotaryDim dims;
// causal GQA over the KV cache; output · sigmoid(gate) (the sigmoidGate kernel: in f64, rounded once, as the
// reference); o_proj.
import type { GatedAttentionWeights } from '../../model/types.ts';
import type { CpuMixerRow } from '../layer-contract.ts';
import { attendHeads, placeAttention, qkvWidths, splitColumns } from './attention.ts';

export const gatedAttentionMixer: CpuMixerRow<GatedAttentionWeights> = {
  linears: (m) => [m.qkv, m.o],
  place(k, m, index) {
    const w = placeAttention(k, m);
    return (ctx, pos0, n, xn) => {
      const c = ctx.config;
      const { qWidth, kvWidth } = qkvWidths(c);
      const D = c.headDim, Hq = c.numHeads;
      const width = 2 * qWidth + 2 * kvWidth;
      const qkv = k.alloc(n * width * 4);
      k.linearAt(w.qkv, xn, n, qkv, width);
      const q = k.alloc(n * qWidth * 4), gate = k.alloc(n * qWidth * 4);
      const kk = k.alloc(n * kvWidth * 4), v = k.alloc(n * kvWidth * 4);
      splitColumns(k, qkv, n, width, [[kk, 2 * qWidth, kvWidth], [v, 2 * qWidth + kvWidth, kvWidth]]);
      const all = k.f32(qkv, n * width), qv = k.f32(q, n * qWidth), gv = k.f32(gate, n * qWidth);
      for (let t = 0; t < n; t++) {
        for (let h = 0; h < Hq; h++) {
          const from = t * width + 2 * h * D;
          qv.set(all.subarray(from, from + D), (t * Hq + h) * D);
          gv.set(all.subarray(from + D, from + 2 * D), (t * Hq + h) * D);
        }
      }
      const att = attendHeads(ctx, index, pos0, n, { q, k: kk, v, qNorm: w.qNorm, kNorm: w.kNorm }, c.hybrid!.rotaryDim);
      k.sigmoidGateAt(att, gate, n * qWidth);
      const y = k.alloc(n * c.hiddenSize * 4);
      k.linearAt(w.o, att, n, y, c.hiddenSize);
      return y;
    };
  },
};
