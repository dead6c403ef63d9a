// attention_decode (shaders/attention_decode.wgsl): a decode step's grouped-query attention, one
// workgroup per (KV head, split) serving all of that KV head's query heads from one read of its K/V.
import source from '../../../../shaders/attention_decode.wgsl?raw';
import kvRead from '../../../../shaders/lib/kv_read.wgsl?raw';
import { defineKernel, read, rw, STEP } from '../../kernel.ts';
import type { HeadShape } from './qk-norm-rope.ts';

export const ATTENTION_DECODE = defineKernel({
  name: 'attention_decode',
  source,
  libs: [kvRead],
  bindings: {
    step: STEP,                      // one token at pos0
    q: read('array<f32>'),           // [HQ·D], normalised and rotated
    kcache: read('array<u32>'),      // the K cache (./kv-layout.ts: f16 or q8_0), this step's key already written
    vcache: read('array<u32>'),      // the V cache, the same layout
    out: rw('array<f32>'),           // [HQ·D] (no split)
    part: rw('array<f32>'),          // [HQ, SPLITS, D + 2]: partials per split
  },
});

/** Threads a workgroup (keys per tile). */
export const DECODE_WG = 64;
const MAX_G4 = 4;
const MAX_ACC = 8;

/** The group's query heads in fours (vec4 lanes), padded. */
export function headFours(s: HeadShape): number {
  return Math.ceil(s.Hq / s.Hkv / 4);
}

/** Bytes of workgroup memory the grouped kernel needs for `s`: the group's queries, scores and weights. */
export function decodeWorkgroupBytes(s: HeadShape): number {
  return 16 * headFours(s) * (s.D + 2 * DECODE_WG);
}

/**
 * Whether the grouped decode kernel serves `s` within `maxWorkgroupBytes`: a group of ≤ 16 heads whose
 * value accumulators fit a thread's 8 + 8 vec4s, D a multiple of 4 up to 512, and queries, scores and
 * weights within workgroup memory.
 */
export function groupedDecodeFits(s: HeadShape, maxWorkgroupBytes: number): boolean {
  const group = s.Hq / s.Hkv;
  if (!Number.isInteger(group) || headFours(s) > MAX_G4 || s.D % 4 !== 0 || s.D > 512) return false;
  if (headFours(s) * Math.ceil(s.D / 2 / DECODE_WG) > MAX_ACC) return false;
  return decodeWorkgroupBytes(s) <= maxWorkgroupBytes;
}

/** The grouped kernel's override constants beside the shape's. */
export function decodeConsts(s: HeadShape): Record<string, number> {
  const g4 = headFours(s);
  return { WG: DECODE_WG, G4: g4, QS: s.D * g4, SW: DECODE_WG * g4 };
}
