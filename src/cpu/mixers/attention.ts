// Qwen3 attention on the WASM kernels (the equation of src/model/reference/mixers/attention.ts), on xn
// [n, H] at positions pos0..:
//   qkv = xn · W_qkvᵀ                     [n, (Hq + 2·Hkv)·D]   one linear over the stacked rows
//   q, k = rope(head_rms(q) · q_norm), rope(head_rms(k) · k_norm)   (NeoX halves, all D dims)
//   K/V cache ← k, v (f16 or q8_0 blocks);  out = attention(q, K, V) · W_oᵀ   [n, H]
import { tensorToF32 } from '../../model/reference/ops.ts';
import type { AttentionWeights, ModelConfig } from '../../model/types.ts';
import type { CpuMixerRow, CpuLayerContext } from '../layer-contract.ts';
import { ropeCosSin } from '../rope.ts';
import type { WasmKernels, WasmLinear } from '../wasm-kernels.ts';

/**
 * The part every attention kind shares once q [n·Hq, D], k and v [n, Hkv·D] are split out (at
 * addresses): the per-head norms, RoPE on the first R dims, the cache append (f16 or q8_0) and causal GQA.
 * Returns the address of attention's output [n, Hq·D].
 */
export function attendHeads(ctx: CpuLayerContext, index: number, pos0: number, n: number,
  at: { q: number; k: number; v: number; qNorm: number; kNorm: number }, rotaryDim: number): number {
  const { k, config: c } = ctx;
  const D = c.headDim, Hq = c.numHeads, Hkv = c.numKvHeads;
  k.rmsnormAt(at.q, at.qNorm, at.q, n * Hq, D, c.rmsNormEps);
  k.rmsnormAt(at.k, at.kNorm, at.k, n * Hkv, D, c.rmsNormEps);
  const cs = k.input(ropeCosSin(pos0, n, rotaryDim, c.ropeTheta));
  k.ropeAt(at.q, cs, n, Hq, D, rotaryDim);
  k.ropeAt(at.k, cs, n, Hkv, D, rotaryDim);
  ctx.kv.append(index, pos0, n, at.k, at.v);
  const cache = ctx.kv.view(index);
  const out = k.alloc(n * Hq * D * 4);
  if (cache.type === 'f16') k.attentionAt(at.q, cache.keys, cache.values, out, n, pos0, Hq, Hkv, D);
  else k.attentionQ8At(at.q, cache.keys, cache.values, out, n, pos0, Hq, Hkv, D);
  return out;
}

/** The weights every attention kind places: its two linears and the two head norms. */
export interface PlacedAttention { qkv: WasmLinear; o: WasmLinear; qNorm: number; kNorm: number }

export function placeAttention(k: WasmKernels, m: { qkv: AttentionWeights['qkv']; o: AttentionWeights['o']; qNorm: AttentionWeights['qNorm']; kNorm: AttentionWeights['kNorm'] }): PlacedAttention {
  return { qkv: k.placeLinear(m.qkv), o: k.placeLinear(m.o), qNorm: k.put(tensorToF32(m.qNorm)), kNorm: k.put(tensorToF32(m.kNorm)) };
}

/** Columns of each row of src [n, width] copied to dsts (address, first column, columns). */
export function splitColumns(k: WasmKernels, src: number, n: number, width: number, parts: [number, number, number][]): void {
  const all = k.f32(src, n * width);
  for (const [dst, c0, w] of parts) {
    const out = k.f32(dst, n * w);
    for (let t = 0; t < n; t++) out.set(all.subarray(t * width + c0, t * width + c0 + w), t * w);
  }
}

export function qkvWidths(c: ModelConfig): { qWidth: number; kvWidth: number } {
  return { qWidth: c.numHeads * c.headDim, kvWidth: c.numKvHeads * c.headDim };
}

export const attentionMixer: CpuMixerRow<AttentionWeights> = {
  linears: (m) => [m.qkv, m.o],
  place(k, m, index) {
    const w = placeAttention(k, m);
    return (ctx, pos0, n, xn) => {
      const { qWidth, kvWidth } = qkvWidths(ctx.config);
      const width = qWidth + 2 * kvWidth;
      const qkv = k.alloc(n * width * 4);
      k.linearAt(w.qkv, xn, n, qkv, width);
      const q = k.alloc(n * qWidth * 4), kk = k.alloc(n * kvWidth * 4), v = k.alloc(n * kvWidth * 4);
      splitColumns(k, qkv, n, width, [[q, 0, qWidth], [kk, qWidth, kvWidth], [v, qWidth + kvWidth, kvWidth]]);
      const att = attendHeads(ctx, index, pos0, n, { q, k: kk, v, qNorm: w.qNorm, kNorm: w.kNorm }, ctx.config.headDim);
      const H = ctx.config.hiddenSize;
      const y = k.alloc(n * H * 4);
      k.linearAt(w.o, att, n, y, H);
      return y;
    };
  },
};
