// The WASM engine's row in the engine table (src/engines/table.ts): our WebAssembly SIMD kernels, for
// devices without a usable GPU. In a browser page it runs in the one engine worker (inWorker; the page's
// table, src/engines/page-engines.ts, sends its probe and loads there), so it never blocks the page and
// runs the pool's threads where the page is cross-origin isolated. This row itself probes and loads on
// the thread it is asked on: the worker's, or Node's (tests, the CLI); a page's main thread only makes
// an engine of weights already read there (a draft model: one thread).
// Its options (?simd=, ?cpu-activations=) come with each request. The engine itself is a lazy import.
import type { EngineOptions, EngineRow } from '../engines/contract.ts';
import { inThreadShare } from '../engines/in-thread-share.ts';
import { CPU_ACTIVATIONS, SIMD_CHOICES, type CpuActivations, type SimdChoice } from './simd-path.ts';
import { pageIsolated, WASM32_MEMORY_BYTES, wasmLabel, wasmThreadsHere, wasmThreadsOnThisThread } from './threads-here.ts';
import { wasmScratchBytes } from './scratch-bytes.ts';

/** The row's options as the engine takes them (validated where the URL is read: src/app/url-params.ts; the engine checks them again). */
function cpuOptions(o: EngineOptions): { simd: SimdChoice; activations: CpuActivations } {
  return { simd: (o.simd ?? 'auto') as SimdChoice, activations: (o['cpu-activations'] ?? 'f32') as CpuActivations };
}

/** Streamed weights are placed straight into the WASM memory (at most LOAD_IN_FLIGHT_BYTES of them in JS at once). */
const createWasm: EngineRow['createEngine'] = (options) => async (weights, { ctx, kv }) => {
  const { createCpuEngine } = await import('./create-engine.ts');
  const { simd, activations } = cpuOptions(options);
  return createCpuEngine(weights, { ctx, kv: kv ?? 'f16', threads: wasmThreadsOnThisThread(), simd, activations });
};

export const wasmRow: EngineRow = {
  kind: 'wasm',
  title: 'WASM',
  inWorker: true,
  options: [
    { param: 'simd', values: SIMD_CHOICES, doc: 'the kernels\' build: auto (relaxed SIMD where the browser validates it), relaxed, or plain (SIMD128 only)' },
    { param: 'cpu-activations', values: CPU_ACTIVATIONS, doc: 'the linears\' activations: f32 (exact), or q8 (integer dot products, faster; in a room its tokens can differ from the other engines\')' },
  ],
  errorClasses: async () => [(await import('./errors.ts')).CpuUnsupportedError],
  presumedHere: () => true,
  async probe(budgetMs, options) {
    const { simd, activations } = cpuOptions(options);
    const threads = wasmThreadsHere();
    const { measureWasmSpeed } = await import('./speed-probe.ts');
    const m = await measureWasmSpeed(budgetMs, threads, simd);
    return { engine: 'wasm', speed: m.speed, label: wasmLabel({ threads, relaxedSimd: m.simd === 'relaxed', isolated: pageIsolated(), q8: activations === 'q8' }) };
  },
  async label(_here, options) {
    const { simd, activations } = cpuOptions(options);
    const { resolveSimdPath } = await import('./kernel-binary.ts');   // the path the engine will load
    return wasmLabel({ threads: wasmThreadsHere(), relaxedSimd: await resolveSimdPath(simd) === 'relaxed', isolated: pageIsolated(), q8: activations === 'q8' });
  },
  fallbackLabel: () => 'CPU (WebAssembly)',
  budgetBytes: (offered) => Math.min(offered, WASM32_MEMORY_BYTES),
  capNote: (offered) => (offered >= WASM32_MEMORY_BYTES ? ' · at most 4 GiB on the CPU engine (a wasm32 memory)' : ''),
  /** The WASM engine's own frames (./scratch-bytes.ts; test/unit/cpu/scratch-bytes.test.ts holds it to the engine's allocations). */
  scratchBytes: (config, o) => wasmScratchBytes(config, o),
  loadShare: (options) => inThreadShare(async (s, r) => (await import('../model/load-weights.ts')).openWeights(s, r), createWasm(options)),
  createEngine: createWasm,
};
