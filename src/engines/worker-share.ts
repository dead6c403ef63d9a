// A row's share loaded and its probe run in the one engine worker (workers/engine.worker.ts), from a
// page's main thread: what ./page-engines.ts sends there, a lazy import so the start page holds none of it.
import type { EngineOptions, EngineProbe, EngineRow, LoadedShare, ShareRequest } from './contract.ts';
import { registerRemoteError } from '../model/worker-errors.ts';
import { WorkerEngine } from '../model/worker-engine-proxy.ts';

/** The row's own error classes arrive as themselves. */
async function registerErrors(row: EngineRow): Promise<void> {
  for (const c of await row.errorClasses?.() ?? []) registerRemoteError(c);
}

/**
 * A model URL is read in the worker (through the device's cache, under the same key); a source only
 * the page reaches (the host's local folder, the host over the channel: model '') through the page.
 */
export async function loadInWorker(row: EngineRow, options: EngineOptions, { model, modelKey, source, request, ctx, kv }: ShareRequest): Promise<LoadedShare> {
  await registerErrors(row);
  const engine = await WorkerEngine.start({
    engine: row.kind, options, ...(model ? { model, cacheKey: modelKey } : {}), layers: request.layers,
    ...(request.embedding ? { embedding: true } : {}), ...(request.head ? { head: true } : {}), ctx, ...(kv ? { kv } : {}),
  }, {
    ...(model ? {} : { source }), ...(request.signal ? { signal: request.signal } : {}),
    ...(request.onProgress ? { onProgress: request.onProgress } : {}),
  });
  return { engine, hiddenSize: engine.info.hiddenSize, counts: engine.info.counts };
}

/** The row's probe in a fresh worker, on the threads an engine there would run. */
export async function probeInWorker(row: EngineRow, budgetMs: number, options: EngineOptions): Promise<EngineProbe> {
  await registerErrors(row);
  return WorkerEngine.probe(row.kind, budgetMs, options);
}
