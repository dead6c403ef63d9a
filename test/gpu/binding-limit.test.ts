// A real tensor above lavapipe's 128 MiB maxStorageBufferBindingSize (no override): a q4f16_1 head-like
// weight [135000, 2048] whose q_weight is 138 MB is split into two buffers transparently, and the rows on
// both sides of the split (and the last ones) equal the reference.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { uploadLinear } from '../../src/gpu/gpu-weights.ts';
import { Epilogue, linearOps } from '../../src/gpu/kernels/linear/linear.ts';
import { matmul } from '../../src/model/reference/ops.ts';
import { f32ToF16Bits } from '../../src/model/tensor-utils.ts';
import type { Q4Linear } from '../../src/model/types.ts';
import { KernelHarness } from './kernel-harness.ts';
import { randomF32, relErr, testDevice } from './helpers.ts';

let device: GPUDevice;
let h: KernelHarness;
beforeAll(async () => {
  device = await testDevice(true);
  h = new KernelHarness(device, true);
});
afterAll(() => { h?.destroy(); device?.destroy(); });

/** Rows [r0, r1) of a q4 linear as its own Q4Linear (views, no copy). */
function rowsOf(l: Q4Linear, r0: number, r1: number): Q4Linear {
  const q = l.cols / 2;
  const s = (l.cols / 32) * 2;
  return {
    kind: 'q4f16_1', rows: r1 - r0, cols: l.cols,
    qweight: { ...l.qweight, shape: [r1 - r0, l.cols / 8], bytes: l.qweight.bytes.subarray(r0 * q, r1 * q) },
    scales: { ...l.scales, shape: [r1 - r0, l.cols / 32], bytes: l.scales.bytes.subarray(r0 * s, r1 * s) },
  };
}

it('a 138 MB q4f16_1 weight is split across buffers under the 128 MiB binding limit and stays exact', async () => {
  const rows = 135_000;
  const cols = 2048;
  const limit = device.limits.maxStorageBufferBindingSize;
  expect(limit).toBe(128 * 2 ** 20);
  const words = new Uint32Array(rows * cols / 8);
  let st = 99;
  for (let i = 0; i < words.length; i++) { st ^= st << 13; st ^= st >>> 17; st ^= st << 5; words[i] = st >>> 0; }
  const scales = new Uint16Array(rows * cols / 32);
  for (let i = 0; i < scales.length; i++) scales[i] = f32ToF16Bits(0.01 + (i % 13) * 0.001);
  const w: Q4Linear = {
    kind: 'q4f16_1', rows, cols,
    qweight: { name: 'big.q_weight', dtype: 'U32', shape: [rows, cols / 8], bytes: new Uint8Array(words.buffer) },
    scales: { name: 'big.q_scale', dtype: 'F16', shape: [rows, cols / 32], bytes: new Uint8Array(scales.buffer) },
  };
  expect(w.qweight.bytes.byteLength).toBeGreaterThan(limit);
  const g = uploadLinear(device, w, limit);
  expect(g.chunks.length).toBe(2);
  const split = g.chunks[1]!.rowStart;
  const x = randomF32(cols, 5);
  const y = h.buffer(rows * 4);
  await h.run(linearOps(h.cache, g, { step: h.step, x: h.buffer(x), y, outStride: rows, epilogue: Epilogue.STORE }), 1);
  const out = await h.readF32(y, rows);
  for (const [r0, r1] of [[0, 40], [split - 40, split + 40], [rows - 40, rows]] as const) {
    expect(relErr(out.subarray(r0, r1), matmul(rowsOf(w, r0, r1), x, 1))).toBeLessThan(2e-6);
  }
  g.chunks.forEach((c) => c.buffers.forEach((b) => b.destroy()));
});
