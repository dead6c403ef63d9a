// What every engine worker exposes of its LayerEngine (comlink), page side (./worker-engine-proxy.ts)
// and worker side (layerEngineApi below), whichever engine it holds: the WebGPU engine's worker
// (workers/engine.worker.ts) and the WASM engine's (workers/cpu-engine.worker.ts) add only their load
// (and the WASM probe, the WebGPU runTokens). Decode rows cross as ./row-wire.ts's WireRow; Float32Array
// results are transferred, not copied.
import * as Comlink from 'comlink';
import type { LayerEngine, LayerRange, RowCandidates } from './engine-types.ts';
import { fromWire, type WireRow } from './row-wire.ts';

export interface LayerEngineWorkerApi<Stats> {
  kvLength(): number;
  truncate(length: number): Promise<void>;
  snapshot(position: number): Promise<void>;
  releaseSnapshot(position: number): Promise<void>;
  embed(ids: number[]): Promise<Float32Array>;
  runLayers(range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array>;
  /** Pick + this engine's layers on the pick (LayerEngine.sampleAndRun); the row's overrule reported back. */
  sampleAndRun(hidden: Float32Array, row: WireRow, range: LayerRange): Promise<{ token: number; candidates: RowCandidates; overruled: boolean; hidden: Float32Array }>;
  /** The decode call: each row's candidates and whether its top choice was overruled (the row asked with `report`). */
  decode(request: { tokens?: number[]; hidden?: Float32Array; rows: WireRow[]; ahead?: boolean }): Promise<(RowCandidates & { overruled: boolean })[]>;
  logits(hidden: Float32Array): Promise<Float32Array>;
  stats(): Stats;
  dispose(): Promise<void>;
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
