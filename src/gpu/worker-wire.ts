// What crosses between the page (./worker-engine.ts) and the engine worker (workers/engine.worker.ts):
// the load request and its answer, the worker's API as comlink exposes it, and a token constraint and
// pick in a form that can be cloned. Here in src/gpu so the page side never imports the worker's module.
import type { LayerRange, RowCandidates } from '../model/engine-types.ts';
import type { WireRow } from '../model/row-wire.ts';
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

/** The engine worker's API (one WebGPUEngine behind it); Float32Array results are transferred. */
export interface EngineWorkerApi {
  load(req: WorkerLoadRequest, onProgress?: (p: LoadProgress & { phase: 'fetch' | 'upload' }) => void): Promise<WorkerLoaded>;
  kvLength(): number;
  truncate(length: number): Promise<void>;
  snapshot(position: number): Promise<void>;
  releaseSnapshot(position: number): Promise<void>;
  embed(ids: number[]): Promise<Float32Array>;
  runLayers(range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array>;
  runTokens(ids: number[], range: LayerRange, start: number): Promise<Float32Array>;
  /** Pick + this engine's layers on the pick (WebGPUEngine.sampleAndRun); the row's overrule reported back. */
  sampleAndRun(hidden: Float32Array, row: WireRow, range: LayerRange): Promise<{ token: number; candidates: RowCandidates; overruled: boolean; hidden: Float32Array }>;
  /** The decode call (WebGPUEngine.decode): each row's candidates and whether its top choice was overruled (the row asked with `report`). */
  decode(request: { tokens?: number[]; hidden?: Float32Array; rows: WireRow[]; ahead?: boolean }): Promise<(RowCandidates & { overruled: boolean })[]>;
  logits(hidden: Float32Array): Promise<Float32Array>;
  stats(): EngineStats;
  dispose(): Promise<void>;
}
