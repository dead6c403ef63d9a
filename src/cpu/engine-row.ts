// The WASM engine's row in the engine table (src/engines/table.ts): our WebAssembly SIMD kernels, for
// devices without a usable GPU. In a browser page its share loads in a worker of its own
// (./worker-engine.ts), so it never blocks the page and runs the pool's threads where the page is
// cross-origin isolated; the worker reads a model URL itself (through the device's IndexedDB cache, under
// the same key), and a model only the page reaches (the host's local folder, the host over the channel:
// model '') through the page's cached source. Elsewhere (Node) the share loads on this thread.
// Its options (?simd=, ?cpu-activations=) come with each request. The engine itself is a lazy import.
import type { EngineOptions, EngineRow } from '../engines/contract.ts';
import { engineScratchBytes } from '../model/engine-scratch.ts';
import { inThreadShare } from '../engines/in-thread-share.ts';
import { CPU_ACTIVATIONS, SIMD_CHOICES, type CpuActivations, type SimdChoice } from './simd-path.ts';
import { onPageMainThread, pageIsolated, WASM32_MEMORY_BYTES, wasmLabel, wasmThreadsHere, wasmThreadsOnThisThread } from './threads-here.ts';

/** The row's options as the engine takes them (validated where the URL is read: src/app/url-params.ts). */
function cpuOptions(o: EngineOptions): { simd: SimdChoice; activations: CpuActivations } {
  return { simd: (o.simd ?? 'auto') as SimdChoice, activations: (o['cpu-activations'] ?? 'f32') as CpuActivations };
}

const createWasm: EngineRow['createEngine'] = (options) => async (weights, { ctx, kv }) => {
  const { createCpuEngine } = await import('./create-engine.ts');
  const { materializeWeights } = await import('../model/load-stream.ts');
  const { simd, activations } = cpuOptions(options);
  return createCpuEngine(await materializeWeights(weights), { ctx, kv: kv ?? 'f16', threads: wasmThreadsOnThisThread(), simd, activations });
};

export const wasmRow: EngineRow = {
  kind: 'wasm',
  title: 'WASM',
  inWorker: true,
  options: [
    { param: 'simd', values: SIMD_CHOICES, doc: 'the kernels\' build: auto (relaxed SIMD where the browser validates it), relaxed, or plain (SIMD128 only)' },
    { param: 'cpu-activations', values: CPU_ACTIVATIONS, doc: 'the linears\' activations: f32 (exact), or q8 (integer dot products, faster; in a room its tokens can differ from the other engines\')' },
  ],
  presumedHere: () => true,
  /** In a browser the probe runs in the engine's worker with the pool it would run (a few tens of ms to start it). */
  async probe(budgetMs, options) {
    const { simd, activations } = cpuOptions(options);
    const q8 = activations === 'q8';   // the card says so
    if (onPageMainThread()) {
      const { CpuWorkerEngine } = await import('./worker-engine.ts');
      const p = await CpuWorkerEngine.probe(budgetMs, wasmThreadsHere(), simd);
      return { engine: 'wasm', speed: p.speed, label: wasmLabel({ threads: p.threads, relaxedSimd: p.simd === 'relaxed', isolated: p.isolated, q8 }) };
    }
    const threads = wasmThreadsHere();
    const { measureWasmSpeed } = await import('./speed-probe.ts');
    const m = await measureWasmSpeed(budgetMs, threads, simd);
    return { engine: 'wasm', speed: m.speed, label: wasmLabel({ threads, relaxedSimd: m.simd === 'relaxed', isolated: pageIsolated(), q8 }) };
  },
  async label(_here, options) {
    const { simd, activations } = cpuOptions(options);
    const { resolveSimdPath } = await import('./kernel-binary.ts');   // the path the engine will load
    return wasmLabel({ threads: wasmThreadsHere(), relaxedSimd: await resolveSimdPath(simd) === 'relaxed', isolated: pageIsolated(), q8: activations === 'q8' });
  },
  fallbackLabel: () => 'CPU (WebAssembly)',
  budgetBytes: (offered) => Math.min(offered, WASM32_MEMORY_BYTES),
  capNote: (offered) => (offered >= WASM32_MEMORY_BYTES ? ' · at most 4 GiB on the CPU engine (a wasm32 memory)' : ''),
  /** Counted as the WebGPU engine's buffers (src/model/engine-scratch.ts), the bound the deal has always used: not yet measured on its own. */
  scratchBytes: (config, o) => engineScratchBytes(config, o),
  loadShare(options) {
    if (!onPageMainThread()) return inThreadShare(async (s, r) => (await import('../model/load-weights.ts')).openWeights(s, r), createWasm(options));
    const { simd, activations } = cpuOptions(options);
    return async ({ model, modelKey, source, request, ctx, kv }) => {
      const { CpuWorkerEngine } = await import('./worker-engine.ts');
      const engine = await CpuWorkerEngine.start({
        ...(model ? { model, cacheKey: modelKey } : {}), layers: request.layers, ...(request.embedding ? { embedding: true } : {}),
        ...(request.head ? { head: true } : {}), ctx, kv: kv ?? 'f16', threads: wasmThreadsHere(), simd, activations,
      }, {
        ...(model ? {} : { source }), ...(request.signal ? { signal: request.signal } : {}),
        // the fetch phase is the download the device card's bar shows; placing the weights follows quickly
        onProgress: (p) => { if (p.phase === 'fetch') request.onProgress?.(p); },
      });
      return { engine, hiddenSize: engine.info.hiddenSize, counts: engine.info.counts };
    };
  },
  createEngine: createWasm,
};
