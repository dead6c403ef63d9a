// The unit the room distributes, implemented by the CPU reference (src/model/reference), the WebGPU
// engine (src/gpu) and, across the network, by remote devices (src/room).
import { EngineUsageError } from './engine-errors.ts';
import { pickRow } from './sampler.ts';
import type { RowCandidates, RowSampling, SamplingOptions, TokenConstraint } from './sampling-types.ts';

export type { RowCandidates, RowSampling, SamplingOptions, TokenConstraint } from './sampling-types.ts';

/** Half-open layer range [start, end). */
export type LayerRange = [number, number];

/**
 * One call of the decode loop (LayerEngine.decode): feed tokens through every layer, or take rows that
 * already went through them, then the head on each row: what the sampler needs to pick row i's next token.
 * Exactly one of `tokens` and `hidden`.
 */
export interface DecodeRequest {
  /** Tokens fed at positions kvLength(), kvLength() + 1, …: row i picks the token after tokens[i]. */
  tokens?: readonly number[];
  /** Rows already through every layer, [m, H] with m ≥ rows.length; its last rows.length rows are picked after (the prompt's last row). Nothing is fed. */
  hidden?: Float32Array;
  /** How each row is picked: one per fed token (or per hidden row). */
  rows: readonly RowSampling[];
  /**
   * The caller will feed row 0's pick, alone, in its next request (plain decoding, one row). An engine
   * that can start on it now may: a split room's host runs its own layers on the pick in the same submit
   * (sampleAndRun). Speculative passes leave it unset, so no work is done that their next pass drops.
   */
  ahead?: boolean;
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
  /**
   * embed + runLayers in one call where the engine can fuse them (the WebGPU engine: one submit, one
   * read-back instead of two). Optional: runTokens() below falls back to the two calls. Prefill's call.
   */
  runTokens?(ids: number[], range: LayerRange, start: number): Promise<Float32Array>;
  /**
   * The decode loop's one call: run the request's rows (feeding its tokens through every layer, which
   * needs the embedding, every layer and the head) and return each row's candidates, from which
   * pickRow gives the token sampleLogits would give on the row's logits. An overruled top choice is
   * reported through the row's constraint. The engine decides how: the WebGPU engine feeds one token,
   * picks its candidates on the device and reads back once (one submit); a speculative pass's rows
   * come back in one read-back; a split room runs its stages and may start the next token (`ahead`).
   */
  decode(request: DecodeRequest): Promise<RowCandidates[]>;
  /**
   * Pick the token after the last row of `hidden` (as decode on that row would, ahead), then embed it
   * and run `range` of this engine's layers on it at kvLength(): the host of a split room does its share
   * of the next token with the pick, in one submit and one read-back. `candidates` are the pick's row, as
   * decode returns them. Optional (RoomEngine then picks with decode and runs the layers after).
   */
  sampleAndRun?(hidden: Float32Array, row: RowSampling, range: LayerRange): Promise<{ token: number; candidates: RowCandidates; hidden: Float32Array }>;
  dispose(): Promise<void>;
}

/** embed + runLayers, fused when the engine offers it. */
export function runTokens(engine: LayerEngine, ids: number[], range: LayerRange, start: number): Promise<Float32Array> {
  if (engine.runTokens) return engine.runTokens(ids, range, start);
  return engine.embed(ids).then((hidden) => engine.runLayers(range, start, hidden));
}

/** How one row is picked, as a RowSampling (no `constraint` key when there is none). */
export function rowOf(opts: SamplingOptions, constraint?: TokenConstraint | null): RowSampling {
  return constraint ? { opts, constraint } : { opts };
}

/** The token after the last row of hidden ([H] or [n, H]): decode on that row, then pickRow. */
export async function sampleNext(engine: LayerEngine, hidden: Float32Array, opts: SamplingOptions, constraint?: TokenConstraint): Promise<number> {
  const [row] = await engine.decode({ hidden, rows: [rowOf(opts, constraint)] });
  return pickRow(row!, opts, constraint);
}

/** Feed `id` at kvLength() through the whole model and pick the next token (plain decoding's step). */
export async function decodeNext(engine: LayerEngine, id: number, opts: SamplingOptions, constraint?: TokenConstraint): Promise<number> {
  const [row] = await engine.decode({ tokens: [id], rows: [rowOf(opts, constraint)], ahead: true });
  return pickRow(row!, opts, constraint);
}

/**
 * The checks every engine's decode makes before touching its cache: one input, rows matching it, the
 * parts it needs. Returns the number of rows, and for a hidden input the rows picked after (its last n).
 */
export function checkDecode(request: DecodeRequest, hiddenSize: number, engine: { range: LayerRange; hasEmbedding: boolean; hasHead: boolean; numLayers: number }): { n: number; hidden?: Float32Array } {
  const { tokens, hidden, rows } = request;
  if ((tokens === undefined) === (hidden === undefined)) throw new EngineUsageError('decode: give either tokens to feed or hidden rows, not both or neither');
  const n = rows.length;
  if (n === 0) throw new EngineUsageError('decode: no rows to pick');
  if (tokens && tokens.length !== n) throw new EngineUsageError(`decode: ${n} row samplings for ${tokens.length} tokens fed`);
  if (hidden && !(hidden.length % hiddenSize === 0 && hidden.length >= n * hiddenSize)) {
    throw new EngineUsageError(`decode: hidden has ${hidden.length} values, not ${n} or more rows of ${hiddenSize}`);
  }
  if (!engine.hasHead) throw new EngineUsageError(`decode: this engine (layers [${engine.range}]) holds no final norm and head`);
  if (tokens && (!engine.hasEmbedding || engine.range[0] !== 0 || engine.range[1] !== engine.numLayers)) {
    throw new EngineUsageError(`decode: feeding tokens needs the embedding, every layer and the head; this engine holds layers [${engine.range}]${engine.hasEmbedding ? '' : ', no embedding'}`);
  }
  return hidden ? { n, hidden: hidden.subarray(hidden.length - n * hiddenSize) } : { n };
}
