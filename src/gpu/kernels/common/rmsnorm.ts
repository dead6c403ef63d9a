// rmsnorm (shaders/rmsnorm.wgsl): y = x / sqrt(mean(x²) + eps) · weight, one workgroup per row.
import source from '../../../../shaders/rmsnorm.wgsl?raw';
import { defineKernel, read, rw, STEP, type BufferSet } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';

export const RMSNORM = defineKernel({
  name: 'rmsnorm',
  source,
  bindings: {
    step: STEP,                  // n = rows
    x: read('array<f32>'),       // [n, H]
    weight: read('array<f32>'),  // [H]
    y: rw('array<f32>'),         // [n, H]
  },
});

export function rmsnormOp(cache: PipelineCache, buffers: BufferSet<typeof RMSNORM.bindings>, H: number, eps: number, label: string): Op {
  return kernelOp(cache, RMSNORM, { label, consts: { H, EPS: eps, WG: 64 }, buffers, grid: (n) => [n, 1, 1] });
}
