// The page side of workers/engine.worker.ts: a LayerEngine whose work runs in the worker. kvLength() is
// synchronous in the contract, so it is mirrored here after every call that changes the cache.
import * as Comlink from 'comlink';
import type { DecodeRequest, LayerEngine, LayerRange, RowCandidates, RowSampling } from '../model/engine-types.ts';
import type { LoadProgress } from '../model/types.ts';
import { toWire } from '../model/row-wire.ts';
import type { EngineWorkerApi, WorkerLoaded, WorkerLoadRequest } from './worker-wire.ts';
import type { EngineStats } from './engine.ts';
import { installErrorTransfer } from './worker-errors.ts';

export class WorkerEngine implements LayerEngine {
  readonly range: LayerRange;
  readonly hasEmbedding: boolean;
  readonly hasHead: boolean;
  readonly recurrent: boolean;
  private kv = 0;

  private constructor(private readonly remote: Comlink.Remote<EngineWorkerApi>, private readonly worker: Worker, readonly info: WorkerLoaded) {
    this.range = info.range;
    this.hasEmbedding = info.hasEmbedding;
    this.hasHead = info.hasHead;
    this.recurrent = info.recurrent;
  }

  /** Start a worker, load `req` into it and return the engine. */
  static async start(req: WorkerLoadRequest, onProgress?: (p: LoadProgress & { phase: 'fetch' | 'upload' }) => void): Promise<WorkerEngine> {
    installErrorTransfer();
    const worker = new Worker(new URL('../../workers/engine.worker.ts', import.meta.url), { type: 'module', name: 'pooled-engine' });
    const remote = Comlink.wrap<EngineWorkerApi>(worker);
    try {
      const info = await remote.load(req, onProgress ? Comlink.proxy(onProgress) : undefined);
      return new WorkerEngine(remote, worker, info);
    } catch (e) {
      worker.terminate();
      throw e;
    }
  }

  kvLength(): number {
    return this.kv;
  }

  async truncate(length: number): Promise<void> {
    await this.remote.truncate(length);
    this.kv = await this.remote.kvLength();
  }

  snapshot(position: number): Promise<void> {
    return this.remote.snapshot(position);
  }

  releaseSnapshot(position: number): Promise<void> {
    return this.remote.releaseSnapshot(position);
  }

  embed(ids: number[]): Promise<Float32Array> {
    return this.remote.embed(ids);
  }

  async runLayers(range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array> {
    try {
      return await this.remote.runLayers(range, start, hidden);
    } finally {
      this.kv = await this.remote.kvLength();
    }
  }

  /** embed + runLayers in the worker's one submit per chunk (WebGPUEngine.runTokens). */
  async runTokens(ids: number[], range: LayerRange, start: number): Promise<Float32Array> {
    try {
      return await this.remote.runTokens(ids, range, start);
    } finally {
      this.kv = await this.remote.kvLength();
    }
  }

  /** Pick + this engine's layers on the pick in one submit in the worker (WebGPUEngine.sampleAndRun). */
  async sampleAndRun(hidden: Float32Array, row: RowSampling, range: LayerRange): Promise<{ token: number; candidates: RowCandidates; hidden: Float32Array }> {
    try {
      const { overruled, ...r } = await this.remote.sampleAndRun(hidden, toWire(row), range);
      if (overruled) row.constraint?.overruled?.();
      return r;
    } finally {
      this.kv = await this.remote.kvLength();
    }
  }

  /** The decode call in the worker (WebGPUEngine.decode: one submit for a fed token); overrules reported back per row. */
  async decode(request: DecodeRequest): Promise<RowCandidates[]> {
    try {
      const { tokens, hidden, ahead } = request;
      const out = await this.remote.decode({ ...(tokens ? { tokens: [...tokens] } : {}), ...(hidden ? { hidden } : {}), ...(ahead ? { ahead } : {}), rows: request.rows.map(toWire) });
      return out.map(({ overruled, ...c }, i) => {
        if (overruled) request.rows[i]!.constraint?.overruled?.();
        return c;
      });
    } finally {
      if (request.tokens) this.kv = await this.remote.kvLength();
    }
  }

  /** Raw logits of hidden's last row (WebGPUEngine.logits). */
  logits(hidden: Float32Array): Promise<Float32Array> {
    return this.remote.logits(hidden);
  }

  stats(): Promise<EngineStats> {
    return this.remote.stats();
  }

  async dispose(): Promise<void> {
    try {
      await this.remote.dispose();
    } finally {
      this.remote[Comlink.releaseProxy]();
      this.worker.terminate();
    }
  }
}
