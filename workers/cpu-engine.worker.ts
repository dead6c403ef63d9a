// The WASM engine's worker: owns one CpuEngine (src/cpu) and its thread pool, exposed with comlink. The
// page talks to it through src/cpu/worker-engine.ts (a LayerEngine). Here, off the page's main thread,
// the engine may block (Atomics.wait), so where this worker is cross-origin isolated it runs the pool's
// threads; otherwise one thread. Weights are read here (ranged reads of only this share's tensors,
// streamed by openWeights, through the device's IndexedDB cache), so they never cross to the page;
// only a source that only the page can reach (the host's local folder, the room's channel) is read
// through the page (CpuPageSource).
import * as Comlink from 'comlink';
import { createCpuEngine } from '../src/cpu/create-engine.ts';
import type { CpuEngine, CpuEngineStats } from '../src/cpu/engine.ts';
import { CpuUnsupportedError } from '../src/cpu/errors.ts';
import { measureWasmSpeed } from '../src/cpu/speed-probe.ts';
import type { SimdChoice } from '../src/cpu/simd-path.ts';
import type { CpuEngineWorkerApi, CpuLoadPhase, CpuPageSource, CpuWorkerLoaded, CpuWorkerLoadRequest, CpuWorkerProbe, CpuWorkerThreads } from '../src/cpu/worker-wire.ts';
import { EngineUsageError } from '../src/model/engine-errors.ts';
import { openWeights } from '../src/model/load-weights.ts';
import { layerEngineApi } from '../src/model/worker-engine-wire.ts';
import { resolveModelSource } from '../src/model/sources/resolve.ts';
import type { ModelSource, ReadFileOptions } from '../src/model/types.ts';
import { installErrorTransfer, registerRemoteError } from '../src/model/worker-errors.ts';
import { CachingSource, IndexedDbByteStore } from '../src/room/weight-cache.ts';

let engine: CpuEngine | undefined;

function need(): CpuEngine {
  if (!engine) throw new EngineUsageError('the CPU engine worker has no model loaded: call load first');
  return engine;
}

/** The threads this worker runs: `wanted` where it may share memory with the pool's workers, else one. */
function threadsHere(wanted: number): CpuWorkerThreads {
  const isolated = Boolean((globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated);
  const cores = Math.floor(globalThis.navigator?.hardwareConcurrency ?? 1) || 1;
  return { isolated, threads: isolated ? Math.max(1, Math.min(Math.floor(wanted) || 1, cores)) : 1 };
}

/** The page's source as a ModelSource (each call crosses to the page). */
function pageSource(p: CpuPageSource): ModelSource {
  return {
    label: p.label, ...(p.modelFile !== undefined ? { modelFile: p.modelFile } : {}),
    readFile: (path: string, opts?: ReadFileOptions) => p.readFile(path, opts),
    readRange: (path: string, start: number, end: number) => p.readRange(path, start, end),
    exists: (path: string) => p.exists(path),
    ...(p.hasSize ? { size: (path: string) => p.size(path) } : {}),
  };
}

async function sourceOf(req: CpuWorkerLoadRequest, page?: CpuPageSource): Promise<{ source: ModelSource; counts: CpuWorkerLoaded['counts'] }> {
  if (req.model === undefined) {
    if (!page) throw new EngineUsageError('the CPU engine worker was given neither a model URL nor a source to read');
    return { source: pageSource(page), counts: { networkBytes: 0, cacheBytes: 0 } };
  }
  const inner = await resolveModelSource(req.model, req.hfEndpoint ? { hfEndpoint: req.hfEndpoint } : {});
  if (req.cacheKey === undefined) return { source: inner, counts: { networkBytes: 0, cacheBytes: 0 } };
  const cached = new CachingSource(inner, new IndexedDbByteStore(), req.cacheKey);
  return { source: cached, counts: cached.counts };
}

const api: CpuEngineWorkerApi = {
  async load(req: CpuWorkerLoadRequest, page?: CpuPageSource, onProgress?: (p: CpuLoadPhase) => void): Promise<CpuWorkerLoaded> {
    await engine?.dispose();
    engine = undefined;
    const t = threadsHere(req.threads);
    const { source, counts } = await sourceOf(req, page);
    const weights = await openWeights(source, {
      layers: req.layers, ...(req.embedding ? { embedding: true } : {}), ...(req.head ? { head: true } : {}),
      onProgress: (p) => onProgress?.({ ...p, phase: 'fetch' }),
    });
    // Streamed: createCpuEngine reads every matrix straight into its place in the WASM memory (at most
    // LOAD_IN_FLIGHT_BYTES of weights in JS at once), so this worker never holds its share twice.
    engine = await createCpuEngine(weights, {
      ...(req.ctx !== undefined ? { ctx: req.ctx } : {}), ...(req.kv ? { kv: req.kv } : {}), threads: t.threads, simd: req.simd ?? 'auto',
      ...(req.activations ? { activations: req.activations } : {}),
      onProgress: (p) => onProgress?.({ ...p, phase: 'place' }),
    });
    return {
      ...t, range: engine.range, hasEmbedding: engine.hasEmbedding, hasHead: engine.hasHead, recurrent: engine.recurrent,
      vocabSize: weights.config.vocabSize, hiddenSize: weights.config.hiddenSize, counts: { ...counts },
    };
  },
  async probe(budgetMs: number, threads: number, simd?: SimdChoice): Promise<CpuWorkerProbe> {
    const t = threadsHere(threads);
    return { ...t, ...await measureWasmSpeed(budgetMs, t.threads, simd ?? 'auto') };
  },
  // every engine worker's calls (src/model/worker-engine-wire.ts); dispose stops the pool's workers
  // (CpuEngine.dispose closes the kernels), the page then terminates this worker
  ...layerEngineApi<CpuEngineStats>(need, async () => { await engine?.dispose(); engine = undefined; }),
};

registerRemoteError(CpuUnsupportedError);
installErrorTransfer();
Comlink.expose(api);
