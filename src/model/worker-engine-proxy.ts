// The page side of the one engine worker (workers/engine.worker.ts), whichever engine of the table it
// holds: starts the worker, loads a share into the engine the request's row makes there, and is a
// LayerEngine whose work runs in the worker. kvLength() is synchronous in the contract, so it is mirrored
// here after every call that may change the cache, in a `finally`: a call that failed part-way (a
// truncate refused for a missing snapshot, a layer that threw) still leaves the mirror equal to the
// worker's cache. Errors arrive as the same typed errors (./worker-errors.ts; an engine's own classes
// once registered). The worker may also run a row's probe (probe below), on the threads an engine
// there would run.
import * as Comlink from 'comlink';
import type { EngineKind, EngineOptions, EngineProbe } from '../engines/contract.ts';
import type { DecodeRequest, LayerEngine, LayerRange, RowCandidates, RowSampling } from './engine-types.ts';
import { toWire } from './row-wire.ts';
import type { LoadProgress, ModelSource } from './types.ts';
import type { EnginePageSource, EngineWorkerApi, EngineWorkerLoaded, EngineWorkerLoadRequest } from './worker-engine-wire.ts';
import { installErrorTransfer } from './worker-errors.ts';

function startWorker(): { worker: Worker; remote: Comlink.Remote<EngineWorkerApi> } {
  installErrorTransfer();
  const worker = new Worker(new URL('../../workers/engine.worker.ts', import.meta.url), { type: 'module', name: 'pooled-engine' });
  return { worker, remote: Comlink.wrap<EngineWorkerApi>(worker) };
}

/** A page source the worker may read through (only for sources only the page can reach). */
function exposeSource(s: ModelSource): EnginePageSource {
  return Comlink.proxy({
    label: s.label, ...(s.modelFile !== undefined ? { modelFile: s.modelFile } : {}), hasSize: Boolean(s.size),
    readFile: (path, opts) => s.readFile(path, opts),
    readRange: (path, start, end) => s.readRange(path, start, end),
    exists: (path) => s.exists(path),
    size: (path) => s.size!(path),
  } satisfies EnginePageSource);
}

/** Rejects with the signal's reason once it aborts (the caller then terminates the worker). */
function whenAborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (!signal) return;
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

export class WorkerEngine<Stats = unknown> implements LayerEngine {
  readonly range: LayerRange;
  readonly hasEmbedding: boolean;
  readonly hasHead: boolean;
  readonly recurrent: boolean;
  private kv = 0;

  private constructor(private readonly remote: Comlink.Remote<EngineWorkerApi<Stats>>, private readonly worker: Worker, readonly info: EngineWorkerLoaded) {
    this.range = info.range;
    this.hasEmbedding = info.hasEmbedding;
    this.hasHead = info.hasHead;
    this.recurrent = info.recurrent;
  }

  /**
   * Start a worker and load `req` into the engine of its row there: from req.model read in the worker,
   * else through `source` (the page's, for what only the page reaches). An abort of `signal` terminates
   * the worker and rejects.
   */
  static async start<Stats = unknown>(req: EngineWorkerLoadRequest, opts: { source?: ModelSource; onProgress?: (p: LoadProgress) => void; signal?: AbortSignal } = {}): Promise<WorkerEngine<Stats>> {
    const { worker, remote } = startWorker();
    try {
      // the worker is another global: the row's options come in the request
      const loading = remote.load(req, opts.source ? exposeSource(opts.source) : undefined, opts.onProgress ? Comlink.proxy(opts.onProgress) : undefined);
      const info = await Promise.race([loading, whenAborted(opts.signal)]);
      return new WorkerEngine<Stats>(remote as Comlink.Remote<EngineWorkerApi<Stats>>, worker, info);
    } catch (e) {
      remote[Comlink.releaseProxy]();
      worker.terminate();
      throw e;
    }
  }

  /** The row's probe in a fresh worker, on the threads an engine there would run; the worker is gone after. */
  static async probe(engine: EngineKind, budgetMs: number, options: EngineOptions): Promise<EngineProbe> {
    const { worker, remote } = startWorker();
    try {
      return await remote.probe(engine, budgetMs, options);
    } finally {
      remote[Comlink.releaseProxy]();
      worker.terminate();
    }
  }

  kvLength(): number {
    return this.kv;
  }

  /** Runs `call`, then reads the worker's cache length back whatever happened. */
  private async mirrored<T>(call: () => Promise<T>): Promise<T> {
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

  /** embed + runLayers in one message (the WebGPU engine's one submit per chunk). */
  runTokens(ids: number[], range: LayerRange, start: number): Promise<Float32Array> {
    return this.mirrored(() => this.remote.runTokens(ids, range, start));
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

  /** Once only: a room's engine and its host share may both hold this engine, and a released proxy throws on any call. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    try {
      await this.remote.dispose();
    } finally {
      this.remote[Comlink.releaseProxy]();
      this.worker.terminate();
    }
  }
  private disposed = false;
}
