// The page side of workers/engine.worker.ts: a LayerEngine whose work runs in the worker. kvLength() is
// synchronous in the contract, so it is mirrored here after every call that changes the cache.
import * as Comlink from 'comlink';
import type { LayerEngine, LayerRange, RowCandidates, RowSampling, SamplingOptions, TokenConstraint } from '../model/engine-types.ts';
import type { LoadProgress } from '../model/types.ts';
import type { EngineWorkerApi, WireConstraint, WirePick, WorkerLoaded, WorkerLoadRequest } from './worker-wire.ts';
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
  async sampleAndRun(hidden: Float32Array, opts: SamplingOptions, constraint: TokenConstraint | undefined, range: LayerRange): Promise<{ token: number; hidden: Float32Array }> {
    try {
      const r = await this.remote.sampleAndRun(hidden, opts, toWire(constraint), range);
      return { token: picked(r, constraint), hidden: r.hidden };
    } finally {
      this.kv = await this.remote.kvLength();
    }
  }

  /** Every row's candidates in one submit in the worker (WebGPUEngine.scoreRows); overrules reported back per row. */
  async scoreRows(hidden: Float32Array, rows: readonly RowSampling[]): Promise<RowCandidates[]> {
    const out = await this.remote.scoreRows(hidden, rows.map((r) => {
      const c = toWire(r.constraint);
      return c ? { opts: r.opts, constraint: c } : { opts: r.opts };
    }));
    return out.map(({ overruled, ...c }, i) => {
      if (overruled) rows[i]!.constraint?.overruled?.();
      return c;
    });
  }

  logits(hidden: Float32Array): Promise<Float32Array> {
    return this.remote.logits(hidden);
  }

  async sample(hidden: Float32Array, opts: SamplingOptions, constraint?: TokenConstraint): Promise<number> {
    return picked(await this.remote.sample(hidden, opts, toWire(constraint)), constraint);
  }

  /** One decode token in one submit in the worker (see WebGPUEngine.decodeToken). */
  async decodeToken(id: number, opts: SamplingOptions, constraint?: TokenConstraint): Promise<number> {
    try {
      return picked(await this.remote.decodeToken(id, opts, toWire(constraint)), constraint);
    } finally {
      this.kv = await this.remote.kvLength();
    }
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

/** The constraint without its callback (functions cannot cross to the worker): `report` asks for it instead. */
function toWire(c: TokenConstraint | undefined): WireConstraint | undefined {
  if (!c) return undefined;
  const { overruled, ...plain } = c;
  return overruled ? { ...plain, report: true } : plain;
}

/** The worker's pick, with the overruled report passed on to the caller's constraint. */
function picked(pick: WirePick, c: TokenConstraint | undefined): number {
  if (pick.overruled) c?.overruled?.();
  return pick.id;
}
