// What crosses between the page and the one engine worker (workers/engine.worker.ts), whichever engine
// of the table (src/engines/table.ts) it holds: the load request and its answer, the probe, the page's
// source the worker may read through, and the engine's calls. Page side: ./worker-engine-proxy.ts;
// worker side: layerEngineApi below plus the worker's load and probe. Decode rows cross as
// ./row-wire.ts's WireRow; Float32Array results are transferred, not copied.
import * as Comlink from 'comlink';
import type { EngineKind, EngineOptions, EngineProbe, ShareCounts } from '../engines/contract.ts';
import { runTokens, type LayerEngine, type LayerRange, type RowCandidates } from './engine-types.ts';
import type { KvCacheType } from './kv-quant.ts';
import type { LoadProgress, ReadFileOptions } from './types.ts';
import { fromWire, type WireRow } from './row-wire.ts';

/** One share for the worker to load into the engine its row (`engine`) makes. */
export interface EngineWorkerLoadRequest {
  /** The table's row whose engine the worker makes (checked against the table there). */
  engine: EngineKind;
  /** The row's options (the page's ?simd=…; a bench's own, e.g. the WebGPU row's f16=off). */
  options: EngineOptions;
  /**
   * URL of the model (folder, .gguf, or an HF id): the worker resolves it and reads only this share's
   * tensors itself. Absent: it reads through the page's source (EnginePageSource; the host's local
   * folder, or the host over the room's channel, which only the page can reach).
   */
  model?: string;
  /** The Hugging Face endpoint for an HF id (resolveModelSource's hfEndpoint). */
  hfEndpoint?: string;
  /** The device's weight cache key (IndexedDB, as the page's CachingSource keys it); absent: no cache. */
  cacheKey?: string;
  layers: LayerRange;
  embedding?: boolean;
  head?: boolean;
  ctx: number;
  kv?: KvCacheType;
}

/** What the worker's load answers about the engine it made. */
export interface EngineWorkerLoaded {
  range: LayerRange;
  hasEmbedding: boolean;
  hasHead: boolean;
  recurrent: boolean;
  hiddenSize: number;
  /** Bytes the worker's own cached source read from the network and from the device's cache. */
  counts: ShareCounts;
  /** The worker's own crossOriginIsolated (an engine's threads need it). */
  isolated: boolean;
}

/** The page's ModelSource as the worker reads it (a comlink proxy: every call answers a promise). */
export interface EnginePageSource {
  label: string;
  modelFile?: string;
  hasSize: boolean;
  readFile(path: string, opts?: ReadFileOptions): Promise<Uint8Array>;
  readRange(path: string, start: number, end: number): Promise<Uint8Array>;
  exists(path: string): Promise<boolean>;
  size(path: string): Promise<number>;
}

/** Every engine's calls as the worker exposes them: LayerEngine's own (kvLength answers a promise on the page) and these. */
export interface LayerEngineWorkerApi<Stats> extends Pick<LayerEngine, 'kvLength' | 'truncate' | 'snapshot' | 'releaseSnapshot' | 'embed' | 'runLayers'> {
  /** embed + runLayers in one message (the engine's fused call where it has one, LayerEngine.runTokens). */
  runTokens: NonNullable<LayerEngine['runTokens']>;
  /** Pick + this engine's layers on the pick (LayerEngine.sampleAndRun); the row's overrule reported back. */
  sampleAndRun(hidden: Float32Array, row: WireRow, range: LayerRange): Promise<{ token: number; candidates: RowCandidates; overruled: boolean; hidden: Float32Array }>;
  /** The decode call: each row's candidates and whether its top choice was overruled (the row asked with `report`). */
  decode(request: { tokens?: number[]; hidden?: Float32Array; rows: WireRow[]; ahead?: boolean }): Promise<(RowCandidates & { overruled: boolean })[]>;
  logits(hidden: Float32Array): Promise<Float32Array>;
  stats(): Stats;
  dispose(): Promise<void>;
}

/** The one engine worker's API: load a share into the row's engine, probe a row there, then the engine's calls. */
export interface EngineWorkerApi<Stats = unknown> extends LayerEngineWorkerApi<Stats> {
  load(req: EngineWorkerLoadRequest, page?: EnginePageSource, onProgress?: (p: LoadProgress) => void): Promise<EngineWorkerLoaded>;
  /** The row's probe run in the worker (on the threads an engine there would run). */
  probe(engine: EngineKind, budgetMs: number, options: EngineOptions): Promise<EngineProbe>;
}

/** The engine a worker holds, with the calls the wire needs (every engine of ours has them). */
export type WorkerHeldEngine<Stats> = LayerEngine & Required<Pick<LayerEngine, 'sampleAndRun'>> & { logits(hidden: Float32Array): Promise<Float32Array>; stats(): Stats };

const transferred = (out: Float32Array): Float32Array => Comlink.transfer(out, [out.buffer as ArrayBuffer]);

/** The worker side of LayerEngineWorkerApi over the engine `need()` returns (it throws when none is loaded). */
export function layerEngineApi<Stats>(need: () => WorkerHeldEngine<Stats>, dispose: () => Promise<void>): LayerEngineWorkerApi<Stats> {
  return {
    kvLength: () => need().kvLength(),
    truncate: (length) => need().truncate(length),
    snapshot: (position) => need().snapshot(position),
    releaseSnapshot: (position) => need().releaseSnapshot(position),
    embed: async (ids) => transferred(await need().embed(ids)),
    runLayers: async (range, start, hidden) => transferred(await need().runLayers(range, start, hidden)),
    runTokens: async (ids, range, start) => transferred(await runTokens(need(), ids, range, start)),
    async sampleAndRun(hidden, row, range) {
      const flags = [false];
      const r = await need().sampleAndRun(hidden, fromWire(row, flags, 0), range);
      return Comlink.transfer({ token: r.token, candidates: r.candidates, overruled: flags[0]!, hidden: r.hidden }, [r.hidden.buffer as ArrayBuffer]);
    },
    async decode(request) {
      const flags = request.rows.map(() => false);
      const out = await need().decode({ ...request, rows: request.rows.map((r, i) => fromWire(r, flags, i)) });
      return out.map((c, i) => ({ ...c, overruled: flags[i]! }));
    },
    logits: async (hidden) => transferred(await need().logits(hidden)),
    stats: () => need().stats(),
    dispose,
  };
}
