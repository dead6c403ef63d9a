// kv_store_q8_0 (shaders/kv_store_q8_0.wgsl): a step's staged f32 keys and values into the q8_0 cache.
import source from '../../../../shaders/kv_store_q8_0.wgsl?raw';
import { defineKernel, read, rw, STEP, type BufferSet } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';
import { q8Blocks, q8ScalesWord } from './kv-layout.ts';
import type { HeadShape } from './qk-norm-rope.ts';

export const KV_STORE_Q8_0 = defineKernel({
  name: 'kv_store_q8_0',
  source,
  bindings: {
    step: STEP,
    kstage: read('array<f32>'),      // [n, HKV·D] keys, f32
    vstage: read('array<f32>'),      // [n, HKV·D] values, f32
    kcache: rw('array<u32>'),        // q8_0 K cache (./kv-layout.ts)
    vcache: rw('array<u32>'),        // q8_0 V cache
  },
});

const WG = 64;

export function kvStoreQ8Op(cache: PipelineCache, buffers: BufferSet<typeof KV_STORE_Q8_0.bindings>, s: HeadShape, ctx: number, label: string): Op {
  const perToken = s.Hkv * q8Blocks(s.D);
  return kernelOp(cache, KV_STORE_Q8_0, {
    label, consts: { HKV: s.Hkv, D: s.D, KV_SCALES: q8ScalesWord(s, ctx), WG }, buffers,
    // scale words touched by n tokens: at most ⌈(n·perToken + 1) / 2⌉ whatever pos0's parity
    grid: (n) => [Math.ceil(Math.ceil((n * perToken + 1) / 2) / WG), 1, 2],
  });
}
