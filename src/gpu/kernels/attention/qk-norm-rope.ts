// qk_norm_rope (shaders/qk_norm_rope.wgsl): split q|k|v, RMSNorm each q and k head, RoPE neox, write q
// (f32) and K/V into the f16 cache at positions pos0 .. pos0 + n − 1.
import source from '../../../../shaders/qk_norm_rope.wgsl?raw';
import { defineKernel, read, rw, STEP, type BufferSet } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';

export const QK_NORM_ROPE = defineKernel({
  name: 'qk_norm_rope',
  source,
  bindings: {
    step: STEP,
    qkv: read('array<f32>'),         // [n, (HQ + 2·HKV)·D]
    qnorm: read('array<f32>'),       // [D]
    knorm: read('array<f32>'),       // [D]
    rope: read('array<vec2<f32>>'),  // [ctx, D/2] (cos, sin)
    q: rw('array<f32>'),             // [n, HQ·D]
    kcache: rw('array<u32>'),        // [ctx, HKV·D/2] f16 pairs, or (stage) [n, HKV·D] f32 bits
    vcache: rw('array<u32>'),        // the same for values
  },
});

export interface HeadShape {
  Hq: number;
  Hkv: number;
  D: number;
}

/** stage: write K/V as f32 [n, HKV·D] into kcache/vcache (a q8_0 cache's stage), not f16 into the cache. */
export function qkNormRopeOp(cache: PipelineCache, buffers: BufferSet<typeof QK_NORM_ROPE.bindings>, s: HeadShape, eps: number, label: string, stage = false): Op {
  return kernelOp(cache, QK_NORM_ROPE, {
    label, consts: { HQ: s.Hq, HKV: s.Hkv, D: s.D, EPS: eps, WG: 64, KV_STAGE: stage ? 1 : 0 }, buffers,
    grid: (n) => [s.Hq + 2 * s.Hkv, n, 1],   // one workgroup per head per token
  });
}
