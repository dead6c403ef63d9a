// Linears and embeddings by weight format: each format names its kernels here, so adding a format is
// one .wgsl file, one kernel module and one line in FORMATS.
import type { GpuLinear, GpuLinearChunk } from '../gpu-weights.ts';
import type { Op } from '../op.ts';
import type { PipelineCache } from '../pipelines.ts';
import { denseEmbedOp, type EmbedTarget } from './embed-dense.ts';
import { q4EmbedOp } from './embed-q4.ts';
import { Epilogue, type LinearTarget } from './linear-contract.ts';
import { denseMatvecOp } from './matvec-dense.ts';
import { q4MatvecOp } from './matvec-q4.ts';

export { Epilogue, type LinearTarget } from './linear-contract.ts';
export type { EmbedTarget } from './embed-dense.ts';

interface FormatKernels {
  linear(cache: PipelineCache, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget): Op;
  embed(cache: PipelineCache, e: GpuLinear, chunk: GpuLinearChunk, t: EmbedTarget): Op;
}

const FORMATS: Record<GpuLinear['kind'], FormatKernels> = {
  dense: { linear: denseMatvecOp, embed: denseEmbedOp },
  q4: { linear: q4MatvecOp, embed: q4EmbedOp },
};

/** y = x·Wᵀ (with t's epilogue): one op per row chunk of W. SILU_GATE_UP needs gate and up in one chunk. */
export function linearOps(cache: PipelineCache, w: GpuLinear, t: LinearTarget): Op[] {
  if (t.epilogue === Epilogue.SILU_GATE_UP && w.chunks.length !== 1) throw new Error(`${w.name}: the fused silu epilogue needs one chunk`);
  return w.chunks.map((chunk) => FORMATS[w.kind].linear(cache, w, chunk, t));
}

/** Embedding gather: one op per row chunk (each writes the tokens whose id it holds). */
export function embedOps(cache: PipelineCache, e: GpuLinear, t: EmbedTarget): Op[] {
  return e.chunks.map((chunk) => FORMATS[e.kind].embed(cache, e, chunk, t));
}
