// embed_q4 (shaders/embed_q4.wgsl): the embedding gather for a q4f16_1 table, one op per row chunk.
import source from '../../../../shaders/embed_q4.wgsl?raw';
import type { GpuLinear, GpuLinearChunk } from '../../gpu-weights.ts';
import { defineKernel, read, rw, STEP, uniformBuffer, uniformStruct } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';
import type { EmbedTarget } from './embed-dense.ts';

export const EMBED_Q4 = defineKernel({
  name: 'embed_q4',
  source,
  bindings: {
    step: STEP,                        // n = tokens
    qweight: read('array<u32>'),       // [chunk rows, H/8]
    scales: read('array<u32>'),        // f16 pairs of [chunk rows, H/32]
    ids: read('array<u32>'),           // [n]
    out: rw('array<f32>'),             // [n, H]
    chunk: uniformStruct('Chunk', ['row_start', 'rows']),
  },
});

const WG = 64;

export function q4EmbedOp(cache: PipelineCache, e: GpuLinear, chunk: GpuLinearChunk, t: EmbedTarget): Op {
  const H = e.cols;
  const [qweight, scales] = chunk.buffers as [GPUBuffer, GPUBuffer];
  const uniform = uniformBuffer(cache.device, EMBED_Q4.bindings.chunk, { row_start: chunk.rowStart, rows: chunk.rows });
  return kernelOp(cache, EMBED_Q4, {
    label: `${e.name} gather`, consts: { H, WG }, owned: [uniform],
    buffers: { step: t.step, qweight, scales, ids: t.ids, out: t.out, chunk: uniform },
    grid: (n) => [Math.ceil(H / 8 / WG), n, 1],
  });
}
