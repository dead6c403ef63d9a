// The WASM engine's measured probe (src/room/engine-probe.ts chooses with it): GFLOP/s of a 512×1024 f32
// matvec on the kernels, on `threads` threads, for about budgetMs. Run where the engine will run (its
// worker in a browser, so a pool of N threads measures N threads).
import { fromFloat32 } from '../model/tensor-utils.ts';
import { loadKernelBinary } from './kernel-binary.ts';
import type { SimdChoice, SimdPath } from './simd-path.ts';
import { WasmKernels } from './wasm-kernels.ts';

/** GFLOP/s, and the build that ran (the engine loads the same one for the same `simd`). */
export async function measureWasmSpeed(budgetMs: number, threads: number, simd: SimdChoice = 'auto'): Promise<{ speed: number; simd: SimdPath }> {
  const rows = 512, cols = 1024;
  const k = await WasmKernels.create(await loadKernelBinary(threads > 1, simd), { threads });
  try {
    const w = k.placeLinear({ kind: 'dense', rows, cols, weight: fromFloat32('probe.weight', Float32Array.from({ length: rows * cols }, (_, i) => ((i * 7919) % 1000) / 1000 - 0.5), [rows, cols], 'F32') });
    const x = Float32Array.from({ length: cols }, (_, i) => Math.sin(i));
    k.linear(w, x, 1);                                              // warm-up (tier-up of the module)
    let reps = 0;
    const t0 = performance.now();
    let t = t0;
    do { k.linear(w, x, 1); reps++; t = performance.now(); } while (t - t0 < budgetMs);
    return { speed: (reps * 2 * rows * cols) / ((t - t0) / 1000) / 1e9, simd: k.simd };
  } finally {
    k.close();
  }
}
