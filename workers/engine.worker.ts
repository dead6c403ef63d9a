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
import type { EngineWorkerApi, WorkerLoaded, WorkerLoadRequest } from '../src/gpu/worker-wire.ts';
import type { LayerRange } from '../src/model/engine-types.ts';
import { layerEngineApi } from '../src/model/worker-engine-wire.ts';
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
  runTokens: async (ids: number[], range: LayerRange, start: number): Promise<Float32Array> => {
    const out = await need().runTokens(ids, range, start);
    return Comlink.transfer(out, [out.buffer as ArrayBuffer]);
  },
  // every engine worker's calls (src/model/worker-engine-wire.ts)
  ...layerEngineApi<EngineStats>(need, async () => { await engine?.dispose(); engine = undefined; }),
};


installErrorTransfer();
Comlink.expose(api);
