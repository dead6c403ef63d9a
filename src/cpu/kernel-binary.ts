// Where the compiled WASM kernels come from: in Node, the cached compile of src/cpu/asm/ (./build/
// compile-kernels.ts, compiled on first use); in the browser, the files the Vite plugin
// (./build/vite-plugin.ts) serves in dev and emits into the build: `cpu-kernels.wasm` (plain SIMD128),
// `cpu-kernels-threads.wasm` (on a shared memory) and their `-relaxed` twins (relaxed SIMD), of which
// ./simd-path.ts picks the one this engine can run.
import { pickSimdPath, recheckRelaxedSimd, relaxedSimdSupported, type SimdChoice, type SimdPath } from './simd-path.ts';

export const KERNEL_FILE = 'cpu-kernels.wasm';
export const THREADED_KERNEL_FILE = 'cpu-kernels-threads.wasm';
export const RELAXED_KERNEL_FILE = 'cpu-kernels-relaxed.wasm';
export const RELAXED_THREADED_KERNEL_FILE = 'cpu-kernels-threads-relaxed.wasm';

/** The build variant (compile-kernels.ts's KernelVariant) and the file the app serves it as. */
export function kernelFile(threads: boolean, path: SimdPath): { variant: 'simd' | 'threads' | 'simd-relaxed' | 'threads-relaxed'; file: string } {
  if (path === 'relaxed') return threads ? { variant: 'threads-relaxed', file: RELAXED_THREADED_KERNEL_FILE } : { variant: 'simd-relaxed', file: RELAXED_KERNEL_FILE };
  return threads ? { variant: 'threads', file: THREADED_KERNEL_FILE } : { variant: 'simd', file: KERNEL_FILE };
}

const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string' && typeof window === 'undefined' && typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope === 'undefined';

/**
 * Node 20's V8 (11.3) has relaxed SIMD complete but behind --experimental-wasm-relaxed-simd (it shipped
 * on by default one V8 later, in Chrome 114 and Node 22): turned on here, once, before the first relaxed
 * module is validated, so the Node engine, the tests and the bench run the relaxed path too. Only where
 * validation says it is off, and only on a V8 that knows the flag; worker threads started later inherit it.
 */
async function enableRelaxedSimdInNode(): Promise<void> {
  if (relaxedSimdSupported()) return;
  const v8Major = Number(process.versions.v8?.split('.')[0] ?? 0);
  if (v8Major !== 11) return;
  const name = 'node:v8';   // Node only: kept out of browser bundles
  const v8 = (await import(/* @vite-ignore */ name)) as typeof import('node:v8');
  v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  recheckRelaxedSimd();
}

/** The SIMD path `choice` resolves to on this engine (in Node, after turning the feature on where it can be). */
export async function resolveSimdPath(choice: SimdChoice = 'auto'): Promise<SimdPath> {
  if (isNode) await enableRelaxedSimdInNode();
  return pickSimdPath(choice);
}

/**
 * The module's bytes: `threads` on a shared memory (for a worker pool), `simd` the SIMD path
 * ('auto': relaxed where this engine has it; 'plain' forces the SIMD128-only build).
 */
export async function loadKernelBinary(threads = false, simd: SimdChoice = 'auto'): Promise<Uint8Array> {
  const { variant, file } = kernelFile(threads, await resolveSimdPath(simd));
  if (isNode) {
    const compiler = './build/compile-kernels.ts';   // Node only: kept out of browser bundles
    const { kernelBinary } = (await import(/* @vite-ignore */ compiler)) as typeof import('./build/compile-kernels.ts');
    return kernelBinary(variant);
  }
  const base = (import.meta as { env?: { BASE_URL?: string } }).env?.BASE_URL ?? '/';
  const url = new URL(`${base}${file}`, globalThis.location?.href);
  const res = await fetch(url);
  if (!res.ok) throw new Error(`the CPU kernels (${url}) did not load: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}
