// The unit the room distributes, implemented by the CPU reference (src/model/reference), the WebGPU
// engine (src/gpu) and, across the network, by remote devices (src/room).

/** Half-open layer range [start, end). */
export type LayerRange = [number, number];

export interface SamplingOptions {
  temperature: number;         // 0 = greedy
  topK?: number;               // 0/undefined = off
  topP?: number;               // 1/undefined = off
  seed?: number;
}

/**
 * A caller's per-token constraint (the agent's grammar). `bits` is a bitset over the vocabulary
 * (bit id%32 of word id/32 set = allowed); `greedy` forces argmax for this token.
 */
export interface TokenConstraint {
  bits?: Uint32Array;
  greedy?: boolean;
  /**
   * Called by the engine that picks this token when the model's own top choice (the unconstrained
   * argmax) is not allowed by `bits`, before the allowed pick is returned. The pick is the same either
   * way; the caller learns its grammar overruled the model (the agent counts that to spot garbage).
   */
  overruled?: () => void;
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
  dispose(): Promise<void>;
}

/** decodeToken as three calls (embed, every layer, sample): for engines with no one-call decode. */
export async function decodeInSteps(engine: LayerEngine, id: number, opts: SamplingOptions, constraint?: TokenConstraint): Promise<number> {
  const hidden = await engine.runLayers(engine.range, engine.kvLength(), await engine.embed([id]));
  return engine.sample(hidden, opts, constraint);
}
