// rmsnorm (shaders/rmsnorm.wgsl): y = x / sqrt(mean(x²) + eps) · weight, one workgroup of 256 per row,
// its sum of squares by subgroupAdd where the device has subgroups (else a workgroup-memory tree).
import source from '../../../../shaders/rmsnorm.wgsl?raw';
import rowSumShared from '../../../../shaders/lib/row_sum_shared.wgsl?raw';
import rowSumSubgroup from '../../../../shaders/lib/row_sum_subgroup.wgsl?raw';
import { defineKernel, read, rw, STEP, type BufferSet } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';

export const RMSNORM = defineKernel({
  name: 'rmsnorm',
  source,
  subgroupLibs: { subgroups: [rowSumSubgroup], fallback: [rowSumShared] },
  bindings: {
    step: STEP,                  // n = rows
    x: read('array<f32>'),       // [n, H]
    weight: read('array<f32>'),  // [H]
    y: rw('array<f32>'),         // [n, H]
  },
});

/** Invocations per row: a decode step's row is one workgroup, so wide enough to fill a GPU core's lanes. */
export const RMSNORM_WG = 256;

/** `subgroups` defaults to the device's feature; a test passes false to run the fallback on the same device. */
export function rmsnormOp(cache: PipelineCache, buffers: BufferSet<typeof RMSNORM.bindings>, H: number, eps: number, label: string,
  subgroups = cache.device.features.has('subgroups')): Op {
  return kernelOp(cache, RMSNORM, { label, consts: { H, EPS: eps, WG: RMSNORM_WG }, buffers, grid: (n) => [n, 1, 1], subgroups });
}
