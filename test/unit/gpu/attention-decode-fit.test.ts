// Which shapes decode with the grouped kernel (shaders/attention_decode.wgsl) under phone-like limits
// (16 KiB of workgroup memory), and which fall back to the per-query-head one: the models the project
// runs must all take the grouped path, the rest must be refused by the check rather than fail to compile.
import { describe, expect, it } from 'vitest';
import { decodeWorkgroupBytes, groupedDecodeFits } from '../../../src/gpu/kernels/attention/attention-decode.ts';

const PHONE = 16_384;

describe('grouped decode attention fits', () => {
  it.each([
    ['Qwen3-30B-A3B (32 / 4 heads of 128)', { Hq: 32, Hkv: 4, D: 128 }, 8192],
    ['Qwen3-0.6B / 1.7B (16 / 8 of 128)', { Hq: 16, Hkv: 8, D: 128 }, 4096],
    ['Qwen3-8B (32 / 8 of 128)', { Hq: 32, Hkv: 8, D: 128 }, 4096],
    ['Qwen3.6-35B-A3B attention (16 / 2 of 256)', { Hq: 16, Hkv: 2, D: 256 }, 12288],
    ['a group of 16 (64 / 4 of 128)', { Hq: 64, Hkv: 4, D: 128 }, 16384],
  ])('%s: grouped, %i bytes of workgroup memory', (_name, s, bytes) => {
    expect(decodeWorkgroupBytes(s)).toBe(bytes);
    expect(groupedDecodeFits(s, PHONE)).toBe(true);
  });

  it.each([
    ['D not a multiple of 4', { Hq: 6, Hkv: 3, D: 10 }],
    ['more than 16 heads a group', { Hq: 34, Hkv: 2, D: 64 }],
    ['a group that does not divide', { Hq: 6, Hkv: 4, D: 64 }],
    ['over 16 KiB (12 heads of 256)', { Hq: 12, Hkv: 1, D: 256 }],
    ['over the accumulators (16 heads of 512)', { Hq: 16, Hkv: 1, D: 512 }],
  ])('%s: per query head', (_name, s) => {
    expect(groupedDecodeFits(s, PHONE)).toBe(false);
  });
});
