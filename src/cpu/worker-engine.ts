// The page side of workers/cpu-engine.worker.ts: how the WASM engine's worker starts (and its probe), so
// generation never blocks the page and, where the page is cross-origin isolated, the worker runs the
// thread pool (a page's main thread may not Atomics.wait). Every engine call is the one worker proxy's
// (src/model/worker-engine-proxy.ts); dispose() closes the pool's workers, then this worker.
import * as Comlink from 'comlink';
import type { ModelSource } from '../model/types.ts';
import { installErrorTransfer, registerRemoteError } from '../model/worker-errors.ts';
import { WorkerEngineProxy } from '../model/worker-engine-proxy.ts';
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

export class CpuWorkerEngine extends WorkerEngineProxy<CpuEngineStats, CpuWorkerLoaded> {
  private constructor(remote: Comlink.Remote<CpuEngineWorkerApi>, worker: Worker, info: CpuWorkerLoaded) {
    super(remote, worker, info);
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
}
