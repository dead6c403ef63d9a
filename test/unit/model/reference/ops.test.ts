import { describe, expect, it } from 'vitest';
import {
  addInPlace, attention, dequantizeLinear, embedRows, headRmsNorm, matmul, matvec, rmsNorm, ropeInvFreq, ropeNeox,
  siluMul, sliceColumns,
} from '../../../../src/model/reference/ops.ts';
import { f32ToF16Bits, fromFloat32, quantizeQ4f16 } from '../../../../src/model/tensor-utils.ts';
import type { Linear, Q4Linear } from '../../../../src/model/types.ts';
import { normalSampler } from './synthetic-model.ts';

const randoms = (count: number, seed: number): number[] => {
  const n = normalSampler(seed);
  return Array.from({ length: count }, n);
};

/** Textbook y = W x over a plain nested array, in doubles. */
function naiveMatmul(w: number[][], x: number[][]): number[][] {
  return x.map((row) => w.map((wr) => wr.reduce((acc, v, k) => acc + v * row[k]!, 0)));
}

function toRows(flat: ArrayLike<number>, cols: number): number[][] {
  return Array.from({ length: flat.length / cols }, (_, r) => Array.from({ length: cols }, (_, c) => flat[r * cols + c]!));
}

describe('q4f16_1 dequantization', () => {
  it('decodes (q − 7) · scale with element k at bits (k % 8)·4 of word k/8, low nibble first', () => {
    // One row of K = 64: two groups of 32. Codes q_k = k % 15; scales 0.5 and 2 (f16-exact).
    const rows = 1;
    const cols = 64;
    const words = new Uint32Array(cols / 8);
    for (let k = 0; k < cols; k++) words[k >> 3] = (words[k >> 3]! | ((k % 15) << ((k % 8) * 4))) >>> 0;
    const scales = new Uint16Array([f32ToF16Bits(0.5), f32ToF16Bits(2)]);
    const w: Q4Linear = {
      kind: 'q4f16_1', rows, cols,
      qweight: { name: 'w.q_weight', dtype: 'U32', shape: [1, 8], bytes: new Uint8Array(words.buffer) },
      scales: { name: 'w.q_scale', dtype: 'F16', shape: [1, 2], bytes: new Uint8Array(scales.buffer) },
    };
    const got = dequantizeLinear(w);
    for (let k = 0; k < cols; k++) expect(got[k]).toBe(((k % 15) - 7) * (k < 32 ? 0.5 : 2));
  });

  it('quantize then dequantize stays within half a step of every weight', () => {
    const values = randoms(8 * 96, 3);
    const w = quantizeQ4f16('w', values, 8, 96);
    const back = dequantizeLinear(w);
    for (let r = 0; r < 8; r++) {
      for (let g = 0; g < 3; g++) {
        const group = values.slice(r * 96 + g * 32, r * 96 + g * 32 + 32);
        const step = Math.max(...group.map(Math.abs)) / 7;
        group.forEach((v, i) => expect(Math.abs(back[r * 96 + g * 32 + i]! - v)).toBeLessThanOrEqual(step * 0.5 + 1e-3 * step));
      }
    }
  });
});

describe('matmul', () => {
  const N = 37;
  const K = 64;
  const n = 3;
  const wValues = randoms(N * K, 1);
  const x = Float32Array.from(randoms(n * K, 2));

  for (const dtype of ['F32', 'F16', 'BF16'] as const) {
    it(`dense ${dtype} equals the textbook product of the decoded weight`, () => {
      const w: Linear = { kind: 'dense', rows: N, cols: K, weight: fromFloat32('w', wValues, [N, K], dtype) };
      const decoded = dequantizeLinear(w);
      if (dtype === 'F32') expect([...decoded]).toEqual(wValues.map(Math.fround));
      const want = naiveMatmul(toRows(decoded, K), toRows(x, K));
      const got = toRows(matmul(w, x, n), N);
      got.forEach((row, t) => row.forEach((v, r) => expect(v).toBeCloseTo(want[t]![r]!, 5)));
    });
  }

  it('q4f16_1 equals the textbook product of the dequantized weight; rows past a block boundary too', () => {
    const rows = 130; // crosses the 64-row decode blocks
    const w = quantizeQ4f16('w', randoms(rows * K, 4), rows, K);
    const want = naiveMatmul(toRows(dequantizeLinear(w), K), toRows(x, K));
    const got = toRows(matmul(w, x, n), rows);
    got.forEach((row, t) => row.forEach((v, r) => expect(v).toBeCloseTo(want[t]![r]!, 5)));
  });

  it('matvec is row 0 of matmul and each token row is independent of the others', () => {
    const w: Linear = { kind: 'dense', rows: N, cols: K, weight: fromFloat32('w', wValues, [N, K], 'F32') };
    const all = matmul(w, x, n);
    for (let t = 0; t < n; t++) expect(matvec(w, x.slice(t * K, (t + 1) * K))).toEqual(all.slice(t * N, (t + 1) * N));
  });

  it('names the weight when the input has the wrong size', () => {
    const w: Linear = { kind: 'dense', rows: N, cols: K, weight: fromFloat32('model.x.weight', wValues, [N, K], 'F32') };
    expect(() => matmul(w, new Float32Array(K + 1), 1)).toThrow(/matmul model\.x\.weight: input has 65 values, expected 1×64/);
  });
});

