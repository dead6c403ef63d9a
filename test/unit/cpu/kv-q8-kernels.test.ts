// The WASM engine's q8_0 KV kernels (src/cpu/asm/kv-q8.ts) against the reference's q8_0 semantics
// (src/model/kv-quant.ts, llama.cpp's block_q8_0: 32 values of one head, an f16 scale): quantization
// bit for bit (the f16 scale bits and the int8 quants, heads of D not a multiple of 32, a zero block, a
// tie at .5), the read-back values exact, and causal GQA over the q8_0 cache within the f16 attention's
// 5e-6 of the reference attention over the reference's rounded cache.
import { beforeAll, describe, expect, it } from 'vitest';
import type { WasmKernels } from '../../../src/cpu/wasm-kernels.ts';
import { Q8_0_VALUES, quantizeQ8_0Block, roundHeadToQ8_0 } from '../../../src/model/kv-quant.ts';
import { attention } from '../../../src/model/reference/ops.ts';
import { randomF32, relErr, testKernels } from './helpers.ts';

let k: WasmKernels;
beforeAll(async () => { k = await testKernels(); }, 120_000);   // a fresh clone compiles the kernels first

/** rows heads of D: quantized by the kernel, then read back; the blocks' bits and the values. */
function quantize(x: Float32Array, rows: number, D: number): { scales: Uint16Array; quants: Int8Array; back: Float32Array } {
  const nb = Math.ceil(D / Q8_0_VALUES);
  return k.frame(() => {
    const src = k.input(x), blocks = { quants: k.alloc(rows * nb * 32), scales: k.alloc(rows * nb * 2) }, back = k.alloc(x.byteLength);
    k.quantizeQ8At(src, blocks, rows, D);
    k.dequantQ8At(blocks, rows, D, back);
    return { scales: k.u16(blocks.scales, rows * nb).slice(), quants: new Int8Array(k.u8(blocks.quants, rows * nb * 32).slice().buffer), back: k.f32(back, x.length).slice() };
  });
}

describe('q8_0 quantization of K/V heads', () => {
  it.each([[3, 40], [2, 64], [5, 9], [2, 128], [1, 33]])('%i heads of %i: scales, quants and read-back values equal the reference bit for bit', (rows, D) => {
    const x = randomF32(rows * D, 71 + D, 3);
    x.fill(0, 0, Math.min(D, 32));                              // a zero block: d = 0, all quants 0
    if (rows > 1) { x[D] = 127; x[D + 1] = 0.5; x[D + 2] = -1.5; }  // d = 1: ties round half away from zero
    const ours = quantize(x, rows, D);
    const nb = Math.ceil(D / Q8_0_VALUES);
    const ref = Float32Array.from(x);
    for (let r = 0; r < rows; r++) {
      roundHeadToQ8_0(ref, r * D, D);
      for (let b = 0; b < nb; b++) {
        const { d, qs } = quantizeQ8_0Block(x, r * D + b * 32, Math.min(32, D - b * 32));
        expect(ours.scales[r * nb + b]).toBe(d);
        expect([...ours.quants.subarray((r * nb + b) * 32, (r * nb + b + 1) * 32)]).toEqual([...qs]);
      }
    }
    expect([...ours.back]).toEqual([...ref]);
    if (rows > 1) expect([...ours.back.subarray(D, D + 3)]).toEqual([127, 1, -2]);
  });
});

it.each([[1, 4, 2, 16, 0], [3, 4, 2, 40, 5], [4, 6, 2, 128, 37], [2, 2, 1, 9, 3]])('attention over a q8_0 cache: %i tokens, %i heads over %i KV heads of %i, after %i cached, within 5e-6', (n, Hq, Hkv, D, before) => {
  const kvWidth = Hkv * D, total = before + n;
  const keys = randomF32(total * kvWidth, 81, 2), values = randomF32(total * kvWidth, 82, 2);
  const q = randomF32(n * Hq * D, 83, 2);
  const rounded = (x: Float32Array): Float32Array => {
    const r = Float32Array.from(x);
    for (let h = 0; h < r.length; h += D) roundHeadToQ8_0(r, h, D);
    return r;
  };
  const positions = Array.from({ length: n }, (_, i) => before + i);
  const ref = attention(q, { keys: rounded(keys), values: rounded(values) }, positions, Hq, Hkv, D);
  const nb = Math.ceil(D / Q8_0_VALUES);
  const out = k.frame(() => {
    const place = (x: Float32Array) => {
      const blocks = { quants: k.alloc(total * Hkv * nb * 32), scales: k.alloc(total * Hkv * nb * 2) };
      k.quantizeQ8At(k.input(x), blocks, total * Hkv, D);
      return blocks;
    };
    const kb = place(keys), vb = place(values), qp = k.input(q), op = k.alloc(q.length * 4);
    k.attentionQ8At(qp, kb, vb, op, n, before, Hq, Hkv, D);
    return k.f32(op, q.length).slice();
  });
  expect(relErr(out, ref)).toBeLessThan(5e-6);
});
