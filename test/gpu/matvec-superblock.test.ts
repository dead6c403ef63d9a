// The super-block decode matvec (shaders/matvec_superblock.wgsl with shaders/lib/ggml/<type>_superblock.wgsl)
// against the reference matmul (ggml-exact dequantization, doubles) on Q4_K and Q6_K rows of 3 and 5 super-blocks
// (odd: the row groups' lanes run unequal numbers of super-blocks, some none), with its three reductions
// (subgroupAdd, subgroup shuffles, workgroup memory), the three epilogues, whole and split into chunks,
// on both paths. Tolerance as for every linear (test/gpu/ggml-kernels.test.ts): 2e-6 of the largest
// reference magnitude. Also: which kernel a layout runs (the super-block one only where asked and possible).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadLinear } from '../../src/gpu/gpu-weights.ts';
import { Epilogue, linearOps } from '../../src/gpu/kernels/linear/linear.ts';
import { matvecKernel } from '../../src/gpu/kernels/linear/linear-kernels.ts';
import type { MatvecLayout, Tuning } from '../../src/gpu/tuning.ts';
import { quantizeGgml } from '../../src/model/formats/gguf/ggml-quantize.ts';
import { matmul, siluMul } from '../../src/model/reference/ops.ts';
import type { GgmlLinear } from '../../src/model/types.ts';
import { KernelHarness } from './kernel-harness.ts';
import { randomF32, relErr, testDevice } from './helpers.ts';

function kquant(type: 'Q4_K' | 'Q6_K', rows: number, cols: number, seed: number): GgmlLinear {
  const v = randomF32(rows * cols, seed, 0.5);
  return { kind: 'ggml', rows, cols, segments: [{ name: `w.${type}`, type, rows, bytes: quantizeGgml(type, v, rows, cols) }] };
}

const tuning = (mv: MatvecLayout): Tuning => ({
  adapterClass: 'cpu', matvec: { dense: mv, q4: mv, ggml: mv },
  matmul: { dense: { kind: 'tiles', BM: 16, BN: 32, TM: 4, TN: 2 }, q4: { kind: 'tiles', BM: 16, BN: 32, TM: 4, TN: 2 }, ggml: { kind: 'tiles', BM: 16, BN: 32, TM: 4, TN: 2 } },
  attention: { splits: 1, minKeys: 64 },
});

// lavapipe's subgroup is 8 lanes: a one-subgroup workgroup (subgroupAdd), four row groups of 8 lanes in
// a workgroup of 32 (shuffles), and row groups of 16 lanes in workgroup memory.
const LAYOUTS: [string, MatvecLayout][] = [
  ['8 lanes × 6 rows, subgroupAdd', { WG: 8, LANES: 8, ROWS: 6, subgroups: true, superblock: true }],
  ['8 lanes a group in 32 × 2 rows, subgroup shuffles', { WG: 32, LANES: 8, ROWS: 2, subgroups: true, superblock: true }],
  ['16 lanes a group in 32 × 4 rows, workgroup memory', { WG: 32, LANES: 16, ROWS: 4, subgroups: false, superblock: true }],
];

describe.each(LAYOUTS.flatMap(([l, t]) => [false, true].map((f16) => [l, f16, t] as const)))('K-quant super-block matvec, %s, shader-f16 %s', (_l, useF16, layout) => {
  let device: GPUDevice;
  let h: KernelHarness;
  beforeAll(async () => {
    device = await testDevice(useF16);
    h = new KernelHarness(device, useF16, tuning(layout));
  });
  afterAll(() => { h?.destroy(); device?.destroy(); });

  // Q6_K's 210-byte super-blocks start at every even byte offset (rows of 3 and 5 of them: 630 and 1,050 bytes).
  it.each([['Q4_K', 3], ['Q6_K', 5]] as const)('%s, %i super-blocks a row: plain, residual and gate|up, whole and split', async (type, supers) => {
    const w = kquant(type, 38, 256 * supers, 11 + supers);
    const g = uploadLinear(device, w, 1 << 30);
    const rowBytes = w.segments[0]!.bytes.byteLength / w.rows;
    const split = uploadLinear(device, w, rowBytes * 7 + 32);
    expect(split.chunks.length).toBeGreaterThan(1);
    expect(matvecKernel(layout, g.chunks[0]!.format).name).toBe(`matvec_superblock_ggml_${type.toLowerCase()}`);
    const x = randomF32(w.cols, 30 + supers);
    const ref = matmul(w, x, 1);
    for (const gw of [g, split]) {
      const yb = h.buffer(w.rows * 4);
      await h.run(linearOps(h.cache, gw, { step: h.step, x: h.buffer(x), y: yb, outStride: w.rows, epilogue: Epilogue.STORE }), 1);
      expect(relErr(await h.readF32(yb, w.rows), ref), `${gw.chunks.length} chunks`).toBeLessThan(2e-6);
    }
    const y0 = randomF32(w.rows, 50 + supers);
    const yr = h.buffer(y0);
    await h.run(linearOps(h.cache, g, { step: h.step, x: h.buffer(x), y: yr, outStride: w.rows, epilogue: Epilogue.ADD_RESIDUAL }), 1);
    expect(relErr(await h.readF32(yr, w.rows), ref.map((v, i) => v + y0[i]!))).toBeLessThan(2e-6);
    const I = w.rows / 2;
    const ys = h.buffer(I * 4);
    await h.run(linearOps(h.cache, g, { step: h.step, x: h.buffer(x), y: ys, outStride: I, epilogue: Epilogue.SILU_GATE_UP }), 1);
    expect(relErr(await h.readF32(ys, I), siluMul(ref, I))).toBeLessThan(2e-6);
  });
});

describe('which decode matvec a layout runs', () => {
  const sb: MatvecLayout = { WG: 64, LANES: 16, ROWS: 2, subgroups: false, superblock: true };
  it('the super-block kernel for Q4_K and Q6_K when asked, matvec.wgsl for other formats, narrow groups and rows layouts', () => {
    expect(matvecKernel(sb, { kind: 'ggml', type: 'Q4_K' }).name).toBe('matvec_superblock_ggml_q4_k');
    expect(matvecKernel(sb, { kind: 'ggml', type: 'Q6_K' }).name).toBe('matvec_superblock_ggml_q6_k');
    expect(matvecKernel(sb, { kind: 'ggml', type: 'Q8_0' }).name).toBe('matvec_ggml_q8_0');
    expect(matvecKernel(sb, { kind: 'dense', wdtype: 2 }).name).toBe('matvec_dense');
    expect(matvecKernel({ ...sb, LANES: 2 }, { kind: 'ggml', type: 'Q4_K' }).name).toBe('matvec_ggml_q4_k');
    expect(matvecKernel({ ...sb, superblock: false }, { kind: 'ggml', type: 'Q4_K' }).name).toBe('matvec_ggml_q4_k');
  });
});
