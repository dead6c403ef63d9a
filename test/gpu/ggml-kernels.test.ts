// The ggml block-type kernels (shaders/lib/ggml/<type>.wgsl in the matvec, both prefill matmuls and the
// embedding gather) against the reference dequantization (src/model/formats/gguf/ggml-dequant.ts,
// bit-exact with ggml-quants.c) and the reference matmul, on odd shapes, on both paths (f32: no
// shader-f16; f16), in a subgroup and a workgroup-memory matvec layout beside the row and the tiled
// prefill matmuls. Tolerances as for the other linears (tests/gpu/kernels.test.ts): 2e-6 of the largest
// reference magnitude (≥ 1) for products, exact for the gather.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GGML_BLOCK_TYPES, uploadLinear, type GgmlBlockType } from '../../src/gpu/gpu-weights.ts';
import { embedOps, Epilogue, linearOps } from '../../src/gpu/kernels/linear/linear.ts';
import type { MatmulLayout, MatvecLayout, Tuning } from '../../src/gpu/tuning.ts';
import { GGML_TYPES } from '../../src/model/formats/gguf/ggml-types.ts';
import { quantizeGgml } from '../../src/model/formats/gguf/ggml-quantize.ts';
import { embedRows, matmul } from '../../src/model/reference/ops.ts';
import { fromFloat32 } from '../../src/model/tensor-utils.ts';
import type { GgmlLinear, GgmlType, Linear } from '../../src/model/types.ts';
import { KernelHarness } from './kernel-harness.ts';
import { expectEpilogues, expectFoldedNorm } from './epilogue-checks.ts';
import { randomF32, relErr, testDevice } from './helpers.ts';

function ggmlLinear(type: GgmlType, rows: number, cols: number, seed: number): GgmlLinear {
  const v = randomF32(rows * cols, seed, 0.5);
  return { kind: 'ggml', rows, cols, segments: [{ name: `w.${type}`, type, rows, bytes: quantizeGgml(type, v, rows, cols) }] };
}

/** K: three blocks (odd, and for 32-value types K % 64 = 32, so rows start at 2 mod 4 for Q8_0/Q4_0/Q5_0). */
const colsOf = (t: GgmlBlockType): number => 3 * GGML_TYPES[t].blockSize;

const tuning = (mv: MatvecLayout, mm: MatmulLayout): Tuning => ({
  adapterClass: 'cpu', matvec: { dense: mv, q4: mv, ggml: mv }, matmul: { dense: mm, q4: mm, ggml: mm }, attention: { splits: 1, minKeys: 64 },
});

// lavapipe's subgroup is 8 lanes: the first layout reduces with subgroupAdd (the workgroup is one subgroup),
// the second with subgroup shuffles in a workgroup of 4 subgroups, a row group in each (a GPU's 128-thread
// candidates, src/gpu/tuning.ts), the last in workgroup memory; the rows structure shares x by
// subgroupBroadcast in the first and loads it per lane in the second.
const LAYOUTS: [string, Tuning][] = [
  ['matvec 8 lanes a row × 6 rows, subgroupAdd; prefill rows 8 lanes × 4 rows × 5 tokens, x by subgroups',
    tuning({ WG: 8, LANES: 8, ROWS: 6, subgroups: true }, { kind: 'rows', WG: 8, R: 4, TT: 5, subgroups: true })],
  ['matvec 8 lanes a row in 32 (4 subgroups) × 2 rows, subgroup shuffles; prefill rows 8 lanes × 2 rows × 3 tokens, x per lane',
    tuning({ WG: 32, LANES: 8, ROWS: 2, subgroups: true }, { kind: 'rows', WG: 8, R: 2, TT: 3, subgroups: false })],
  ['matvec 4 lanes a row in 16, 2 rows, workgroup memory; prefill tiles 16×32 of 4×2',
    tuning({ WG: 16, LANES: 4, ROWS: 2, subgroups: false }, { kind: 'tiles', BM: 16, BN: 32, TM: 4, TN: 2 })],
];

