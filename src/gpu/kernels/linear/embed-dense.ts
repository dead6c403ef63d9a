// embed_dense (shaders/embed_dense.wgsl): the embedding gather for an F32 / F16 / BF16 table, one op
// per row chunk (each writes the tokens whose id it holds).
import source from '../../../../shaders/embed_dense.wgsl?raw';
import { wdtypeOf, type GpuLinear, type GpuLinearChunk } from '../../gpu-weights.ts';
import { defineKernel, read, rw, STEP, uniformBuffer, uniformStruct } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';

export const EMBED_DENSE = defineKernel({
  name: 'embed_dense',
  source,
  bindings: {
    step: STEP,                        // n = tokens
    table: read('array<u32>'),         // [chunk rows, row words]: F32 one value a word, F16/BF16 two
    ids: read('array<u32>'),           // [n]
    out: rw('array<f32>'),             // [n, H]
    chunk: uniformStruct('Chunk', ['row_start', 'rows']),
  },
});

export interface EmbedTarget {
  step: GPUBuffer;
  ids: GPUBuffer;              // [n] u32
  out: GPUBuffer;              // [n, H] f32
}

const WG = 64;

export function denseEmbedOp(cache: PipelineCache, e: GpuLinear, chunk: GpuLinearChunk, t: EmbedTarget): Op {
  const H = e.cols;
  const uniform = uniformBuffer(cache.device, EMBED_DENSE.bindings.chunk, { row_start: chunk.rowStart, rows: chunk.rows });
  return kernelOp(cache, EMBED_DENSE, {
    label: `${e.name} gather`, consts: { H, WG, WDTYPE: wdtypeOf(chunk) }, owned: [uniform],
    buffers: { step: t.step, table: chunk.buffers[0]!, ids: t.ids, out: t.out, chunk: uniform },
    grid: (n) => [Math.ceil(Math.ceil(H / 2) / WG), n, 1],
  });
}
