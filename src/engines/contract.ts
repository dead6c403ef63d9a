// The contract of an engine row: what the room, the app and the UI may ask of an engine, without importing
// it. Each engine writes its row in its own folder (src/gpu/engine-row.ts, src/cpu/engine-row.ts,
// src/model/reference/engine-row.ts), keeps its heavy code behind a lazy import() there, and takes one
// line in the table (./table.ts). The room is handed the table by src/app and imports no engine.
// Types (and one line of where-am-I; nothing an engine's bundle would not load anyway): engines and the room both import it.
import type { LayerEngine, LayerRange } from '../model/engine-types.ts';
import type { KvCacheType } from '../model/kv-quant.ts';
import type { ScratchOptions } from '../model/engine-scratch.ts';
import type { ModelConfig, ModelSource, ModelWeights, WeightRequest } from '../model/types.ts';

/** An engine's name in the table, on the wire (hello) and in ?engine=: lower-case letters, digits, '-'. */
export type EngineKind = string;
export const ENGINE_KIND = /^[a-z][a-z0-9-]{0,31}$/;

/**
 * An engine's own options as the page's URL gives them (?simd=plain, ?cpu-activations=q8), validated by
 * the row's `options`. They travel with each probe, load and create request; no engine keeps them globally.
 */
export type EngineOptions = Readonly<Record<string, string>>;

/** One option of a row: its URL parameter, the values it takes (the first is the default) and what it does. */
export interface EngineOptionSpec {
  param: string;
  values: readonly string[];
  doc: string;
}

/** One engine's probe: its measured speed (GFLOP/s of a matvec on that engine) or why it could not run. */
export interface EngineProbe {
  engine: EngineKind;
  /** GFLOP/s of the probe's matvec (0 when it failed). */
  speed: number;
  /** What the device card names it: "WebGPU · SwiftShader (fallback) …", "CPU · 2 threads · SIMD", "reference". */
  label: string;
  /** The engine runs on a software stand-in (a WebGPU fallback adapter): a tie does not go to it. */
  software?: boolean;
  /** Set when the engine is absent or the probe failed (no WebGPU, no WASM SIMD…). */
  failed?: string;
}

/** Bytes a share's loader read besides those its `source` counts (a worker's own cache: network and cache reads). */
export interface ShareCounts { networkBytes: number; cacheBytes: number }

/** One share to load. model: the model's URL, '' where only `source` reads it (the host's local folder, the host over the channel). */
export interface ShareRequest {
  model: string;
  modelKey: string;
  /** The device's cached source (reads through it count as the device's network and cache bytes). */
  source: ModelSource;
  /** Layers (`request.layers`), embedding/head, progress and abort signal. */
  request: WeightRequest;
  ctx: number;
  kv?: KvCacheType;
  /** The most tokens a step the deal gave this device (its scratch was counted at it); absent: the row's own. */
  step?: number;
  /**
   * For a row that reads the weights on this thread: called once they are read, before the engine is made,
   * so the device frees its previous share first (memory) and learns whether the load is still wanted.
   * false: superseded, make no engine (the loader then answers null).
   */
  beforeCreate?: () => Promise<boolean>;
}

export interface LoadedShare { engine: LayerEngine; hiddenSize: number; counts: ShareCounts }

/** Loads a share and makes its engine (null: beforeCreate said the load was superseded). */
export type ShareLoadFn = (share: ShareRequest) => Promise<LoadedShare | null>;
export type LoadWeightsFn = (source: ModelSource, request: WeightRequest) => Promise<ModelWeights>;
/** Makes an engine of weights already read on this thread. kv: the KV cache type (absent: f16). */
export type EngineFactory = (weights: ModelWeights, opts: { ctx: number; range: LayerRange; kv?: KvCacheType; step?: number }) => Promise<LayerEngine>;

/** An engine's own error class, rebuilt as itself when it crosses the engine worker (src/model/worker-errors.ts). */
export type EngineErrorClass = new (message: string) => Error;

/**
 * A browser page's main thread (a row that runs in a worker then probes and loads there), not Node or a
 * worker, where every row runs on its own thread.
 */
export function onPageMainThread(): boolean {
  return typeof (globalThis as { window?: unknown }).window !== 'undefined' && typeof Worker !== 'undefined';
}

/** What a device knows before probing, for a label without measuring: its WebGPU adapter's summary. */
export interface HereFacts { adapter: string }

export interface EngineRow {
  readonly kind: EngineKind;
  /** The title a sentence names it by ("WebGPU", "WASM", "reference"). */
  readonly title: string;
  /** Only chosen when no other row runs (the reference: the oracle, never fast). */
  readonly lastResort?: boolean;
  /** Its label already names the WebGPU adapter (the card then shows no separate Adapter line). */
  readonly labelNamesAdapter?: boolean;
  /**
   * Runs its engine in the one engine worker on a page (workers/engine.worker.ts; its share never comes to
   * the page's thread): there the page's table (./page-engines.ts) probes and loads it in that worker,
   * whose copy of this row then probes and loads on its own thread.
   */
  readonly inWorker: boolean;
  /** Its own error classes (a lazy import), so they cross the engine worker as themselves. */
  errorClasses?(): Promise<readonly EngineErrorClass[]>;
  /** Its options as URL parameters (validated by src/app/url-params.ts from this list). */
  readonly options: readonly EngineOptionSpec[];
  /** Whether to assume this engine before any probe ran (the first such row of the table is the default). */
  presumedHere(): boolean;
  /** Measure the engine for about budgetMs (the caller bounds it in time and catches a failure). */
  probe(budgetMs: number, options: EngineOptions): Promise<EngineProbe>;
  /** What the card calls it without measuring (a forced engine with a fixed speed). */
  label(here: HereFacts, options: EngineOptions): Promise<string>;
  /** The card's name for a device whose hello carried no label. */
  fallbackLabel(here: HereFacts): string;
  /** Of what a device offers, the memory this engine can use (a wasm32 memory addresses 4 GiB). */
  budgetBytes(offeredBytes: number): number;
  /** Why budgetBytes cut an offer, for the card ('' when it did not). */
  capNote(offeredBytes: number): string;
  /**
   * Tokens a prefill step this engine takes on this device (README, "The prefill step"): the device reports
   * it in its hello and the deal counts its scratch at it. Absent: the row keeps its own step (the WASM
   * engine) and the deal counts the row's default scratch.
   */
  prefillStep?(options: EngineOptions): Promise<number>;
  /** Bytes the engine allocates on a device besides its layers' weights and cache, for a share of `config` (the deal asks; o.maxBatch: the device's step). */
  scratchBytes(config: ModelConfig, o: ScratchOptions): number;
  /** How a device loads its share into this engine (every row; a worker row's weights never reach the page). */
  loadShare(options: EngineOptions): ShareLoadFn;
  /** An engine on this very thread of weights read here (a draft model, a single-device harness run). */
  createEngine(options: EngineOptions): EngineFactory;
}

/** The engines a page may run, by kind: ENGINES (./table.ts), or a test's own. */
export type EngineTable = Readonly<Record<EngineKind, EngineRow>>;
