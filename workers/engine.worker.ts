// The engine worker: owns the GPUDevice and one WebGPUEngine, exposed with comlink. The page talks to it
// through src/gpu/worker-engine.ts (a LayerEngine). Weights are fetched here (ranged reads of only this
// device's tensors), so they never cross the worker boundary, and streamed (openWeights): each piece is
// written into its GPU buffer as it arrives, at most LOAD_IN_FLIGHT_BYTES in JS at once.
import * as Comlink from 'comlink';
import { requestAdapter, summarizeAdapter } from '../src/gpu/adapter.ts';
import { createWebGPUEngine } from '../src/gpu/create-engine.ts';
import { requestEngineDevice } from '../src/gpu/device.ts';
import type { EngineStats, WebGPUEngine } from '../src/gpu/engine.ts';
import { installErrorTransfer } from '../src/gpu/worker-errors.ts';
import type { EngineWorkerApi, WireRow, WorkerLoaded, WorkerLoadRequest } from '../src/gpu/worker-wire.ts';
import type { LayerRange, RowCandidates } from '../src/model/engine-types.ts';
import { fromWire } from '../src/model/row-wire.ts';
import { EngineUsageError } from '../src/model/engine-errors.ts';
import { openWeights } from '../src/model/load-weights.ts';
import { resolveModelSource } from '../src/model/sources/resolve.ts';
import type { LoadProgress } from '../src/model/types.ts';

let engine: WebGPUEngine | undefined;

function need(): WebGPUEngine {
  if (!engine) throw new EngineUsageError('the engine worker has no model loaded: call load first');
  return engine;
}

const api: EngineWorkerApi = {
  async load(req: WorkerLoadRequest, onProgress?: (p: LoadProgress & { phase: 'fetch' | 'upload' }) => void): Promise<WorkerLoaded> {
    await engine?.dispose();
    engine = undefined;
    const adapter = await requestAdapter();
    const device = await requestEngineDevice({ adapter, useF16: req.useF16 });
    const source = await resolveModelSource(req.model);
    const weights = await openWeights(source, {
      layers: req.layers, embedding: req.embedding, head: req.head,
      onProgress: (p) => onProgress?.({ ...p, phase: 'fetch' }),
    });
    engine = await createWebGPUEngine(weights, {
      device, ctx: req.ctx, useF16: req.useF16, maxBindingBytes: req.maxBindingBytes, ...(req.topk ? { topk: req.topk } : {}),
      onProgress: (p) => onProgress?.({ ...p, phase: 'upload' }),
    });
    return {
      range: engine.range, hasEmbedding: engine.hasEmbedding, hasHead: engine.hasHead,
      adapter: summarizeAdapter(adapter), vocabSize: weights.config.vocabSize, hiddenSize: weights.config.hiddenSize, recurrent: engine.recurrent,
    };
  },
  kvLength: (): number => need().kvLength(),
  truncate: (length: number): Promise<void> => need().truncate(length),
  snapshot: (position: number): Promise<void> => need().snapshot(position),
  releaseSnapshot: (position: number): Promise<void> => need().releaseSnapshot(position),
  async embed(ids: number[]): Promise<Float32Array> {
    const out = await need().embed(ids);
    return Comlink.transfer(out, [out.buffer as ArrayBuffer]);
  },
  async runLayers(range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array> {
    const out = await need().runLayers(range, start, hidden);
    return Comlink.transfer(out, [out.buffer as ArrayBuffer]);
  },
  async runTokens(ids: number[], range: LayerRange, start: number): Promise<Float32Array> {
    const out = await need().runTokens(ids, range, start);
    return Comlink.transfer(out, [out.buffer as ArrayBuffer]);
  },
  /** Pick + this engine's layers on the pick (WebGPUEngine.sampleAndRun); the row's overrule reported back. */
  async sampleAndRun(hidden: Float32Array, row: WireRow, range: LayerRange): Promise<{ token: number; candidates: RowCandidates; overruled: boolean; hidden: Float32Array }> {
    const flags = [false];
    const r = await need().sampleAndRun(hidden, fromWire(row, flags, 0), range);
    return Comlink.transfer({ token: r.token, candidates: r.candidates, overruled: flags[0]!, hidden: r.hidden }, [r.hidden.buffer as ArrayBuffer]);
  },
  /** The decode call (WebGPUEngine.decode): each row's candidates and whether its top choice was overruled (the row asked with `report`). */
  async decode(request: { tokens?: number[]; hidden?: Float32Array; rows: WireRow[]; ahead?: boolean }): Promise<(RowCandidates & { overruled: boolean })[]> {
    const flags = request.rows.map(() => false);
    const out = await need().decode({ ...request, rows: request.rows.map((r, i) => fromWire(r, flags, i)) });
    return out.map((c, i) => ({ ...c, overruled: flags[i]! }));
  },
  async logits(hidden: Float32Array): Promise<Float32Array> {
    const out = await need().logits(hidden);
    return Comlink.transfer(out, [out.buffer as ArrayBuffer]);
  },
  stats: (): EngineStats => need().stats(),
  async dispose(): Promise<void> {
    await engine?.dispose();
    engine = undefined;
  },
};


installErrorTransfer();
Comlink.expose(api);
