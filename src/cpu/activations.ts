// Which activations this page's WASM engines use (the page's ?cpu-activations=, src/app sets it once at
// start): 'f32' (the default: weights decoded exactly, the tokens every engine of a room agrees on) or
// 'q8' (each linear's input quantized per 32 values, integer dot products: about 1.5-3x faster on the
// CPU, but the tokens can differ from the other engines'; for a device that runs a model alone).
import type { CpuActivations } from './wasm-kernels.ts';

export const CPU_ACTIVATIONS: readonly CpuActivations[] = ['f32', 'q8'];

export function isCpuActivations(v: string): v is CpuActivations {
  return (CPU_ACTIVATIONS as readonly string[]).includes(v);
}

let preference: CpuActivations = 'f32';

/** Sets what this page's WASM engines use (their workers get it with each load request). */
export function preferCpuActivations(a: CpuActivations): void {
  preference = a;
}

export function cpuActivationsPreference(): CpuActivations {
  return preference;
}
