// Qwen3 attention on the CPU (HF Qwen3Attention), on xn [n, H] at positions p:
//   qkv = xn · W_qkvᵀ                                       [n, (Hq + 2·Hkv)·D]
//   q, k = rope(head_rms(q) · q_norm), rope(head_rms(k) · k_norm)   (NeoX halves, all D dims)
//   K/V cache ← k, v (rounded to f16 by default, like the GPU)
//   out = attention(q, K, V) · W_oᵀ                         [n, H]
import type { AttentionWeights } from '../../types.ts';
import type { ReferenceMixerRow } from '../layer-contract.ts';
import { attention, headRmsNorm, matmul, ropeNeox, sliceColumns, tensorToF32 } from '../ops.ts';

export const attentionMixer: ReferenceMixerRow<AttentionWeights> = {
  bind(m, index) {
    const qNorm = tensorToF32(m.qNorm);                                      // [D]
    const kNorm = tensorToF32(m.kNorm);                                      // [D]
    return (ctx, positions, xn) => {
      const c = ctx.config;
      const n = positions.length;
      const D = c.headDim;
      const qWidth = c.numHeads * D;          // Hq·D
      const kvWidth = c.numKvHeads * D;       // Hkv·D
      const qkvWidth = qWidth + 2 * kvWidth;
      const qkv = matmul(ctx.weight(m.qkv), xn, n);                                                        // [n, Hq·D + 2·Hkv·D]
      const q = headRmsNorm(sliceColumns(qkv, qkvWidth, 0, qWidth), qNorm, c.rmsNormEps);                 // [n, Hq·D]
      const k = headRmsNorm(sliceColumns(qkv, qkvWidth, qWidth, qWidth + kvWidth), kNorm, c.rmsNormEps);  // [n, Hkv·D]
      const v = sliceColumns(qkv, qkvWidth, qWidth + kvWidth, qkvWidth);                                   // [n, Hkv·D]
      ropeNeox(q, positions, c.numHeads, D, c.ropeTheta);
      ropeNeox(k, positions, c.numKvHeads, D, c.ropeTheta);
      ctx.kv.append(index, positions, k, v);
      const attn = attention(q, ctx.kv.view(index), positions, c.numHeads, c.numKvHeads, D);           // [n, Hq·D]
      return matmul(ctx.weight(m.o), attn, n);                                                             // [n, H]
    };
  },
};
