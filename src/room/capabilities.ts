// What a device tells the host about itself: WebGPU adapter and limits, shader-f16, a memory budget
// (from navigator.deviceMemory, adjustable by the user) and a quick measured speed (a ~30 ms f32 matvec
// in JS: relative only, used to deal layers in proportion).
import { adapterLabel, requestAdapter, summarizeAdapter } from '../gpu/adapter.ts';
import type { DeviceCaps } from './protocol.ts';

const GiB = 2 ** 30;

export interface CapabilityOptions {
  engine: 'webgpu' | 'reference';
  /** Override the memory budget (bytes). Default: half of navigator.deviceMemory, else 2 GiB. */
  memoryBudgetBytes?: number;
  /** Override the measured speed (tests that want a fixed deal). */
  speed?: number;
}

/** GFLOP/s of a 256×256 f32 matvec repeated for ~budgetMs. */
export function measureSpeed(budgetMs = 30): number {
  const n = 256;
  const w = new Float32Array(n * n).map((_, i) => ((i * 7919) % 1000) / 1000 - 0.5);
  const x = new Float32Array(n).map((_, i) => (i % 10) / 10);
  const y = new Float32Array(n);
  let reps = 0;
  const t0 = performance.now();
  let t = t0;
  do {
    for (let r = 0; r < n; r++) {
      let acc = 0;
      for (let k = 0; k < n; k++) acc += w[r * n + k]! * x[k]!;
      y[r] = acc;
    }
    reps++;
    t = performance.now();
  } while (t - t0 < budgetMs);
  return (reps * 2 * n * n) / ((t - t0) / 1000) / 1e9 + y[0]! * 0; // y read so the loop is not dead code
}

export async function measureCapabilities(opts: CapabilityOptions): Promise<DeviceCaps> {
  const deviceMemoryGiB = (globalThis.navigator as { deviceMemory?: number } | undefined)?.deviceMemory ?? 0;
  let caps: Omit<DeviceCaps, 'memoryBudgetBytes' | 'speed' | 'deviceMemoryGiB' | 'engine'> = {
    adapter: 'no WebGPU', isFallbackAdapter: false, shaderF16: false, maxStorageBufferBindingSize: 0, maxBufferSize: 0,
  };
  try {
    const s = summarizeAdapter(await requestAdapter());
    caps = {
      adapter: adapterLabel(s), isFallbackAdapter: s.isFallbackAdapter, shaderF16: s.shaderF16,
      maxStorageBufferBindingSize: s.maxStorageBufferBindingSize, maxBufferSize: s.maxBufferSize,
    };
  } catch { /* no WebGPU: the device can still run the reference engine */ }
  return {
    ...caps, engine: opts.engine, deviceMemoryGiB,
    memoryBudgetBytes: opts.memoryBudgetBytes ?? (deviceMemoryGiB > 0 ? (deviceMemoryGiB * GiB) / 2 : 2 * GiB),
    speed: opts.speed ?? measureSpeed(),
  };
}
