// The super-block decode matvec (shaders/matvec_superblock.wgsl with shaders/lib/ggml/<type>_superblock.wgsl)
// against the reference matmul (ggml-exact dequantization, doubles) on Q4_K, Q5_K, Q6_K and the 32-value
// types Q8_0, Q4_0, Q5_0, Q4_1, Q5_1 (a super-block: eight blocks) in rows of 3 and 5 super-blocks (odd: the row groups'
// lanes run unequal numbers of super-blocks, some none; 38 rows: the last group's rows past the end), with its three reductions
// (subgroupAdd, subgroup shuffles, workgroup memory), the three epilogues, whole and split into chunks,
// on both paths (the K-quants; the others on two layouts), and with the RMSNorm before it folded in
// (shaders/lib/x_rmsnorm.wgsl). Tolerance as for every linear (test/gpu/ggml-kernels.test.ts): 2e-6 of the largest
// reference magnitude. Also: which kernel a layout runs (the super-block one only where asked and possible).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadLinear } from '../../src/gpu/gpu-weights.ts';
import { Epilogue, linearOps } from '../../src/gpu/kernels/linear/linear.ts';
import { matvecKernel } from '../../src/gpu/kernels/linear/linear-kernels.ts';
import type { MatvecLayout, Tuning } from '../../src/gpu/tuning.ts';
import { quantizeGgml } from '../../src/model/formats/gguf/ggml-quantize.ts';
import { matmul } from '../../src/model/reference/ops.ts';
import type { GgmlLinear } from '../../src/model/types.ts';
import { expectEpilogues, expectFoldedNorm } from './epilogue-checks.ts';
import { KernelHarness } from './kernel-harness.ts';
import { randomF32, relErr, testDevice } from './helpers.ts';

type SbType = 'Q4_K' | 'Q5_K' | 'Q6_K' | 'Q8_0' | 'Q4_0' | 'Q5_0' | 'Q4_1' | 'Q5_1';

function kquant(type: SbType, rows: number, cols: number, seed: number): GgmlLinear {
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

/** Whole and split into chunks of 7 rows, then the three epilogues, plain and with the RMSNorm folded in (test/gpu/epilogue-checks.ts). */
async function expectSuperblockMatvec(h: KernelHarness, device: GPUDevice, layout: MatvecLayout, type: SbType, supers: number): Promise<void> {
  const w = kquant(type, 38, 256 * supers, 11 + supers);
  const g = uploadLinear(device, w, 1 << 30);
  const rowBytes = w.segments[0]!.bytes.byteLength / w.rows;
  const split = uploadLinear(device, w, rowBytes * 7 + 32);
  expect(split.chunks.length).toBeGreaterThan(1);
  expect(matvecKernel(layout, g.chunks[0]!.format, w.cols).name).toBe(`matvec_superblock_ggml_${type.toLowerCase()}`);
  const x = randomF32(w.cols, 30 + supers);
  const ref = matmul(w, x, 1);
  const yb = h.buffer(w.rows * 4);
  await h.run(linearOps(h.cache, split, { step: h.step, x: h.buffer(x), y: yb, outStride: w.rows, epilogue: Epilogue.STORE }), 1);
  expect(relErr(await h.readF32(yb, w.rows), ref), `${split.chunks.length} chunks`).toBeLessThan(2e-6);
  await expectEpilogues(h, g, w.rows, x, ref, 1, { seed: 50 + supers, what: type });
  expect(matvecKernel(layout, g.chunks[0]!.format, w.cols, true).name).toBe(`matvec_superblock_norm_ggml_${type.toLowerCase()}`);
  await expectFoldedNorm(h, g, w, { seed: 60 + supers, what: type });
}

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
    await expectSuperblockMatvec(h, device, layout, type, supers);
  });
});

// The other block types differ from those only in their sb_dot (the reductions and epilogues are the
// structure's, checked above on every layout and path), so they run on two layouts of the f32 path: shuffles
// with 4 rows a group (two gate|up pairs) and workgroup memory. The 32-value types' lanes start 0–3 words
// into a vec4 (Q5_0's at 0, 3, 2, 1; Q4_1's at 0, 2, 0, 2).
describe.each([LAYOUTS[1]!, LAYOUTS[2]!].map(([l, t]) => [l, { ...t, ROWS: 4 }] as const))('the other block types by super-block, %s', (_l, layout) => {
  let device: GPUDevice;
  let h: KernelHarness;
  beforeAll(async () => {
    device = await testDevice(false);
    h = new KernelHarness(device, false, tuning(layout));
  });
  afterAll(() => { h?.destroy(); device?.destroy(); });

  it.each([['Q5_K', 5], ['Q8_0', 3], ['Q4_0', 5], ['Q5_0', 3], ['Q4_1', 3], ['Q5_1', 5]] as const)('%s, %i super-blocks a row: plain, residual and gate|up, whole and split', async (type, supers) => {
    await expectSuperblockMatvec(h, device, layout, type, supers);
  });
});

describe('which decode matvec a layout runs', () => {
  const sb: MatvecLayout = { WG: 64, LANES: 16, ROWS: 2, subgroups: false, superblock: true };
  it('the super-block kernel for the eight block types when asked and K is whole super-blocks, matvec.wgsl for other formats, narrow groups, rows layouts and K % 256 ≠ 0', () => {
    for (const t of ['Q4_K', 'Q5_K', 'Q6_K', 'Q8_0', 'Q4_0', 'Q5_0', 'Q4_1', 'Q5_1'] as const) {
      expect(matvecKernel(sb, { kind: 'ggml', type: t }, 1024).name).toBe(`matvec_superblock_ggml_${t.toLowerCase()}`);
    }
    expect(matvecKernel(sb, { kind: 'ggml', type: 'Q8_0' }, 1024 + 32).name).toBe('matvec_ggml_q8_0');
    expect(matvecKernel(sb, { kind: 'dense', wdtype: 2 }, 1024).name).toBe('matvec_dense');
    expect(matvecKernel({ ...sb, LANES: 2 }, { kind: 'ggml', type: 'Q4_K' }, 1024).name).toBe('matvec_ggml_q4_k');
    expect(matvecKernel({ ...sb, superblock: false }, { kind: 'ggml', type: 'Q4_K' }, 1024).name).toBe('matvec_ggml_q4_k');
  });
});
