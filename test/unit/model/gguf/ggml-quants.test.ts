// ggml block types: dequantization of hand-built blocks, our reference quantizers against ggml's own
// output (hashes in test/fixtures/ggml-reference-quants.json, made by ggml-quants.c itself), round-trip
// error bounds, and determinism.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dequantizeGgmlRows, ggmlLinearRows } from '../../../../src/model/formats/gguf/ggml-dequant.ts';
import { quantizeGgml } from '../../../../src/model/formats/gguf/ggml-quantize.ts';
import { nearestInt } from '../../../../src/model/formats/gguf/ggml-quantize-k.ts';
import { GGML_TYPES, ggmlRowBytes } from '../../../../src/model/formats/gguf/ggml-types.ts';
import { f32ToF16Bits } from '../../../../src/model/tensor-utils.ts';
import type { GgmlType } from '../../../../src/model/types.ts';
import { mixedRows } from './ggml-test-data.ts';

const BLOCK_TYPES = ['Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q8_0', 'Q4_K', 'Q5_K', 'Q6_K'] as const;
const fixture = JSON.parse(readFileSync(new URL('../../../fixtures/ggml-reference-quants.json', import.meta.url), 'utf8')) as {
  input: { seed: number; blocks: number }; types: Record<string, { bytes: string; values: string }>;
};
const sha = (b: Uint8Array | Float32Array) => createHash('sha256').update(new Uint8Array(b.buffer, b.byteOffset, b.byteLength)).digest('hex');
const half = (x: number): [number, number] => { const h = f32ToF16Bits(x); return [h & 0xff, h >> 8]; };

describe('ggml dequantization of hand-built blocks', () => {
  it('Q8_0: d · qs', () => {
    const b = new Uint8Array(34);
    b.set(half(0.5), 0);
    for (let j = 0; j < 32; j++) b[2 + j] = (j - 16) & 0xff;
    expect(Array.from(dequantizeGgmlRows('Q8_0', b, 32, 0, 1))).toEqual(Array.from({ length: 32 }, (_, j) => (j - 16) * 0.5));
  });

  it('Q4_0: low nibbles are values 0..15, high nibbles 16..31, offset 8', () => {
    const b = new Uint8Array(18);
    b.set(half(2), 0);
    for (let j = 0; j < 16; j++) b[2 + j] = j | ((15 - j) << 4);
    const want = [...Array.from({ length: 16 }, (_, j) => (j - 8) * 2), ...Array.from({ length: 16 }, (_, j) => (7 - j) * 2)];
    expect(Array.from(dequantizeGgmlRows('Q4_0', b, 32, 0, 1))).toEqual(want);
  });

  it('Q4_1: q · d + m', () => {
    const b = new Uint8Array(20);
    b.set(half(0.25), 0);
    b.set(half(-1), 2);
    for (let j = 0; j < 16; j++) b[4 + j] = j | (j << 4);
    const v = Array.from({ length: 16 }, (_, j) => j * 0.25 - 1);
    expect(Array.from(dequantizeGgmlRows('Q4_1', b, 32, 0, 1))).toEqual([...v, ...v]);
  });

  it('Q5_0 and Q5_1: the fifth bit of value j is bit j of qh', () => {
    const b0 = new Uint8Array(22);
    b0.set(half(1), 0);
    b0.set([0x01, 0x00, 0x01, 0x80], 2);          // bits 0, 16 and 31 set
    const v0 = dequantizeGgmlRows('Q5_0', b0, 32, 0, 1);
    expect([v0[0], v0[1], v0[16], v0[31]]).toEqual([0, -16, 0, 0]);
    const b1 = new Uint8Array(24);
    b1.set(half(0.5), 0);
    b1.set(half(1), 2);
    b1.set([0x02, 0x00, 0x00, 0x00], 4);          // bit 1 → value 1 gets +16
    b1[8 + 1] = 0x03;                             // value 1 low nibble 3
    const v1 = dequantizeGgmlRows('Q5_1', b1, 32, 0, 1);
    expect([v1[0], v1[1], v1[17]]).toEqual([1, (16 + 3) * 0.5 + 1, 1]);
  });

  it('Q4_K: 6-bit scales and mins in get_scale_min_k4 packing, nibbles in pairs of sub-blocks', () => {
    const b = new Uint8Array(144);
    b.set(half(1), 0);                            // d
    b.set(half(0.5), 2);                          // dmin
    // sub-block 1: scale 3, min 2; sub-block 5: scale 0b010111 = 23 (low 4 bits in byte 9, high 2 in byte 1), min 0b100001 = 33
    b[4 + 1] = 3 | ((23 >> 4) << 6);
    b[4 + 5] = 2 | ((33 >> 4) << 6);
    b[4 + 9] = (23 & 0xf) | ((33 & 0xf) << 4);
    for (let l = 0; l < 32; l++) b[16 + l] = 0x70;                 // pair 0: sub-block 0 lo = 0, sub-block 1 hi = 7
    for (let l = 0; l < 32; l++) b[16 + 64 + l] = 0x05;            // pair 2: sub-block 4 lo = 5, sub-block 5 hi = 0
    const v = dequantizeGgmlRows('Q4_K', b, 256, 0, 1);
    expect(v[32]).toBe(3 * 7 - 0.5 * 2);                           // sub-block 1
    expect(v[160]).toBe(-(0.5 * 33));                              // sub-block 5: q 0
    expect(v[0]).toBe(0);
  });

  it('Q5_K: the fifth bit of value 64p + l is bit 2p of qh[l]', () => {
    const b = new Uint8Array(176);
    b.set(half(1), 0);
    b[4 + 2] = 1;                                  // sub-block 2 scale 1 (min 0)
    b[16 + 3] = 1 << 2;                            // qh[3] bit 2 → value 64 + 3 gets +16
    b[48 + 32 + 3] = 0x04;                         // qs pair 1, l = 3: low nibble 4
    expect(dequantizeGgmlRows('Q5_K', b, 256, 0, 1)[67]).toBe(20);
  });

  it('Q6_K: ql/qh split, signed scales, offset 32', () => {
    const b = new Uint8Array(210);
    b.set(half(0.5), 208);
    b[192 + 0] = 2;                                 // scale of values 0..15
    b[192 + 6] = 0xfe;                              // scale −2 of values 96..111
    b[0] = 0x0f | (0x01 << 4);                      // value 0 low 4 bits 15; value 64 low bits 1
    b[128] = 0b11 | (0b10 << 6);                    // value 0 high bits 3 (→ 63); value 96 high bits 2
    b[32] = 0x30;                                   // value 96 low bits 3
    const v = dequantizeGgmlRows('Q6_K', b, 256, 0, 1);
    expect(v[0]).toBe(0.5 * 2 * (63 - 32));
    expect(v[96]).toBe(0.5 * -2 * ((3 | (2 << 4)) - 32));
  });

  it('a matrix of several segments reads each in its own type', () => {
    const x = mixedRows(3, 3);
    const a = quantizeGgml('Q8_0', x.subarray(0, 256), 1, 256);
    const b = quantizeGgml('Q6_K', x.subarray(256), 2, 256);
    const l = { kind: 'ggml' as const, rows: 3, cols: 256, segments: [
      { name: 'a', type: 'Q8_0' as const, rows: 1, bytes: a }, { name: 'b', type: 'Q6_K' as const, rows: 2, bytes: b }] };
    expect(Array.from(ggmlLinearRows(l, 0, 3))).toEqual([...dequantizeGgmlRows('Q8_0', a, 256, 0, 1), ...dequantizeGgmlRows('Q6_K', b, 256, 0, 2)]);
    expect(Array.from(ggmlLinearRows(l, 1, 2))).toEqual(Array.from(dequantizeGgmlRows('Q6_K', b, 256, 0, 1)));
  });
});

