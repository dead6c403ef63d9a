// gated_rmsnorm (shaders/gated_rmsnorm.wgsl): a Gated DeltaNet layer's output norm, per value head,
// y = o / √(mean(o²) + eps) · weight · silu(z).
import source from '../../../../shaders/gated_rmsnorm.wgsl?raw';
import { defineKernel, read, rw, STEP, type BufferSet } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';

export const GATED_RMSNORM = defineKernel({
  name: 'gated_rmsnorm',
  source,
  bindings: {
    step: STEP,                  // n = tokens
    o: read('array<f32>'),       // [n, NV·DV]
    z: read('array<f32>'),       // [n, ZS]: head j's gate at columns ZOFF + j·DV ..
    weight: read('array<f32>'),  // [DV]
    y: rw('array<f32>'),         // [n, NV·DV]
  },
});

export interface GatedNormShape {
  NV: number;
  DV: number;
  ZS: number;                  // row stride of z
  ZOFF: number;                // column of head 0's gate in a z row
}

export function gatedRmsnormOp(cache: PipelineCache, buffers: BufferSet<typeof GATED_RMSNORM.bindings>, s: GatedNormShape, eps: number, label: string): Op {
  return kernelOp(cache, GATED_RMSNORM, {
    label, consts: { NV: s.NV, DV: s.DV, ZS: s.ZS, ZOFF: s.ZOFF, EPS: eps, WG: 64 }, buffers,
    grid: (n) => [s.NV, n, 1],
  });
}