describe('embedding, norms, activations', () => {
  it('embedRows gathers rows and rejects ids outside the vocabulary', () => {
    const e: Linear = { kind: 'dense', rows: 5, cols: 3, weight: fromFloat32('emb', [...Array(15).keys()], [5, 3], 'F32') };
    expect([...embedRows(e, [4, 0, 4])]).toEqual([12, 13, 14, 0, 1, 2, 12, 13, 14]);
    expect(() => embedRows(e, [5])).toThrow(/embedding emb: token id 5 outside \[0, 5\)/);
  });

  it('rmsNorm scales each row by 1/sqrt(mean(x²) + eps) and the weight', () => {
    const x = Float32Array.from([3, 4, 0, 0, 1, 1, 1, 1]);
    const w = Float32Array.from([1, 2, 3, 4]);
    const y = rmsNorm(x, w, 0);
    const r0 = 1 / Math.sqrt(25 / 4);
    expect([...y]).toEqual([3 * r0, 8 * r0, 0, 0, 1, 2, 3, 4].map(Math.fround));
  });

  it('headRmsNorm normalises each head separately', () => {
    const x = Float32Array.from([2, 2, 10, 10]); // two heads of D = 2
    expect([...headRmsNorm(x, Float32Array.from([1, 1]), 0)]).toEqual([1, 1, 1, 1]);
  });

  it('siluMul computes silu(gate)·up per row', () => {
    const gateUp = Float32Array.from([0, 1, 5, 7, /* row 2 */ -2, 3, 0.5, -1]); // I = 2
    const silu = (g: number): number => g / (1 + Math.exp(-g));
    expect([...siluMul(gateUp, 2)]).toEqual([silu(0) * 5, silu(1) * 7, silu(-2) * 0.5, silu(3) * -1].map(Math.fround));
  });

  it('addInPlace and sliceColumns', () => {
    const a = Float32Array.from([1, 2, 3]);
    addInPlace(a, Float32Array.from([1, 1, 1]));
    expect([...a]).toEqual([2, 3, 4]);
    expect([...sliceColumns(Float32Array.from([1, 2, 3, 4, 5, 6]), 3, 1, 3)]).toEqual([2, 3, 5, 6]);
  });
});

describe('RoPE (neox)', () => {
  it('inv_freq_i = θ^(−2i/D)', () => {
    expect([...ropeInvFreq(8, 10000)]).toEqual([1, 0.1, 0.01, 0.001].map(Math.fround));
  });

  it('rotates pair (i, i + D/2) by pos · inv_freq_i; position 0 is the identity', () => {
    const D = 4;
    const x = Float32Array.from([1, 2, 3, 4, /* pos 0 copy */ 1, 2, 3, 4]);
    ropeNeox(x, [5], 2, D, 100); // one token, two heads
    const expectPair = (a: number, b: number, angle: number): [number, number] =>
      [a * Math.cos(angle) - b * Math.sin(angle), b * Math.cos(angle) + a * Math.sin(angle)];
    const [a0, b0] = expectPair(1, 3, 5 * 1);
    const [a1, b1] = expectPair(2, 4, 5 * 0.1);
    for (const base of [0, 4]) {
      expect(x[base + 0]).toBeCloseTo(a0, 5);
      expect(x[base + 2]).toBeCloseTo(b0, 5);
      expect(x[base + 1]).toBeCloseTo(a1, 5);
      expect(x[base + 3]).toBeCloseTo(b1, 5);
    }
    const y = Float32Array.from([1, 2, 3, 4]);
    ropeNeox(y, [0], 1, D, 100);
    expect([...y]).toEqual([1, 2, 3, 4]);
  });

  it('makes q·k depend only on the distance between positions', () => {
    const D = 16;
    const q = randoms(D, 5);
    const k = randoms(D, 6);
    const dotAt = (pq: number, pk: number): number => {
      const qa = Float32Array.from(q);
      const ka = Float32Array.from(k);
      ropeNeox(qa, [pq], 1, D, 10000);
      ropeNeox(ka, [pk], 1, D, 10000);
      return qa.reduce((acc, v, i) => acc + v * ka[i]!, 0);
    };
    expect(dotAt(7, 3)).toBeCloseTo(dotAt(14, 10), 4);
    expect(dotAt(7, 3)).not.toBeCloseTo(dotAt(7, 5), 2);
  });
});

describe('attention', () => {
  const D = 2;

  it('with one key returns its value; with equal scores returns the mean of the visible values', () => {
    const kv = { keys: Float32Array.from([1, 0, 0, 1, 9, 9]), values: Float32Array.from([1, 2, 3, 4, 100, 100]) };
    // q = 0 gives equal scores: the mean over positions 0..p. Row 2 of K/V is garbage never seen (causal).
    const q = Float32Array.from([0, 0, 0, 0]);
    const out = attention(q, kv, [0, 1], 1, 1, D);
    expect([...out]).toEqual([1, 2, 2, 3]);
  });

  it('weights values by softmax(q·k / √D)', () => {
    const kv = { keys: Float32Array.from([1, 0, 0, 1]), values: Float32Array.from([10, 0, 0, 10]) };
    const q = Float32Array.from([2, 0]);
    const s0 = 2 / Math.sqrt(2);
    const w0 = Math.exp(s0) / (Math.exp(s0) + 1);
    const out = attention(q, kv, [1], 1, 1, D);
    expect(out[0]).toBeCloseTo(10 * w0, 5);
    expect(out[1]).toBeCloseTo(10 * (1 - w0), 5);
  });

  it('query head h reads KV head floor(h / (Hq / Hkv))', () => {
    // Two KV heads with distinct values; four query heads: heads 0,1 see KV head 0, heads 2,3 KV head 1.
    const kv = { keys: Float32Array.from([0, 0, 0, 0]), values: Float32Array.from([1, 1, 2, 2]) };
    const out = attention(new Float32Array(8), kv, [0], 4, 2, D);
    expect([...out]).toEqual([1, 1, 1, 1, 2, 2, 2, 2]);
  });
});
