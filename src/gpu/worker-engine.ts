// The page side of workers/engine.worker.ts: how the WebGPU engine's worker starts, and the fused
// runTokens only it has; every other call is the one worker proxy's (src/model/worker-engine-proxy.ts).
import * as Comlink from 'comlink';
import type { LayerRange } from '../model/engine-types.ts';
import type { LoadProgress } from '../model/types.ts';
import { WorkerEngineProxy } from '../model/worker-engine-proxy.ts';
import type { EngineWorkerApi, WorkerLoaded, WorkerLoadRequest } from './worker-wire.ts';
import type { EngineStats } from './engine.ts';
import { installErrorTransfer } from './worker-errors.ts';

export class WorkerEngine extends WorkerEngineProxy<EngineStats, WorkerLoaded> {
  private constructor(private readonly gpu: Comlink.Remote<EngineWorkerApi>, worker: Worker, info: WorkerLoaded) {
    super(gpu, worker, info);
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

  /** embed + runLayers in the worker's one submit per chunk (WebGPUEngine.runTokens). */
  runTokens(ids: number[], range: LayerRange, start: number): Promise<Float32Array> {
    return this.mirrored(() => this.gpu.runTokens(ids, range, start));
  }
}
