// Linears and embeddings, whatever their weight format: one op per row chunk (a GGUF matrix can mix
// block types by row segment, so the format is a chunk's), running the chunk's format's kernels
// (./linear-kernels.ts: one structure per kernel composed with the format's row in ./formats.ts).
import type { GpuLinear } from '../../gpu-weights.ts';
import { uniformBuffer } from '../../kernel.ts';
import type { Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';
import { CHUNK, Epilogue, type FoldedNorm, type LinearTarget } from './linear-contract.ts';
import { embedOp, matmulOp, matvecOp, type EmbedTarget } from './linear-kernels.ts';

export { Epilogue, type FoldedNorm, type LinearTarget } from './linear-contract.ts';

/** A linear's decode matvec can fold the RMSNorm before it: one chunk (one dispatch reads the row) and K % 4 = 0 (vec4 norm loads). */
export function canFoldNorm(w: GpuLinear): boolean {
  return w.chunks.length === 1 && w.cols % 4 === 0;
}

/** The norm for the linears that read its output to fold, when every one of them can (else undefined: the rmsnorm runs). */
export function normToFold(norm: FoldedNorm | undefined, ...readers: GpuLinear[]): FoldedNorm | undefined {
  return norm && readers.every(canFoldNorm) ? norm : undefined;
}
export type { EmbedTarget } from './linear-kernels.ts';

/**
 * y = x·Wᵀ (with t's epilogue) for a step of n tokens: one op per row chunk of W, running the decode
 * matvec when n = 1 and the prefill matmul otherwise. SILU_GATE_UP needs gate and up in one chunk.
 */
export function linearOps(cache: PipelineCache, w: GpuLinear, t: LinearTarget): Op[] {
  if (t.epilogue === Epilogue.SILU_GATE_UP && w.chunks.length !== 1) throw new Error(`${w.name}: the fused silu epilogue needs one chunk`);
  if (t.foldNorm && !canFoldNorm(w)) throw new Error(`${w.name}: a folded RMSNorm needs one chunk and K % 4 = 0`);
  return w.chunks.map((chunk) => {
    const outRows = t.epilogue === Epilogue.SILU_GATE_UP ? chunk.rows / 2 : chunk.rows;
    const uniform = uniformBuffer(cache.device, CHUNK, {
      k: w.cols, out_stride: t.outStride, row_offset: chunk.rowStart, out_rows: outRows, epilogue: t.epilogue,
    });
    const decode = matvecOp(cache, w, chunk, t, uniform);
    const prefill = matmulOp(cache, w, chunk, t, uniform);
    return {
      label: `${w.name}[${chunk.rowStart}:${chunk.rowStart + chunk.rows}]${t.foldNorm ? ` (decode: ${t.foldNorm.name} folded in)` : ''}`,
      owned: [uniform],
      encode: (pass, n) => (n === 1 ? decode : prefill).encode(pass, n),
    };
  });
}

/** Embedding gather: one op per row chunk (each writes the tokens whose id it holds). */
export function embedOps(cache: PipelineCache, e: GpuLinear, t: EmbedTarget): Op[] {
  return e.chunks.map((chunk) => embedOp(cache, e, chunk, t));
}
