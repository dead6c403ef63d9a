// What crosses between the page (./worker-engine.ts) and the WASM engine's worker
// (workers/cpu-engine.worker.ts): the load request and its answer, the probe, and the worker's API as
// comlink exposes it. Here in src/cpu so the page side never imports the worker's module. Decode rows
// cross as src/model/row-wire.ts's WireRow (shared with the WebGPU engine's worker).
import type { KvCacheType } from '../model/kv-quant.ts';
import type { LayerRange } from '../model/engine-types.ts';
import type { LayerEngineWorkerApi } from '../model/worker-engine-wire.ts';
import type { LoadProgress, ReadFileOptions } from '../model/types.ts';
import type { CpuEngineStats } from './engine.ts';
import type { CpuActivations, SimdChoice, SimdPath } from './simd-path.ts';

export interface CpuWorkerLoadRequest {
  /**
   * URL of the model (folder, .gguf, or an HF id): the worker resolves it and reads only this share's
   * tensors itself. Absent: it reads through the page's source (CpuPageSource; the host's local folder,
   * or the host over the room's channel, which only the page can reach).
   */
  model?: string;
  /** The Hugging Face endpoint for an HF id (resolveModelSource's hfEndpoint). */
  hfEndpoint?: string;
  /** The device's weight cache key (IndexedDB, as the page's CachingSource keys it); absent: no cache. */
  cacheKey?: string;
  layers: LayerRange;
  embedding?: boolean;
  head?: boolean;
  ctx?: number;
  kv?: KvCacheType;
  /** The most threads wanted (the worker runs one unless it is cross-origin isolated). */
  threads: number;
  /** The kernels' SIMD build (the page's ?simd=; 'auto': relaxed where the worker validates it). */
  simd?: SimdChoice;
  /** The linears' activations (the page's ?cpu-activations=; absent: f32). */
  activations?: CpuActivations;
}

/** The page's ModelSource as the worker reads it (a comlink proxy: every call answers a promise). */
export interface CpuPageSource {
  label: string;
  modelFile?: string;
  hasSize: boolean;
  readFile(path: string, opts?: ReadFileOptions): Promise<Uint8Array>;
  readRange(path: string, start: number, end: number): Promise<Uint8Array>;
  exists(path: string): Promise<boolean>;
  size(path: string): Promise<number>;
}

/** Where the worker's threads come from: `isolated` is the worker's own crossOriginIsolated. */
export interface CpuWorkerThreads {
  threads: number;
  isolated: boolean;
}

export interface CpuWorkerLoaded extends CpuWorkerThreads {
  range: LayerRange;
  hasEmbedding: boolean;
  hasHead: boolean;
  recurrent: boolean;
  vocabSize: number;
  hiddenSize: number;
  /** Bytes the worker's own cached source read from the network and from the device's cache. */
  counts: { networkBytes: number; cacheBytes: number };
}

/** The probe's answer: GFLOP/s of an f32 matvec on the WASM kernels, on the threads the engine would run. */
export interface CpuWorkerProbe extends CpuWorkerThreads {
  speed: number;
  /** The build the probe ran (the one the engine will load). */
  simd: SimdPath;
}

export type CpuLoadPhase = LoadProgress & { phase: 'fetch' | 'place' };

/** The worker's API (one CpuEngine behind it): every engine worker's calls, its load and the probe. */
export interface CpuEngineWorkerApi extends LayerEngineWorkerApi<CpuEngineStats> {
  load(req: CpuWorkerLoadRequest, source?: CpuPageSource, onProgress?: (p: CpuLoadPhase) => void): Promise<CpuWorkerLoaded>;
  probe(budgetMs: number, threads: number, simd?: SimdChoice): Promise<CpuWorkerProbe>;
}