describe.each(LAYOUTS.flatMap(([l, t]) => [false, true].map((f16) => [l, f16, t] as const)))('ggml kernels, %s, shader-f16 %s', (_l, useF16, t) => {
  let device: GPUDevice;
  let h: KernelHarness;
  beforeAll(async () => {
    device = await testDevice(useF16);
    h = new KernelHarness(device, useF16, t);
  });
  afterAll(() => { h?.destroy(); device?.destroy(); });

  it.each(GGML_BLOCK_TYPES)('%s: plain, residual and gate|up epilogues for 1, 6 and 19 tokens, whole and split; decode with the RMSNorm folded in', async (type) => {
    const w = ggmlLinear(type, 38, colsOf(type), 7);
    const g = uploadLinear(device, w, 1 << 30);
    const rowBytes = w.segments[0]!.bytes.byteLength / w.rows;
    const split = uploadLinear(device, w, Math.floor(rowBytes * 7.5) + 32);
    expect(split.chunks.length).toBe(6);
    for (const n of [1, 6, 19]) {
      const x = randomF32(n * w.cols, 40 + n);
      const ref = matmul(w, x, n);
      for (const gw of [g, split]) {
        const yb = h.buffer(n * w.rows * 4);
        await h.run(linearOps(h.cache, gw, { step: h.step, x: h.buffer(x), y: yb, outStride: w.rows, epilogue: Epilogue.STORE }), n);
        expect(relErr(await h.readF32(yb, n * w.rows), ref), `n = ${n}, ${gw.chunks.length} chunks`).toBeLessThan(2e-6);
      }
      await expectEpilogues(h, g, w.rows, x, ref, n, { seed: 50 + n, store: false });
    }
    await expectFoldedNorm(h, g, w, { seed: 60 });
  });
});

describe.each([false, true])('ggml gathers and mixed matrices, shader-f16 %s', (useF16) => {
  let device: GPUDevice;
  let h: KernelHarness;
  beforeAll(async () => {
    device = await testDevice(useF16);
    h = new KernelHarness(device, useF16);
  });
  afterAll(() => { h?.destroy(); device?.destroy(); });

  it.each(GGML_BLOCK_TYPES)('embedding gather %s is exact, also split into chunks', async (type) => {
    const V = 23;
    const w = ggmlLinear(type, V, 2 * GGML_TYPES[type].blockSize, 9);
    const ids = [0, V - 1, 5, 5, 17, V - 2, 1];
    const ref = embedRows(w, ids);
    const rowBytes = w.segments[0]!.bytes.byteLength / V;
    for (const maxBinding of [1 << 30, rowBytes * 4 + 32]) {
      const g = uploadLinear(device, w, maxBinding);
      if (maxBinding < 1 << 30) expect(g.chunks.length).toBe(6);
      const out = h.buffer(ids.length * w.cols * 4);
      await h.run(embedOps(h.cache, g, { step: h.step, ids: h.buffer(new Uint32Array(ids)), out }), ids.length);
      expect(await h.readF32(out, ids.length * w.cols)).toEqual(ref);
    }
  });

  it('a matrix of row segments of different types (Q4_K q|k, Q6_K v, an F16 fallback) runs one op per segment', async () => {
    const cols = 256;
    const parts: [GgmlType, number][] = [['Q4_K', 40], ['Q6_K', 24], ['F16', 9], ['Q8_0', 7]];
    const segments = parts.map(([type, rows], i) => {
      const v = randomF32(rows * cols, 60 + i, 0.5);
      return { name: `seg${i}.${type}`, type, rows, bytes: type === 'F16' ? fromFloat32('f', v, [rows, cols], 'F16').bytes : quantizeGgml(type, v, rows, cols) };
    });
    const w: Linear = { kind: 'ggml', rows: 80, cols, segments };
    const g = uploadLinear(device, w, 1 << 30);
    expect(g.chunks.map((c) => [c.rowStart, c.rows, c.format.kind === 'ggml' ? c.format.type : c.format.kind]))
      .toEqual([[0, 40, 'Q4_K'], [40, 24, 'Q6_K'], [64, 9, 'dense'], [73, 7, 'Q8_0']]);
    for (const n of [1, 4]) {
      const x = randomF32(n * cols, 70 + n);
      const yb = h.buffer(n * w.rows * 4);
      await h.run(linearOps(h.cache, g, { step: h.step, x: h.buffer(x), y: yb, outStride: w.rows, epilogue: Epilogue.STORE }), n);
      expect(relErr(await h.readF32(yb, n * w.rows), matmul(w, x, n))).toBeLessThan(2e-6);
    }
  });
});
