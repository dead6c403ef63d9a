// Relaxed vs plain SIMD on the linear kernel alone, measured in CPU time (process.cpuUsage: the time this
// process really ran, so other processes' load on a shared machine does not land on one side only), the
// two builds interleaved round by round, the median of each. Wall-clock tok/s on a loaded 2-core machine
// swing ±30% between runs of the same build; this figure is what the fused multiply-add alone is worth.
import { loadKernelBinary } from '../../src/cpu/kernel-binary.ts';
import type { SimdPath } from '../../src/cpu/simd-path.ts';
import { WasmKernels } from '../../src/cpu/wasm-kernels.ts';
import { quantizeGgml } from '../../src/model/formats/gguf/ggml-quantize.ts';
import type { GgmlType } from '../../src/model/types.ts';

const ROWS = 1024, K = 1024, ROUNDS = 40, WARM = 10;

/** plain ÷ relaxed CPU time (above 1: relaxed faster) of one `type` linear, 1024×1024, on n tokens. */
export async function relaxedOverPlainCpuTime(type: GgmlType, n: number): Promise<number> {
  const paths: SimdPath[] = ['plain', 'relaxed'];
  const ks = await Promise.all(paths.map(async (p) => WasmKernels.create(await loadKernelBinary(false, p))));
  const v = Float32Array.from({ length: ROWS * K }, (_, i) => Math.sin(i * 12.9898) * 0.5);
  const w = { kind: 'ggml' as const, rows: ROWS, cols: K, segments: [{ name: 'w', type, rows: ROWS, bytes: quantizeGgml(type, v, ROWS, K) }] };
  const x = Float32Array.from({ length: n * K }, (_, i) => Math.cos(i * 0.37));
  const placed = ks.map((k) => k.placeLinear(w));
  const times: number[][] = [[], []];
  const reps = Math.max(1, Math.round(64 / n));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < 2; i++) {
      const c0 = process.cpuUsage();
      for (let r = 0; r < reps; r++) ks[i]!.linear(placed[i]!, x, n);
      const c = process.cpuUsage(c0);
      if (round >= WARM) times[i]!.push(c.user + c.system);   // the first rounds: tier-up of both modules
    }
  }
  ks.forEach((k) => k.close());
  const median = (a: number[]): number => [...a].sort((p, q) => p - q)[a.length >> 1]!;
  return median(times[0]!) / median(times[1]!);
}
