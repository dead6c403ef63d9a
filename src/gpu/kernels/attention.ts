// attention (shaders/attention.wgsl): causal grouped-query attention over the f16 KV cache.
import source from '../../../shaders/attention.wgsl?raw';
import { defineKernel, read, rw, STEP, type BufferSet } from '../kernel.ts';
import { kernelOp, type Op } from '../op.ts';
import type { PipelineCache } from '../pipelines.ts';
import type { HeadShape } from './qk-norm-rope.ts';

export const ATTENTION = defineKernel({
  name: 'attention',
  source,
  bindings: {
    step: STEP,
    q: read('array<f32>'),           // [n, HQ·D], normalised and rotated
    kcache: read('array<u32>'),      // [ctx, HKV·D/2] f16 pairs, this step's keys already written
    vcache: read('array<u32>'),      // [ctx, HKV·D/2] f16 pairs
    out: rw('array<f32>'),           // [n, HQ·D]
  },
});

export function attentionOp(cache: PipelineCache, buffers: BufferSet<typeof ATTENTION.bindings>, s: HeadShape, label: string): Op {
  return kernelOp(cache, ATTENTION, {
    label, consts: { HQ: s.Hq, HKV: s.Hkv, D: s.D, SCALE: Math.fround(1 / Math.sqrt(s.D)), WG: 64 }, buffers,
    grid: (n) => [s.Hq, n, 1],       // one workgroup per query head per token
  });
}
