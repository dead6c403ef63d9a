// Linears and embeddings by weight format: each format names its kernels here (decode matvec, prefill
// matmul, embedding gather), so adding a format is its .wgsl files, their modules and one line in FORMATS.
// The format is a chunk's (a GGUF matrix can mix block types by row segment): one op per chunk.
import type { ChunkFormat, GpuLinear, GpuLinearChunk } from '../../gpu-weights.ts';
import { uniformBuffer } from '../../kernel.ts';
import type { Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';
import { denseEmbedOp, type EmbedTarget } from './embed-dense.ts';
import { ggmlEmbedOp, ggmlMatmulOp, ggmlMatmulRowsOp, ggmlMatvecOp } from './ggml.ts';
import { q4EmbedOp } from './embed-q4.ts';
import { CHUNK, Epilogue, type LinearTarget } from './linear-contract.ts';
import { denseMatmulOp } from './matmul-dense.ts';
import { q4MatmulOp } from './matmul-q4.ts';
import { denseMatmulRowsOp } from './matmul-rows-dense.ts';
import { q4MatmulRowsOp } from './matmul-rows-q4.ts';
import { denseMatvecOp } from './matvec-dense.ts';
import { q4MatvecOp } from './matvec-q4.ts';

export { Epilogue, type LinearTarget } from './linear-contract.ts';
export type { EmbedTarget } from './embed-dense.ts';

type LinearOpBuilder = (cache: PipelineCache, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget, chunkUniform: GPUBuffer) => Op;

interface FormatKernels {
  decode: LinearOpBuilder;     // one token
  prefill: LinearOpBuilder;    // several tokens
  embed(cache: PipelineCache, e: GpuLinear, chunk: GpuLinearChunk, t: EmbedTarget): Op;
}

const FORMATS: Record<ChunkFormat['kind'], FormatKernels> = {
  dense: {
    decode: denseMatvecOp,
    prefill: (c, w, ch, t, u) => { const l = c.tuning.matmul.dense; return l.kind === 'rows' ? denseMatmulRowsOp(c, l, w, ch, t, u) : denseMatmulOp(c, l, w, ch, t, u); },
    embed: denseEmbedOp,
  },
  q4: {
    decode: q4MatvecOp,
    prefill: (c, w, ch, t, u) => { const l = c.tuning.matmul.q4; return l.kind === 'rows' ? q4MatmulRowsOp(c, l, w, ch, t, u) : q4MatmulOp(c, l, w, ch, t, u); },
    embed: q4EmbedOp,
  },
  ggml: {
    decode: ggmlMatvecOp,
    prefill: (c, w, ch, t, u) => { const l = c.tuning.matmul.ggml; return l.kind === 'rows' ? ggmlMatmulRowsOp(c, l, w, ch, t, u) : ggmlMatmulOp(c, l, w, ch, t, u); },
    embed: ggmlEmbedOp,
  },
};

/**
 * y = x·Wᵀ (with t's epilogue) for a step of n tokens: one op per row chunk of W, running the decode
 * matvec when n = 1 and the prefill matmul otherwise. SILU_GATE_UP needs gate and up in one chunk.
 */
export function linearOps(cache: PipelineCache, w: GpuLinear, t: LinearTarget): Op[] {
  if (t.epilogue === Epilogue.SILU_GATE_UP && w.chunks.length !== 1) throw new Error(`${w.name}: the fused silu epilogue needs one chunk`);
  return w.chunks.map((chunk) => {
    const kernels = FORMATS[chunk.format.kind];
    const outRows = t.epilogue === Epilogue.SILU_GATE_UP ? chunk.rows / 2 : chunk.rows;
    const uniform = uniformBuffer(cache.device, CHUNK, {
      k: w.cols, out_stride: t.outStride, row_offset: chunk.rowStart, out_rows: outRows, epilogue: t.epilogue,
    });
    const decode = kernels.decode(cache, w, chunk, t, uniform);
    const prefill = kernels.prefill(cache, w, chunk, t, uniform);
    return {
      label: `${w.name}[${chunk.rowStart}:${chunk.rowStart + chunk.rows}]`,
      owned: [uniform],
      encode: (pass, n) => (n === 1 ? decode : prefill).encode(pass, n),
    };
  });
}

/** Embedding gather: one op per row chunk (each writes the tokens whose id it holds). */
export function embedOps(cache: PipelineCache, e: GpuLinear, t: EmbedTarget): Op[] {
  return e.chunks.map((chunk) => FORMATS[chunk.format.kind].embed(cache, e, chunk, t));
}
