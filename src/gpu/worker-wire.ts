// What crosses between the page (./worker-engine.ts) and the engine worker (workers/engine.worker.ts):
// the load request and its answer, the worker's API as comlink exposes it, and a token constraint and
// pick in a form that can be cloned. Here in src/gpu so the page side never imports the worker's module.
import type { LayerRange } from '../model/engine-types.ts';
import type { LayerEngineWorkerApi } from '../model/worker-engine-wire.ts';
import type { LoadProgress } from '../model/types.ts';
import type { AdapterInfoSummary } from './adapter.ts';
import type { EngineStats } from './engine.ts';
import type { TopkLayout } from './tuning.ts';

export interface WorkerLoadRequest {
  model: string;               // URL of the model folder or an HF id
  layers: LayerRange;
  embedding?: boolean;
  head?: boolean;
  ctx?: number;
  useF16?: boolean;
  maxBindingBytes?: number;
  /** The head's top-k layout instead of the adapter's (benches). */
  topk?: TopkLayout;
}

export interface WorkerLoaded {
  range: LayerRange;
  hasEmbedding: boolean;
  hasHead: boolean;
  adapter: AdapterInfoSummary;
  vocabSize: number;
  hiddenSize: number;
  recurrent: boolean;
}

export type { WireConstraint, WireRow } from '../model/row-wire.ts';

/** The engine worker's API (one WebGPUEngine behind it): every engine worker's calls, its load and runTokens. */
export interface EngineWorkerApi extends LayerEngineWorkerApi<EngineStats> {
  load(req: WorkerLoadRequest, onProgress?: (p: LoadProgress & { phase: 'fetch' | 'upload' }) => void): Promise<WorkerLoaded>;
  runTokens(ids: number[], range: LayerRange, start: number): Promise<Float32Array>;
}
