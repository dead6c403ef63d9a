// Which shapes prefill with the tiles (shaders/attention_prefill_tiles.wgsl) under phone-like limits (16 KiB
// of workgroup memory) and with which block and tile, and which fall back to the per-query-head kernel
// (attention.wgsl): the models the project runs must all take the tiles, the rest must be refused by the
// check rather than fail to compile. Whether a device class asks for the tiles at all is src/gpu/tuning.ts.
import { describe, expect, it } from 'vitest';
import { prefillTiles, prefillTilesFor, prefillTilesWorkgroupBytes } from '../../../src/gpu/kernels/attention/attention-prefill-tiles.ts';
import { attentionPrefillFor, attentionSplitFor } from '../../../src/gpu/tuning.ts';

const PHONE = 16_384;

describe('prefill attention tiles fit', () => {
  it.each([
    ['Qwen3-0.6B / 1.7B (16 / 8 heads of 128)', { Hq: 16, Hkv: 8, D: 128 }, { BQ: 16, ROWS: 32, BK: 16 }, 10496],
    ['Qwen3-8B (32 / 8 of 128)', { Hq: 32, Hkv: 8, D: 128 }, { BQ: 8, ROWS: 32, BK: 16 }, 10496],
    ['Qwen3-30B-A3B (32 / 4 of 128)', { Hq: 32, Hkv: 4, D: 128 }, { BQ: 4, ROWS: 32, BK: 16 }, 10496],
    ['Qwen3.6-35B-A3B attention (16 / 2 of 256)', { Hq: 16, Hkv: 2, D: 256 }, { BQ: 2, ROWS: 16, BK: 8 }, 8832],
    ['a group of 16 of 128 (64 / 4)', { Hq: 64, Hkv: 4, D: 128 }, { BQ: 2, ROWS: 32, BK: 16 }, 10496],
  ])('%s: tiles %o, %i bytes of workgroup memory', (_name, s, tiles, bytes) => {
    expect(prefillTiles(s)).toEqual(tiles);
    expect(prefillTilesWorkgroupBytes(s, tiles)).toBe(bytes);
    expect(prefillTilesFor(s, PHONE)).toEqual(tiles);
  });

  it.each([
    ['an odd D', { Hq: 4, Hkv: 2, D: 9 }, PHONE],
    ['a group that does not divide', { Hq: 6, Hkv: 4, D: 64 }],
    ['a group bigger than a block (32 heads of 256 a KV head)', { Hq: 32, Hkv: 1, D: 256 }, PHONE],
    ['over the device workgroup memory (4 KiB)', { Hq: 16, Hkv: 8, D: 128 }, 4096],
  ])('%s: per query head', (_name, s, limit = PHONE) => {
    expect(prefillTilesFor(s, limit)).toBeUndefined();
  });

  it('GPUs ask for the tiles, CPU rasterizers keep the per-head kernel', () => {
    expect(attentionPrefillFor('discrete')).toBe('tiles');
    expect(attentionPrefillFor('integrated')).toBe('tiles');
    expect(attentionPrefillFor('mobile')).toBe('tiles');
    expect(attentionPrefillFor('cpu')).toBe('per-head');
    expect(attentionSplitFor('discrete').prefill).toBe('tiles');
  });
});
