// copy (shaders/copy.wgsl): dst = src in 16-byte words; the bench's roofline.
import source from '../../../../shaders/copy.wgsl?raw';
import { defineKernel, grid2d, read, rw, type BufferSet } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';

export const COPY = defineKernel({
  name: 'copy',
  source,
  bindings: {
    src: read('array<vec4<u32>>'),   // [count]
    dst: rw('array<vec4<u32>>'),     // [count]
  },
});

/** Copy `count` 16-byte words. */
export function copyOp(cache: PipelineCache, buffers: BufferSet<typeof COPY.bindings>, count: number, wg = 64): Op {
  const [gx, gy] = grid2d(Math.ceil(count / wg));
  return kernelOp(cache, COPY, { label: 'copy', consts: { COUNT: count, WG: wg }, buffers, grid: () => [gx, gy, 1] });
}
