// Where the compiled WASM kernels come from: in Node, the cached compile of src/cpu/asm/ (./build/
// compile-kernels.ts, compiled on first use); in the browser, the file the Vite plugin
// (./build/vite-plugin.ts) serves in dev and emits into the build as `cpu-kernels.wasm`.

export const KERNEL_FILE = 'cpu-kernels.wasm';
export const THREADED_KERNEL_FILE = 'cpu-kernels-threads.wasm';

const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string' && typeof window === 'undefined' && typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope === 'undefined';

/** The module's bytes, compiled for plain SIMD128 (`threads`: on a shared memory, for a worker pool). */
export async function loadKernelBinary(threads = false): Promise<Uint8Array> {
  if (isNode) {
    const compiler = './build/compile-kernels.ts';   // Node only: kept out of browser bundles
    const { kernelBinary } = (await import(/* @vite-ignore */ compiler)) as typeof import('./build/compile-kernels.ts');
    return kernelBinary(threads ? 'threads' : 'simd');
  }
  const base = (import.meta as { env?: { BASE_URL?: string } }).env?.BASE_URL ?? '/';
  const url = new URL(`${base}${threads ? THREADED_KERNEL_FILE : KERNEL_FILE}`, globalThis.location?.href);
  const res = await fetch(url);
  if (!res.ok) throw new Error(`the CPU kernels (${url}) did not load: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}
