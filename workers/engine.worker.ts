// The one engine worker: holds one engine of the table (src/engines/table.ts), made by the row its load
// request names, exposed with comlink; the page talks to it through src/model/worker-engine-proxy.ts (a
// LayerEngine). Off the page's main thread an engine may block (the WASM engine's pool: Atomics.wait) and
// never stalls the page. Weights are read here (ranged reads of only this share's tensors, streamed by
// the row's loader, through the device's IndexedDB cache), so they never cross to the page; only a
// source that only the page can reach (the host's local folder, the room's channel) is read through the
// page (EnginePageSource). Each row keeps its engine behind a lazy import, so this worker's own chunk
// holds the rows, not the engines.
import * as Comlink from 'comlink';
import type { EngineOptions, EngineRow } from '../src/engines/contract.ts';
import { ENGINES } from '../src/engines/table.ts';
import { EngineUsageError } from '../src/model/engine-errors.ts';
import type { LayerEngine } from '../src/model/engine-types.ts';
import { resolveModelSource } from '../src/model/sources/resolve.ts';
import type { ModelSource, ReadFileOptions } from '../src/model/types.ts';
import { layerEngineApi, type EnginePageSource, type EngineWorkerApi, type EngineWorkerLoadRequest, type WorkerHeldEngine } from '../src/model/worker-engine-wire.ts';
import { installErrorTransfer, registerRemoteError } from '../src/model/worker-errors.ts';
import { CachingSource, IndexedDbByteStore } from '../src/room/weight-cache.ts';

let engine: WorkerHeldEngine<unknown> | undefined;

function need(): WorkerHeldEngine<unknown> {
  if (!engine) throw new EngineUsageError('the engine worker has no model loaded: call load first');
  return engine;
}

/** The table's row named `kind`, with its own error classes registered (they cross as themselves). */
async function rowOf(kind: unknown): Promise<EngineRow> {
  if (typeof kind !== 'string' || !Object.hasOwn(ENGINES, kind)) {
    throw new EngineUsageError(`the engine worker knows no engine "${String(kind)}" (the table has ${Object.keys(ENGINES).join(', ')})`);
  }
  const row = ENGINES[kind]!;
  for (const c of await row.errorClasses?.() ?? []) registerRemoteError(c);
  return row;
}

/** A request's options as the row reads them: string values only (they crossed from another global). */
function optionsOf(o: unknown): EngineOptions {
  if (o === undefined) return {};
  if (typeof o !== 'object' || o === null || Object.values(o).some((v) => typeof v !== 'string')) {
    throw new EngineUsageError('the engine worker\'s options must be an object of strings');
  }
  return o as EngineOptions;
}

/** The page's source as a ModelSource (each call crosses to the page). */
function pageSource(p: EnginePageSource): ModelSource {
  return {
    label: p.label, ...(p.modelFile !== undefined ? { modelFile: p.modelFile } : {}),
    readFile: (path: string, opts?: ReadFileOptions) => p.readFile(path, opts),
    readRange: (path: string, start: number, end: number) => p.readRange(path, start, end),
    exists: (path: string) => p.exists(path),
    ...(p.hasSize ? { size: (path: string) => p.size(path) } : {}),
  };
}

async function sourceOf(req: EngineWorkerLoadRequest, page?: EnginePageSource): Promise<{ source: ModelSource; counts: { networkBytes: number; cacheBytes: number } }> {
  if (req.model === undefined) {
    if (!page) throw new EngineUsageError('the engine worker was given neither a model URL nor a source to read');
    return { source: pageSource(page), counts: { networkBytes: 0, cacheBytes: 0 } };
  }
  const inner = await resolveModelSource(req.model, req.hfEndpoint ? { hfEndpoint: req.hfEndpoint } : {});
  if (req.cacheKey === undefined) return { source: inner, counts: { networkBytes: 0, cacheBytes: 0 } };
  const cached = new CachingSource(inner, new IndexedDbByteStore(), req.cacheKey);
  return { source: cached, counts: cached.counts };
}

/** The engine as the wire needs it: every engine of ours has these calls; one without them cannot sit here. */
function held(e: LayerEngine, kind: string): WorkerHeldEngine<unknown> {
  const c = e as Partial<WorkerHeldEngine<unknown>>;
  if (typeof c.sampleAndRun !== 'function' || typeof c.logits !== 'function' || typeof c.stats !== 'function') {
    throw new EngineUsageError(`the ${kind} engine lacks sampleAndRun, logits or stats: it cannot run in the engine worker`);
  }
  return c as WorkerHeldEngine<unknown>;
}

const api: EngineWorkerApi = {
  async load(req, page, onProgress) {
    await engine?.dispose();
    engine = undefined;
    const row = await rowOf(req.engine);
    const { source, counts } = await sourceOf(req, page);
    // the row's own loader, here on this thread (streamed: at most LOAD_IN_FLIGHT_BYTES of weights in JS at once)
    const share = await row.loadShare(optionsOf(req.options))({
      model: req.model ?? '', modelKey: req.cacheKey ?? '', source, ctx: req.ctx, ...(req.kv ? { kv: req.kv } : {}),
      request: {
        layers: req.layers, ...(req.embedding ? { embedding: true } : {}), ...(req.head ? { head: true } : {}),
        ...(onProgress ? { onProgress: (p) => onProgress(p) } : {}),
      },
    });
    if (!share) throw new EngineUsageError(`the ${row.kind} row made no engine`);
    engine = held(share.engine, row.kind);
    return {
      range: engine.range, hasEmbedding: engine.hasEmbedding, hasHead: engine.hasHead, recurrent: engine.recurrent,
      hiddenSize: share.hiddenSize, counts: { ...counts },
      isolated: Boolean((globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated),
    };
  },
  async probe(kind, budgetMs, options) {
    return (await rowOf(kind)).probe(budgetMs, optionsOf(options));
  },
  // every engine's calls (src/model/worker-engine-wire.ts); dispose ends the engine (the WASM engine's
  // pool workers, the WebGPU engine's buffers), the page then terminates this worker
  ...layerEngineApi<unknown>(need, async () => { await engine?.dispose(); engine = undefined; }),
};

installErrorTransfer();
Comlink.expose(api);
