// The prefill matmul's 64 × 64 output tiles (shaders/matmul_tiles.wgsl with BM = 64: the finished tile
// passes through workgroup memory in two passes of 32 tokens), a GPU candidate (src/gpu/tuning.ts), against
// the reference matmul on BF16 and Q4_K weights, for 37 tokens (one tile, both passes) and 70 (a second,
// partial token tile), with the three epilogues. Tolerance as for every linear: 2e-6 of the
// largest reference magnitude.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { uploadLinear } from '../../src/gpu/gpu-weights.ts';
import type { MatmulTilesLayout } from '../../src/gpu/tuning.ts';
import { quantizeGgml } from '../../src/model/formats/gguf/ggml-quantize.ts';
import { matmul } from '../../src/model/reference/ops.ts';
import { fromFloat32 } from '../../src/model/tensor-utils.ts';
import type { Linear } from '../../src/model/types.ts';
import { KernelHarness } from './kernel-harness.ts';
import { expectEpilogues } from './epilogue-checks.ts';
import { randomF32, testDevice } from './helpers.ts';

const TILES: [string, MatmulTilesLayout][] = [
  ['64×64 of 8×4 (128 threads)', { kind: 'tiles', BM: 64, BN: 64, TM: 8, TN: 4 }],
  ['64×64 of 4×4 (256 threads)', { kind: 'tiles', BM: 64, BN: 64, TM: 4, TN: 4 }],
];

const LINEARS: [string, () => Linear][] = [
  ['BF16 70×40', () => ({ kind: 'dense', rows: 70, cols: 40, weight: fromFloat32('w', randomF32(70 * 40, 3, 0.5), [70, 40], 'BF16') })],
  ['Q4_K 40×256', () => ({ kind: 'ggml', rows: 40, cols: 256, segments: [{ name: 'w', type: 'Q4_K', rows: 40, bytes: quantizeGgml('Q4_K', randomF32(40 * 256, 4, 0.5), 40, 256) }] })],
];

// One path each (the paths differ in the decode libraries only, which every other linear test runs both ways).
describe.each(TILES.map(([l, t], i) => [l, i === 1, t] as const))('prefill tiles %s, shader-f16 %s', (_l, useF16, tile) => {
  let device: GPUDevice;
  let h: KernelHarness;
  beforeAll(async () => {
    device = await testDevice(useF16);
    const mv = { WG: 8, LANES: 8, ROWS: 2, subgroups: false };
    h = new KernelHarness(device, useF16, { adapterClass: 'cpu', matvec: { dense: mv, q4: mv, ggml: mv }, matmul: { dense: tile, q4: tile, ggml: tile }, attention: { splits: 1, minKeys: 64 } });
  });
  afterAll(() => { h?.destroy(); device?.destroy(); });

  it.each(LINEARS)('%s: plain, residual and gate|up for 37 and 70 tokens', async (_w, make) => {
    const w = make();
    const g = uploadLinear(device, w, 1 << 30);
    for (const n of [37, 70]) {
      const x = randomF32(n * w.cols, 20 + n);
      await expectEpilogues(h, g, w.rows, x, matmul(w, x, n), n, { seed: 30 + n });
    }
  });
});
