import { describe, expect, it } from 'vitest';
import {
  bf16BitsToF32, dequantizeRows, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits, fromFloat32,
  linearRowsToFloat32, quantizeQ4f16, toFloat32,
} from '../../../../src/model/tensor-utils.ts';
import type { Q4Linear } from '../../../../src/model/types.ts';

describe('f16 conversions', () => {
  // Goldens from numpy: np.float32(v).astype(np.float16).view(np.uint16)
  const goldens: [number, number][] = [
    [0, 0x0], [-0, 0x8000], [1, 0x3c00], [-2.5, 0xc100], [65504, 0x7bff], [65519.99609375, 0x7bff],
    [65520, 0x7c00], [1e9, 0x7c00], [1.00048828125, 0x3c00], [1.00146484375, 0x3c02],
    [5.960464477539063e-08, 0x1], [2.9802322387695312e-08, 0x0], [2.980232594040899e-08, 0x1],
    [8.940696716308594e-08, 0x2], [6.103515625e-05, 0x400], [6.1005353927612305e-05, 0x400],
    [6.0999998822808266e-05, 0x3ff], [0.1, 0x2e66], [-0.3333333134651184, 0xb555],
    [3.1415927410125732, 0x4248], [1e-8, 0x0],
  ];
  it.each(goldens)('f32 %d -> f16 0x%s rounds to nearest even', (v, bits) => {
    expect(f32ToF16Bits(v)).toBe(bits);
  });

  it('round-trips every f16 bit pattern exactly', () => {
    const wrong: number[] = [];
    for (let h = 0; h < 65536; h++) {
      const x = f16BitsToF32(h);
      const ok = Number.isNaN(x) ? Number.isNaN(f16BitsToF32(f32ToF16Bits(x))) : f32ToF16Bits(x) === h;
      if (!ok) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });

  it('decodes infinities, NaN and subnormals', () => {
    expect(f16BitsToF32(0x7c00)).toBe(Infinity);
    expect(f16BitsToF32(0xfc00)).toBe(-Infinity);
    expect(f16BitsToF32(0x7e00)).toBeNaN();
    expect(f16BitsToF32(0x0001)).toBe(2 ** -24);
    expect(f16BitsToF32(0x03ff)).toBe(1023 * 2 ** -24);
  });
});

describe('bf16 conversions', () => {
  it('rounds f32 to nearest even bf16', () => {
    expect(f32ToBf16Bits(1)).toBe(0x3f80);
    expect(f32ToBf16Bits(-2)).toBe(0xc000);
    // 1 + 2^-8 is exactly halfway between 1 and 1 + 2^-7: ties to the even (1.0)
    expect(f32ToBf16Bits(1 + 2 ** -8)).toBe(0x3f80);
    // 1 + 3·2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6 (even)
    expect(f32ToBf16Bits(1 + 3 * 2 ** -8)).toBe(0x3f82);
    expect(f32ToBf16Bits(1 + 2 ** -8 + 2 ** -20)).toBe(0x3f81);
    expect(f32ToBf16Bits(Infinity)).toBe(0x7f80);
    expect(Number.isNaN(bf16BitsToF32(f32ToBf16Bits(NaN)))).toBe(true);
    expect(f32ToBf16Bits(3.4028234663852886e38)).toBe(0x7f80); // max f32 rounds up to +Inf
  });

  it('round-trips every bf16 bit pattern exactly', () => {
    const wrong: number[] = [];
    for (let h = 0; h < 65536; h++) {
      const x = bf16BitsToF32(h);
      if (!Number.isNaN(x) && f32ToBf16Bits(x) !== h) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });

  it('toFloat32 reads BF16, F16 and F32 tensors, also at unaligned offsets', () => {
    const values = [1, -2.5, 0.375, 1024];
    for (const dtype of ['BF16', 'F16', 'F32'] as const) {
      const t = fromFloat32('t', values, [2, 2], dtype);
      expect(Array.from(toFloat32(t))).toEqual(values);
      const shifted = new Uint8Array(t.bytes.length + 1);
      shifted.set(t.bytes, 1);
      expect(Array.from(toFloat32({ ...t, bytes: shifted.subarray(1) }))).toEqual(values);
    }
  });
});

describe('q4f16_1', () => {
  it('packs nibbles low first and dequantizes exactly (q - 7) * scale', () => {
    // one row of 32: word j holds elements 8j..8j+7, element k at bits (k%8)*4
    const words = new Uint32Array(4);
    const codes = Array.from({ length: 32 }, (_, k) => k % 15);
    codes.forEach((q, k) => { words[k >> 3] = (words[k >> 3]! | (q << ((k & 7) * 4))) >>> 0; });
    const scale = new Uint16Array([f32ToF16Bits(0.5)]);
    const l: Q4Linear = {
      kind: 'q4f16_1', rows: 1, cols: 32,
      qweight: { name: 'w.q_weight', dtype: 'U32', shape: [1, 4], bytes: new Uint8Array(words.buffer) },
      scales: { name: 'w.q_scale', dtype: 'F16', shape: [1, 1], bytes: new Uint8Array(scale.buffer) },
    };
    expect(Array.from(dequantizeRows(l, 0, 1))).toEqual(codes.map((q) => (q - 7) * 0.5));
  });

  it('follows MLC: scale = f16(max|w|)/7, codes in [0, 14], error at most half a step', () => {
    const rows = 3, cols = 64;
    const w = Array.from({ length: rows * cols }, (_, i) => Math.sin(i * 1.7) * (1 + (i % 5)));
    const q = quantizeQ4f16('model.layers.0.mlp.down_proj', w, rows, cols);
    expect(q.qweight.name).toBe('model.layers.0.mlp.down_proj.q_weight');
    expect(q.scales.shape).toEqual([3, 2]);
    expect(q.qweight.shape).toEqual([3, 8]);
    const deq = dequantizeRows(q, 0, rows);
    const scales = new Uint16Array(q.scales.bytes.buffer);
    for (let r = 0; r < rows; r++) {
      for (let g = 0; g < 2; g++) {
        const group = w.slice(r * cols + g * 32, r * cols + g * 32 + 32);
        const maxAbs = Math.max(...group.map(Math.abs));
        const scale = f16BitsToF32(scales[r * 2 + g]!);
        expect(scale).toBe(f16BitsToF32(f32ToF16Bits(f16BitsToF32(f32ToF16Bits(maxAbs)) / 7)));
        for (let i = 0; i < 32; i++) {
          const k = r * cols + g * 32 + i;
          expect(Math.abs(deq[k]! - w[k]!)).toBeLessThanOrEqual(scale / 2 + 1e-6);
        }
      }
    }
    const words = new Uint32Array(q.qweight.bytes.buffer);
    for (const word of words) for (let j = 0; j < 8; j++) expect((word >>> (4 * j)) & 0xf).toBeLessThanOrEqual(14);
    // row slices agree with the whole
    expect(Array.from(linearRowsToFloat32(q, 1, 3))).toEqual(Array.from(deq.subarray(cols, 3 * cols)));
    expect(() => dequantizeRows(q, 2, 4)).toThrow(/rows \[2, 4\) outside \[0, 3\)/);
  });

  it('quantizes an all-zero group to code 7 with scale 0', () => {
    const q = quantizeQ4f16('z', new Array(32).fill(0), 1, 32);
    expect(Array.from(new Uint32Array(q.qweight.bytes.buffer))).toEqual([0x77777777, 0x77777777, 0x77777777, 0x77777777]);
    expect(Array.from(dequantizeRows(q, 0, 1)).every((x) => x === 0)).toBe(true);
  });

  it('reads dense rows through linearRowsToFloat32', () => {
    const weight = fromFloat32('d', [1, 2, 3, 4, 5, 6], [3, 2], 'BF16');
    expect(Array.from(linearRowsToFloat32({ kind: 'dense', rows: 3, cols: 2, weight }, 1, 3))).toEqual([3, 4, 5, 6]);
  });
});
