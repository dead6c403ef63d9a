// attention_prefill_tiles (shaders/attention_prefill_tiles.wgsl): a prefill step's grouped-query attention,
// one workgroup per (KV head, block of BQ tokens) walking K/V in tiles loaded once into workgroup memory
// and shared by the block's tokens and the KV head's query heads. The host picks the block and the tile
// from the head shape; a shape it does not fit runs attention.wgsl (./attention.ts).
import source from '../../../../shaders/attention_prefill_tiles.wgsl?raw';
import kvRead from '../../../../shaders/lib/kv_read.wgsl?raw';
import { defineKernel, read, rw, STEP } from '../../kernel.ts';
import type { HeadShape } from './qk-norm-rope.ts';

export const ATTENTION_PREFILL_TILES = defineKernel({
  name: 'attention_prefill_tiles',
  source,
  libs: [kvRead],
  bindings: {
    step: STEP,
    q: read('array<f32>'),           // [n, HQ·D], normalised and rotated
    kcache: read('array<u32>'),      // the K cache (./kv-layout.ts: f16 or q8_0), this step's keys already written
    vcache: read('array<u32>'),      // the V cache, the same layout
    out: rw('array<f32>'),           // [n, HQ·D]
  },
});

/** Threads a workgroup. */
export const PREFILL_TILES_WG = 128;
const MAX_ACC = 16;                  // output pairs a thread holds (the shader's MAX_ACC)
const MAX_BQ = 16;                   // tokens a block at most
const TILE_BYTES = 8192;             // one K or V tile of f32 pairs, at most

/** The block and tile of a head shape: BQ tokens (ROWS = BQ·group rows) and BK keys a tile. */
export interface PrefillTiles {
  BQ: number;
  ROWS: number;
  BK: number;
}

/**
 * The block and tile for `s`, or undefined where the kernel cannot run it: an odd D, a group that does
 * not divide, or a group too big for one block's rows (each thread holds ⌈ROWS·D/2 / WG⌉ ≤ 16 output
 * pairs and ROWS ≤ WG rows fold their softmax). At Qwen3's D 128: 32 rows (GROUP 2: 16 tokens, GROUP 4:
 * 8, GROUP 8: 4) and 16 keys a tile; Qwen3.5's D 256: 16 rows and 8 keys.
 */
export function prefillTiles(s: HeadShape): PrefillTiles | undefined {
  const group = s.Hq / s.Hkv;
  if (!Number.isInteger(group) || s.D % 2 !== 0 || s.D < 2) return undefined;
  const half = s.D / 2;
  const rows = Math.min(PREFILL_TILES_WG, Math.floor((MAX_ACC * PREFILL_TILES_WG) / half));
  const BQ = Math.min(MAX_BQ, Math.floor(rows / group));
  if (BQ < 1) return undefined;
  const BK = Math.max(4, Math.min(32, Math.floor(TILE_BYTES / 8 / half / 4) * 4));
  return { BQ, ROWS: BQ * group, BK };
}

/** Bytes of workgroup memory the kernel needs for `s` with tiles `t`. */
export function prefillTilesWorkgroupBytes(s: HeadShape, t: PrefillTiles): number {
  return 8 * t.BK * (s.D / 2) + 4 * t.ROWS * t.BK + 8 * t.ROWS;
}

/** The tiles for `s` if the kernel runs it within `maxWorkgroupBytes`, else undefined. */
export function prefillTilesFor(s: HeadShape, maxWorkgroupBytes: number): PrefillTiles | undefined {
  const t = prefillTiles(s);
  return t && prefillTilesWorkgroupBytes(s, t) <= maxWorkgroupBytes ? t : undefined;
}

/** The kernel's override constants beside the shape's. */
export function prefillTilesConsts(s: HeadShape, t: PrefillTiles): Record<string, number> {
  return { WG: PREFILL_TILES_WG, BQ: t.BQ, ROWS: t.ROWS, BK: t.BK, TILE: t.BK * (s.D / 2), SCORES: t.ROWS * t.BK };
}
