// The engine worker: owns the GPUDevice and one WebGPUEngine, exposed with comlink. The page talks to it
// through src/gpu/worker-engine.ts (a LayerEngine). Weights are fetched here (ranged reads of only this
// device's tensors), so they never cross the worker boundary.
import * as Comlink from 'comlink';
import { requestAdapter, summarizeAdapter } from '../src/gpu/adapter.ts';
import { createWebGPUEngine } from '../src/gpu/create-engine.ts';
import { requestEngineDevice } from '../src/gpu/device.ts';
import type { EngineStats, WebGPUEngine } from '../src/gpu/engine.ts';
import { installErrorTransfer } from '../src/gpu/worker-errors.ts';
import type { EngineWorkerApi, WireConstraint, WirePick, WorkerLoaded, WorkerLoadRequest } from '../src/gpu/worker-wire.ts';
import type { LayerRange, RowCandidates, SamplingOptions, TokenConstraint } from '../src/model/engine-types.ts';
import { EngineUsageError } from '../src/model/engine-errors.ts';
import { loadWeights } from '../src/model/load-weights.ts';
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
    const weights = await loadWeights(source, {
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
  async sampleAndRun(hidden: Float32Array, opts: SamplingOptions, constraint: WireConstraint | undefined, range: LayerRange): Promise<WirePick & { hidden: Float32Array }> {
    let rows: Float32Array = new Float32Array(0);
    const pick = await reporting(constraint, async (c) => {
      const r = await need().sampleAndRun(hidden, opts, c, range);
      rows = r.hidden;
      return r.token;
    });
    return Comlink.transfer({ ...pick, hidden: rows }, [rows.buffer as ArrayBuffer]);
  },
  /** Each row's candidates and whether its top choice was overruled (the row asked with `report`). */
  async scoreRows(hidden: Float32Array, rows: { opts: SamplingOptions; constraint?: WireConstraint }[]): Promise<(RowCandidates & { overruled: boolean })[]> {
    const flags = rows.map(() => false);
    const local = rows.map((r, i) => {
      const c = r.constraint;
      if (!c) return { opts: r.opts };
      const { report, ...plain } = c;
      return { opts: r.opts, constraint: report ? { ...plain, overruled: () => { flags[i] = true; } } : plain };
    });
    const out = await need().scoreRows(hidden, local);
    return out.map((c, i) => ({ ...c, overruled: flags[i]! }));
  },
  async logits(hidden: Float32Array): Promise<Float32Array> {
    const out = await need().logits(hidden);
    return Comlink.transfer(out, [out.buffer as ArrayBuffer]);
  },
  sample: (hidden: Float32Array, opts: SamplingOptions, constraint?: WireConstraint): Promise<WirePick> =>
    reporting(constraint, (c) => need().sample(hidden, opts, c)),
  decodeToken: (id: number, opts: SamplingOptions, constraint?: WireConstraint): Promise<WirePick> =>
    reporting(constraint, (c) => need().decodeToken(id, opts, c)),
  stats: (): EngineStats => need().stats(),
  async dispose(): Promise<void> {
    await engine?.dispose();
    engine = undefined;
  },
};

async function reporting(constraint: WireConstraint | undefined, pick: (c: TokenConstraint | undefined) => Promise<number>): Promise<WirePick> {
  let overruled = false;
  const c: TokenConstraint | undefined = constraint && { ...constraint, ...(constraint.report ? { overruled: () => { overruled = true; } } : {}) };
  return { id: await pick(c), overruled };
}

installErrorTransfer();
Comlink.expose(api);
