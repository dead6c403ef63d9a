// The page side of an engine worker, whichever engine it holds (the WebGPU engine's, src/gpu/worker-engine.ts;
// the WASM engine's, src/cpu/worker-engine.ts, which add only how their worker starts): a LayerEngine
// whose work runs in the worker. kvLength() is synchronous in the contract, so it is mirrored here after
// every call that may change the cache, in a `finally`: a call that failed part-way (a truncate refused
// for a missing snapshot, a layer that threw) still leaves the mirror equal to the worker's cache.
// Errors arrive as the same typed errors (./worker-errors.ts).
import * as Comlink from 'comlink';
import type { DecodeRequest, LayerEngine, LayerRange, RowCandidates, RowSampling } from './engine-types.ts';
import { toWire } from './row-wire.ts';
import type { LayerEngineWorkerApi } from './worker-engine-wire.ts';

/** What every worker's load answers about the engine it made. */
export interface WorkerEngineInfo {
  range: LayerRange;
  hasEmbedding: boolean;
  hasHead: boolean;
  recurrent: boolean;
}

export class WorkerEngineProxy<Stats, Info extends WorkerEngineInfo> implements LayerEngine {
  readonly range: LayerRange;
  readonly hasEmbedding: boolean;
  readonly hasHead: boolean;
  readonly recurrent: boolean;
  protected kv = 0;

  protected constructor(protected readonly remote: Comlink.Remote<LayerEngineWorkerApi<Stats>>, protected readonly worker: Worker, readonly info: Info) {
    this.range = info.range;
    this.hasEmbedding = info.hasEmbedding;
    this.hasHead = info.hasHead;
    this.recurrent = info.recurrent;
  }

  kvLength(): number {
    return this.kv;
  }

  /** Runs `call`, then reads the worker's cache length back whatever happened. */
  protected async mirrored<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } finally {
      this.kv = await this.remote.kvLength();
    }
  }

  truncate(length: number): Promise<void> {
    return this.mirrored(() => this.remote.truncate(length));
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

  runLayers(range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array> {
    return this.mirrored(() => this.remote.runLayers(range, start, hidden));
  }

  /** Pick + this engine's layers on the pick in the worker (LayerEngine.sampleAndRun). */
  sampleAndRun(hidden: Float32Array, row: RowSampling, range: LayerRange): Promise<{ token: number; candidates: RowCandidates; hidden: Float32Array }> {
    return this.mirrored(async () => {
      const { overruled, ...r } = await this.remote.sampleAndRun(hidden, toWire(row), range);
      if (overruled) row.constraint?.overruled?.();
      return r;
    });
  }

  /** The decode call in the worker; overrules reported back per row. Only fed tokens change the cache. */
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

  /** Raw logits of hidden's last row. */
  logits(hidden: Float32Array): Promise<Float32Array> {
    return this.remote.logits(hidden);
  }

  stats(): Promise<Stats> {
    return this.remote.stats() as Promise<Stats>;
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
