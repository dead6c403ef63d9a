// The unit the room distributes, implemented by the CPU reference (src/model/reference), the WebGPU
// engine (src/gpu) and, across the network, by remote devices (src/room).
import { sortedCandidates } from './sampler.ts';
import type { SamplingOptions, TokenConstraint } from './sampling-types.ts';

export type { SamplingOptions, TokenConstraint } from './sampling-types.ts';

/** Half-open layer range [start, end). */
export type LayerRange = [number, number];

/** How one row of a verification pass is picked: the options and constraint of the token at that position. */
export interface RowSampling {
  opts: SamplingOptions;
  constraint?: TokenConstraint | undefined;
}

/**
 * What sampling chooses from for one row, best first (ties: lower id): the allowed argmax alone for a
 * greedy row, else at least the row's top-k (every allowed id when top-k is off). pickFromSorted over
 * them gives the token sample() would. An overruled top choice is reported through the row's constraint.
 */
export interface RowCandidates {
  ids: number[];
  logits: number[];
}

/** One device's share of the model with its own KV cache for those layers. */
export interface LayerEngine {
  readonly range: LayerRange;                 // layers held (may be empty: [k, k])
  readonly hasEmbedding: boolean;
  readonly hasHead: boolean;
  /**
   * True when a held layer carries recurrent state (Qwen3.5's Gated DeltaNet layers): going back to a
   * position then needs a snapshot taken there. False for Qwen3, where a truncation is enough.
   */
  readonly recurrent: boolean;
  /**
   * True when sample() and decodeToken() start work on the token they pick before it is asked for (a
   * split room's host runs its layers on the pick: sampleAndRun), which a speculative pass coming next
   * throws away. The Generator then keeps speculating in passes once they began: a step with nothing
   * drafted feeds its one token as a pass of one row, which starts nothing ahead. Absent = false.
   */
  readonly samplesAhead?: boolean;
  /** Tokens currently in this device's cache (KV of attention layers, steps of recurrent layers). */
  kvLength(): number;
  /**
   * Go back to `length`: drop KV entries at positions >= length, and restore every recurrent layer's
   * conv and delta state from its snapshot at `length` (all zeros at 0; a SnapshotMissingError, with
   * nothing changed, when there is none). Snapshots past `length` are dropped: their KV is gone.
   */
  truncate(length: number): Promise<void>;
  /**
   * Keep a copy of every recurrent layer's state at `position`, which must be kvLength() (a checkpoint:
   * the pinned one after system prompt + tools, or an answer's start). Nothing to keep for engines that
   * are not `recurrent`. A snapshot already at `position` is replaced.
   */
  snapshot(position: number): Promise<void>;
  /** Forget the snapshot at `position` (an evicted checkpoint); none there is not an error. */
  releaseSnapshot(position: number): Promise<void>;
  /** ids [n] -> hidden [n, H]. Needs hasEmbedding. */
  embed(ids: number[]): Promise<Float32Array>;
  /**
   * Run layers `range` (a sub-range of this.range, or all of it) on hidden [n, H], the n tokens at
   * positions [start, start + n): writes their K/V, returns hidden [n, H]. `start` must equal the cache
   * length of every layer in `range` (llama2.c's forward(token, pos), for a batch of tokens).
   */
  runLayers(range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array>;
  /** Final norm + head on the last row: hidden [H] -> logits [V]. Needs hasHead. */
  logits(hidden: Float32Array): Promise<Float32Array>;
  /** Final norm + head + sampling without reading all logits back where possible. Needs hasHead. */
  sample(hidden: Float32Array, opts: SamplingOptions, constraint?: TokenConstraint): Promise<number>;
  /**
   * One decode step for an engine holding the embedding, every layer and the head (the Generator's
   * engine): feed `id` at position kvLength() through the whole model and sample the next token. Gives
   * the same token as embed + runLayers + sample; the engine decides how (the WebGPU engine fuses it into
   * one queue submit, a split room runs it through its stages). Engines holding less reject it.
   */
  decodeToken(id: number, opts: SamplingOptions, constraint?: TokenConstraint): Promise<number>;
  /**
   * embed + runLayers in one call where the engine can fuse them (the WebGPU engine: one submit, one
   * read-back instead of two). Optional: runTokens() below falls back to the two calls.
   */
  runTokens?(ids: number[], range: LayerRange, start: number): Promise<Float32Array>;
  /**
   * Final norm + head + candidates for every row of hidden [m, H] (rows[i] says how row i is picked):
   * a speculative verification pass reads all m rows back at once. Optional: scoreRows() below runs
   * logits() per row and selects on the CPU.
   */
  scoreRows?(hidden: Float32Array, rows: readonly RowSampling[]): Promise<RowCandidates[]>;
  /**
   * Pick the token after the last row of `hidden` (as sample()), then embed it and run `range` of this
   * engine's layers on it at kvLength(): the host of a split room does its share of the next token with
   * the pick, in one submit and one read-back. Optional (RoomEngine falls back to sample()).
   */
  sampleAndRun?(hidden: Float32Array, opts: SamplingOptions, constraint: TokenConstraint | undefined, range: LayerRange): Promise<{ token: number; hidden: Float32Array }>;
  dispose(): Promise<void>;
}

/** embed + runLayers, fused when the engine offers it. */
export function runTokens(engine: LayerEngine, ids: number[], range: LayerRange, start: number): Promise<Float32Array> {
  if (engine.runTokens) return engine.runTokens(ids, range, start);
  return engine.embed(ids).then((hidden) => engine.runLayers(range, start, hidden));
}

/** scoreRows on the engine (hidden [rows.length, H]), or logits per row with the candidates chosen on the CPU (sortedCandidates). */
export async function scoreRows(engine: LayerEngine, hidden: Float32Array, rows: readonly RowSampling[]): Promise<RowCandidates[]> {
  if (engine.scoreRows) return engine.scoreRows(hidden, rows);
  const hiddenSize = hidden.length / rows.length;
  const out: RowCandidates[] = [];
  for (let i = 0; i < rows.length; i++) {
    const logits = await engine.logits(hidden.subarray(i * hiddenSize, (i + 1) * hiddenSize));
    out.push(sortedCandidates(logits, rows[i]!.opts, rows[i]!.constraint));
  }
  return out;
}

/** decodeToken as three calls (embed, every layer, sample): for engines with no one-call decode. */
export async function decodeInSteps(engine: LayerEngine, id: number, opts: SamplingOptions, constraint?: TokenConstraint): Promise<number> {
  const hidden = await engine.runLayers(engine.range, engine.kvLength(), await engine.embed([id]));
  return engine.sample(hidden, opts, constraint);
}
