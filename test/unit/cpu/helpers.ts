// Shared by the CPU (WASM) engine's tests: one kernels instance per file, seeded data, the GPU tests'
// error measure (test/gpu/helpers.ts, restated here so these Node tests load no WebGPU).
import { loadKernelBinary } from '../../../src/cpu/kernel-binary.ts';
import type { SimdChoice, SimdPath } from '../../../src/cpu/simd-path.ts';
import { WasmKernels } from '../../../src/cpu/wasm-kernels.ts';

/**
 * A kernels instance of the `simd` build ('auto': the path this Node picks) on `threads` threads (more
 * than 1: the threads build on a shared memory, with a worker pool; the caller closes it).
 */
export async function testKernels(simd: SimdChoice = 'auto', threads = 1): Promise<WasmKernels> {
  return WasmKernels.create(await loadKernelBinary(threads > 1, simd), { threads });
}

/** The kernel tests' matrix: both SIMD paths × one thread and a pool of 3. */
export const KERNEL_SETUPS: [SimdPath, number][] = [['plain', 1], ['plain', 3], ['relaxed', 1], ['relaxed', 3]];

/** Deterministic uniform [−1, 1) samples (the GPU tests' generator). */
export function randomF32(n: number, seed: number, scale = 1): Float32Array {
  let s = seed >>> 0;
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return (((z ^ (z >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  };
  return Float32Array.from({ length: n }, () => next() * scale);
}

/** max |a − b| / max(1, max |b|); Infinity on a NaN. */
export function relErr(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`lengths ${a.length} vs ${b.length}`);
  let maxDiff = 0;
  let maxRef = 1;
  for (let i = 0; i < a.length; i++) {
    if (Number.isNaN(a[i]!)) return Infinity;
    maxDiff = Math.max(maxDiff, Math.abs(a[i]! - b[i]!));
    maxRef = Math.max(maxRef, Math.abs(b[i]!));
  }
  return maxDiff / maxRef;
}
