// Qwen3.5 gated attention on the CPU (HF Qwen3NextAttention): q_proj gives each head D query dims then D
// gate dims; q, k per-head RMSNorm then RoPE on their first rotaryDim dims; causal GQA; output ·
// sigmoid(gate); o_proj. xn [n, H] -> [n, H].
import type { GatedAttentionWeights } from '../../types.ts';
import { sigmoid } from '../gated-delta.ts';
import type { ReferenceMixerRow } from '../layer-contract.ts';
import { attention, matmul, rmsNorm, ropeNeox, sliceColumns, tensorToF32 } from '../ops.ts';

export const gatedAttentionMixer: ReferenceMixerRow<GatedAttentionWeights> = {
  bind(m, index) {
    const qNorm = tensorToF32(m.qNorm);                                                  // [D]
    const kNorm = tensorToF32(m.kNorm);                                                  // [D]
    return (ctx, positions, xn) => {
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
      const qn = rmsNorm(q, qNorm, c.rmsNormEps);
      const k = rmsNorm(sliceColumns(qkv, width, qgWidth, qgWidth + kvWidth), kNorm, c.rmsNormEps); // [n, Hkv·D]
      const v = sliceColumns(qkv, width, qgWidth + kvWidth, width);                                  // [n, Hkv·D]
      const R = c.hybrid!.rotaryDim;
      ropeNeox(qn, positions, Hq, D, c.ropeTheta, R);
      ropeNeox(k, positions, Hkv, D, c.ropeTheta, R);
      ctx.kv.append(index, positions, k, v);
      const attn = attention(qn, ctx.kv.view(index), positions, Hq, Hkv, D);                  // [n, Hq·D]
      for (let i = 0; i < attn.length; i++) attn[i] = attn[i]! * sigmoid(gate[i]!);
      return matmul(ctx.weight(m.o), attn, n);                                                // [n, H]
    };
  },
};
