// The page side of workers/cpu-engine.worker.ts: a LayerEngine whose work runs in the WASM engine's
// worker, so generation never blocks the page and, where the page is cross-origin isolated, the worker
// runs the thread pool (a page's main thread may not Atomics.wait). kvLength() is synchronous in the
// contract, so it is mirrored here after every call that changes the cache. Errors arrive as the same
// typed errors (src/model/worker-errors.ts). dispose() closes the pool's workers, then this worker.
import * as Comlink from 'comlink';
import type { DecodeRequest, LayerEngine, LayerRange, RowCandidates, RowSampling } from '../model/engine-types.ts';
import { toWire } from '../model/row-wire.ts';
import type { ModelSource } from '../model/types.ts';
import { installErrorTransfer, registerRemoteError } from '../model/worker-errors.ts';
import type { CpuEngineStats } from './engine.ts';
import { CpuUnsupportedError } from './errors.ts';
import type { SimdChoice } from './simd-path.ts';
import type { CpuEngineWorkerApi, CpuLoadPhase, CpuPageSource, CpuWorkerLoaded, CpuWorkerLoadRequest, CpuWorkerProbe } from './worker-wire.ts';

function startWorker(): { worker: Worker; remote: Comlink.Remote<CpuEngineWorkerApi> } {
  registerRemoteError(CpuUnsupportedError);
  installErrorTransfer();
  const worker = new Worker(new URL('../../workers/cpu-engine.worker.ts', import.meta.url), { type: 'module', name: 'pooled-cpu-engine' });
  return { worker, remote: Comlink.wrap<CpuEngineWorkerApi>(worker) };
}

/** A page source the worker may read through (only for sources only the page can reach). */
function exposeSource(s: ModelSource): CpuPageSource {
  return Comlink.proxy({
    label: s.label, ...(s.modelFile !== undefined ? { modelFile: s.modelFile } : {}), hasSize: Boolean(s.size),
    readFile: (path, opts) => s.readFile(path, opts),
    readRange: (path, start, end) => s.readRange(path, start, end),
    exists: (path) => s.exists(path),
    size: (path) => s.size!(path),
  } satisfies CpuPageSource);
}

/** Rejects with the signal's reason once it aborts (the caller then terminates the worker). */
function whenAborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (!signal) return;
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

export class CpuWorkerEngine implements LayerEngine {
  readonly range: LayerRange;
  readonly hasEmbedding: boolean;
  readonly hasHead: boolean;
  readonly recurrent: boolean;
  private kv = 0;

  private constructor(private readonly remote: Comlink.Remote<CpuEngineWorkerApi>, private readonly worker: Worker, readonly info: CpuWorkerLoaded) {
    this.range = info.range;
    this.hasEmbedding = info.hasEmbedding;
    this.hasHead = info.hasHead;
    this.recurrent = info.recurrent;
  }

  /**
   * Start a worker and load `req` into it: from req.model read in the worker, else through `source` (the
   * page's, for what only the page reaches). An abort of `signal` terminates the worker and rejects.
   */
  static async start(req: CpuWorkerLoadRequest, opts: { source?: ModelSource; onProgress?: (p: CpuLoadPhase) => void; signal?: AbortSignal } = {}): Promise<CpuWorkerEngine> {
    const { worker, remote } = startWorker();
    try {
      // the worker is another global: the page's ?simd= and ?cpu-activations= come in the request
      const loading = remote.load(req, opts.source ? exposeSource(opts.source) : undefined, opts.onProgress ? Comlink.proxy(opts.onProgress) : undefined);
      const info = await Promise.race([loading, whenAborted(opts.signal)]);
      return new CpuWorkerEngine(remote, worker, info);
    } catch (e) {
      remote[Comlink.releaseProxy]();
      worker.terminate();
      throw e;
    }
  }

  /** The WASM probe in a fresh worker, on the threads an engine there would run; the worker is gone after. */
  static async probe(budgetMs: number, threads: number, simd: SimdChoice = 'auto'): Promise<CpuWorkerProbe> {
    const { worker, remote } = startWorker();
    try {
      return await remote.probe(budgetMs, threads, simd);
    } finally {
      remote[Comlink.releaseProxy]();
      worker.terminate();
    }
  }

  /** Threads the worker's engine runs on, and whether the worker was cross-origin isolated. */
  get threads(): number {
    return this.info.threads;
  }

  kvLength(): number {
    return this.kv;
  }

  async truncate(length: number): Promise<void> {
    try {
      await this.remote.truncate(length);
    } finally {
      this.kv = await this.remote.kvLength();
    }
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

  async sampleAndRun(hidden: Float32Array, row: RowSampling, range: LayerRange): Promise<{ token: number; candidates: RowCandidates; hidden: Float32Array }> {
    try {
      const { overruled, ...r } = await this.remote.sampleAndRun(hidden, toWire(row), range);
      if (overruled) row.constraint?.overruled?.();
      return r;
    } finally {
      this.kv = await this.remote.kvLength();
    }
  }

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

  logits(hidden: Float32Array): Promise<Float32Array> {
    return this.remote.logits(hidden);
  }

  stats(): Promise<CpuEngineStats> {
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
