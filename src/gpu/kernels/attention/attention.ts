// attention (shaders/attention.wgsl): causal grouped-query attention over the KV cache (./kv-layout.ts). Prefill
// runs attention_prefill_tiles (./attention-prefill-tiles.ts), one workgroup per (KV head, block of tokens)
// sharing each K/V tile, where the tuning asks for it (Tuning.attention.prefill 'tiles') and the shape and
// the device's workgroup memory fit it; else attention.wgsl, one workgroup per (query head, token). Decode runs attention_decode (./attention-decode.ts), one
// workgroup per (KV head, split) serving the KV head's query heads from one read of its K/V, unless the
// shape does not fit it (or the tuning asks for the per-query-head decode, kept for the bench): then
// attention.wgsl with one workgroup per (query head, split). Either way the keys are split across
// `splits` workgroups (flash-decoding) and merged by attention_combine (./attention-combine.ts).
import source from '../../../../shaders/attention.wgsl?raw';
import kvRead from '../../../../shaders/lib/kv_read.wgsl?raw';
import { defineKernel, read, rw, STEP } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';
import type { AttentionSplit } from '../../tuning.ts';
import { ATTENTION_COMBINE } from './attention-combine.ts';
import { ATTENTION_DECODE, decodeConsts, groupedDecodeFits } from './attention-decode.ts';
import { ATTENTION_PREFILL_TILES, prefillTilesConsts, prefillTilesFor } from './attention-prefill-tiles.ts';
import { F16_KV, kvReadConsts, type KvLayout } from './kv-layout.ts';
import type { HeadShape } from './qk-norm-rope.ts';

export const ATTENTION = defineKernel({
  name: 'attention',
  source,
  libs: [kvRead],
  bindings: {
    step: STEP,
    q: read('array<f32>'),           // [n, HQ·D], normalised and rotated
    kcache: read('array<u32>'),      // the K cache (./kv-layout.ts: f16 or q8_0), this step's keys already written
    vcache: read('array<u32>'),      // the V cache, the same layout
    out: rw('array<f32>'),           // [n, HQ·D]
    part: rw('array<f32>'),          // [HQ, SPLITS, D + 2]: a decode step's partials per split
  },
});

export interface AttentionBuffers {
  step: GPUBuffer;
  q: GPUBuffer;
  kcache: GPUBuffer;
  vcache: GPUBuffer;
  out: GPUBuffer;
  part: GPUBuffer;             // ≥ attentionPartFloats(shape, splits) floats
}

const NO_SPLIT: AttentionSplit = { splits: 1, minKeys: 64 };

/** Floats of the partials buffer for `splits`. */
export function attentionPartFloats(s: HeadShape, splits: number): number {
  return s.Hq * Math.max(1, splits) * (s.D + 2);
}

export function attentionOp(cache: PipelineCache, b: AttentionBuffers, s: HeadShape, label: string, split: AttentionSplit = NO_SPLIT, kv: KvLayout = F16_KV): Op {
  const base = { HQ: s.Hq, HKV: s.Hkv, D: s.D, SCALE: Math.fround(1 / Math.sqrt(s.D)), WG: 64, ...kvReadConsts(s, kv) };
  const buffers = { step: b.step, q: b.q, kcache: b.kcache, vcache: b.vcache, out: b.out, part: b.part };
  const perHead = kernelOp(cache, ATTENTION, { label, consts: { ...base, SPLITS: 1 }, buffers, grid: (n) => [s.Hq, n, 1] });
  const tiles = split.prefill === 'tiles' ? prefillTilesFor(s, cache.device.limits.maxComputeWorkgroupStorageSize) : undefined;
  const prefill = tiles
    ? kernelOp(cache, ATTENTION_PREFILL_TILES, {
      label: `${label} prefill tiles`,
      consts: { ...base, ...prefillTilesConsts(s, tiles) },
      buffers: { step: b.step, q: b.q, kcache: b.kcache, vcache: b.vcache, out: b.out },
      grid: (n) => [s.Hkv, Math.ceil(n / tiles.BQ), 1],
    })
    : perHead;
  const splits = Math.max(1, split.splits);
  const consts = { SPLITS: splits, MIN_KEYS: split.minKeys };
  const grouped = !split.perHead && groupedDecodeFits(s, cache.device.limits.maxComputeWorkgroupStorageSize);
  const decode = grouped
    ? kernelOp(cache, ATTENTION_DECODE, {
      label: `${label} decode`,
      consts: { ...base, ...consts, ...decodeConsts(s) },
      buffers, grid: () => [s.Hkv, 1, splits],
    })
    : splits > 1
      ? kernelOp(cache, ATTENTION, { label: `${label} splits`, consts: { ...base, ...consts }, buffers, grid: () => [s.Hq, 1, splits] })
      : perHead;
  const combine = splits > 1
    ? kernelOp(cache, ATTENTION_COMBINE, {
      label: `${label} combine`, consts: { HQ: s.Hq, D: s.D, WG: 64, ...consts },
      buffers: { step: b.step, part: b.part, out: b.out }, grid: () => [s.Hq, 1, 1],
    })
    : undefined;
  return {
    label,
    labelFor: (n) => (n === 1 ? label : prefill.label),
    encode(pass, n) {
      if (n !== 1) return prefill.encode(pass, n);
      return decode.encode(pass, 1) + (combine ? combine.encode(pass, 1) : 0);
    },
  };
}