describe('ggml reference quantizers', () => {
  const x = mixedRows(fixture.input.seed, fixture.input.blocks);

  it.each(BLOCK_TYPES)('%s: the same bytes and values as ggml-quants.c', (t) => {
    const cols = 256;
    const q = quantizeGgml(t, x, x.length / cols, cols);
    expect(q.byteLength).toBe((x.length / cols) * ggmlRowBytes(t, cols));
    expect(sha(q)).toBe(fixture.types[t]!.bytes);
    expect(sha(dequantizeGgmlRows(t, q, cols, 0, x.length / cols))).toBe(fixture.types[t]!.values);
  });

  it.each(BLOCK_TYPES)('%s: round trip stays within the type\'s step and is deterministic', (t) => {
    const rows = mixedRows(11, 4).map((v) => v * 0.3);
    const q = quantizeGgml(t, rows, 4, 256);
    expect(quantizeGgml(t, rows, 4, 256)).toEqual(q);
    const y = dequantizeGgmlRows(t, q, 256, 0, 4);
    const { blockSize } = GGML_TYPES[t];
    const levels: Record<string, number> = { Q4_0: 7, Q4_1: 7, Q5_0: 15, Q5_1: 15, Q8_0: 63, Q4_K: 4, Q5_K: 8, Q6_K: 16 };
    for (let b = 0; b < rows.length / blockSize; b++) {
      const block = rows.subarray(b * blockSize, (b + 1) * blockSize);
      const amax = block.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
      for (let j = 0; j < blockSize; j++) expect(Math.abs(y[b * blockSize + j]! - block[j]!)).toBeLessThanOrEqual(amax / levels[t]! + 1e-7);
    }
  });

  it('float types convert with round-to-nearest-even', () => {
    const v = Float32Array.from([1, -2.5, 1 + 2 ** -11, 65504, 1e-8]);
    for (const t of ['F32', 'F16', 'BF16'] as GgmlType[]) {
      const back = dequantizeGgmlRows(t, quantizeGgml(t, v, 1, 5), 5, 0, 1);
      expect(back[0]).toBe(1);
      expect(back[1]).toBe(-2.5);
    }
    expect(dequantizeGgmlRows('F16', quantizeGgml('F16', v, 1, 5), 5, 0, 1)[2]).toBe(1);    // tie to even
  });

  it('nearest_int rounds half to even like the 1.5·2^23 trick', () => {
    expect([0.5, 1.5, 2.5, -0.5, -1.5, 3.49, -3.51].map(nearestInt)).toEqual([0, 2, 2, 0, -2, 3, -4]);
  });
});
