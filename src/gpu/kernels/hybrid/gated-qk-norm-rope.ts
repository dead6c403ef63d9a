// gated_qk_norm_rope (shaders/gated_qk_norm_rope.wgsl): the hybrid's gated attention input. Split the
// fused q+gate | k | v rows, RMSNorm each q and k head, RoPE neox on the first ROT dims, write q and the
// output gate (f32) and K/V into the f16 cache at positions pos0 .. pos0 + n − 1.
import source from '../../../../shaders/gated_qk_norm_rope.wgsl?raw';
import { defineKernel, read, rw, STEP, type BufferSet } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';
import type { HeadShape } from '../attention/qk-norm-rope.ts';

export const GATED_QK_NORM_ROPE = defineKernel({
  name: 'gated_qk_norm_rope',
  source,
  bindings: {
    step: STEP,
    qkv: read('array<f32>'),         // [n, 2·HQ·D + 2·HKV·D]
    qnorm: read('array<f32>'),       // [D]
    knorm: read('array<f32>'),       // [D]
    rope: read('array<vec2<f32>>'),  // [ctx, ROT/2] (cos, sin)
    q: rw('array<f32>'),             // [n, HQ·D]
    gate: rw('array<f32>'),          // [n, HQ·D]
    kcache: rw('array<u32>'),        // [ctx, HKV·D/2] f16 pairs, or (stage) [n, HKV·D] f32 bits
    vcache: rw('array<u32>'),        // the same for values
  },
});

export function gatedQkNormRopeOp(
  cache: PipelineCache, buffers: BufferSet<typeof GATED_QK_NORM_ROPE.bindings>, s: HeadShape & { rot: number }, eps: number, label: string, stage = false,
): Op {
  if (!(s.rot >= 2 && s.rot % 2 === 0 && s.rot <= s.D)) throw new RangeError(`gated_qk_norm_rope: rotary dims ${s.rot} must be even and ≤ head dim ${s.D}`);
  return kernelOp(cache, GATED_QK_NORM_ROPE, {
    label, consts: { HQ: s.Hq, HKV: s.Hkv, D: s.D, ROT: s.rot, EPS: eps, WG: 64, KV_STAGE: stage ? 1 : 0 }, buffers,
    grid: (n) => [s.Hq + 2 * s.Hkv, n, 1],
  });
}
