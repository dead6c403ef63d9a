// The three epilogues every linear kernel has (src/gpu/kernels/linear/linear.ts), checked against the
// reference product `ref` of `n` tokens: STORE (y = W·x), ADD_RESIDUAL (y += W·x) and, when the rows
// split in two halves, SILU_GATE_UP (y = silu(gate) · up). Tolerance as for every linear: 2e-6 of the
// largest reference magnitude. The kernel tests of every weight format and layout share it.
// expectFoldedNorm: the same three epilogues of the decode matvec with the RMSNorm before it folded in
// (shaders/lib/x_rmsnorm.wgsl) against the reference RMSNorm then the reference product, same tolerance.
import { expect } from 'vitest';
import type { GpuLinear } from '../../src/gpu/gpu-weights.ts';
import { Epilogue, linearOps } from '../../src/gpu/kernels/linear/linear.ts';
import { matmul, rmsNorm, siluMul } from '../../src/model/reference/ops.ts';
import type { Linear } from '../../src/model/types.ts';
import type { KernelHarness } from './kernel-harness.ts';
import { randomF32, relErr } from './helpers.ts';

export async function expectEpilogues(
  h: KernelHarness, g: GpuLinear, rows: number, x: Float32Array, ref: Float32Array, n: number,
  o: { seed: number; store?: boolean; what?: string; norm?: { x: Float32Array; weight: Float32Array; eps: number } },
): Promise<void> {
  const foldNorm = o.norm && { x: h.buffer(o.norm.x), weight: h.buffer(o.norm.weight), eps: o.norm.eps, name: 'test_norm' };
  const run = (y: GPUBuffer, outStride: number, epilogue: Epilogue) =>
    h.run(linearOps(h.cache, g, { step: h.step, x: h.buffer(x), y, outStride, epilogue, ...(foldNorm ? { foldNorm } : {}) }), n);
  const what = o.what ?? `n = ${n}`;
  if (o.store ?? true) {
    const yb = h.buffer(n * rows * 4);
    await run(yb, rows, Epilogue.STORE);
    expect(relErr(await h.readF32(yb, n * rows), ref), `${what}, store`).toBeLessThan(2e-6);
  }
  const y0 = randomF32(n * rows, o.seed);
  const yr = h.buffer(y0);
  await run(yr, rows, Epilogue.ADD_RESIDUAL);
  expect(relErr(await h.readF32(yr, n * rows), ref.map((v, i) => v + y0[i]!)), `${what}, residual`).toBeLessThan(2e-6);
  if (rows % 2 !== 0) return;
  const I = rows / 2;
  const ys = h.buffer(n * I * 4);
  await run(ys, I, Epilogue.SILU_GATE_UP);
  expect(relErr(await h.readF32(ys, n * I), siluMul(ref, I)), `${what}, gate|up`).toBeLessThan(2e-6);
}

/**
 * One decode token through g's matvec with an RMSNorm folded in: the kernel reads the un-normalised x
 * (values up to ±4, so the scale is far from 1) and the norm weight; the reference normalises, then
 * multiplies. The prefill x the op is also given is the reference's normalised row, and is not read.
 */
export async function expectFoldedNorm(h: KernelHarness, g: GpuLinear, w: Linear, o: { seed: number; what?: string }): Promise<void> {
  const x = randomF32(w.cols, o.seed, 4);
  const weight = randomF32(w.cols, o.seed + 1, 1).map((v) => 1 + v);
  const eps = 1e-6;
  const xn = rmsNorm(x, weight, eps);
  await expectEpilogues(h, g, w.rows, xn, matmul(w, xn, 1), 1, { seed: o.seed + 2, what: `${o.what ?? 'decode'}, norm folded`, norm: { x, weight, eps } });
}
