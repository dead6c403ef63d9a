// Speculative decoding: a drafter guesses the next few tokens, the model checks all of them in one pass
// (one batched forward through every device, one hop chain in a room) and keeps the longest prefix it
// agrees with, plus its own next token. See docs/room-speed.md.
import type { SamplingOptions, TokenConstraint } from '../engine-types.ts';

/**
 * A draft token's distribution under the drafter's own sampling, over its kept candidates (probs sum
 * to 1). Absent on a Draft: the drafter chose its tokens deterministically (prompt lookup, greedy draft).
 */
export interface DraftDistribution {
  ids: number[];
  probs: number[];
}

export interface Draft {
  tokens: number[];
  /** q[i]: the distribution tokens[i] was drawn from, when the drafter sampled. */
  q?: DraftDistribution[];
}

/** Where the drafter is asked to guess: the context so far and how the target samples it. */
export interface DraftRequest {
  /** The prompt and the answer so far; the drafted tokens follow its last token. */
  context: readonly number[];
  /** At most this many tokens. */
  max: number;
  sampling: SamplingOptions;
  /** The sampling seed of the answer (a sampling drafter derives its own random numbers from it). */
  seed: number;
  signal?: AbortSignal;
  /** Tokens that end the answer: a drafter need not guess past one (the pass stops there anyway). */
  stopTokens?: ReadonlySet<number>;
  /**
   * The grammar's mask for the next drafted token, given the tokens drafted so far in this request
   * (absent: no grammar). A drafter that samples (returns q) must draw each token under it, so q is a
   * distribution over the tokens the target may pick; a deterministic drafter may ignore it (the pass
   * cuts a draft at the first forbidden token).
   */
  constraint?: (drafted: readonly number[]) => TokenConstraint | null | undefined;
}

export interface Drafter {
  /** "lookup", "draft:Qwen3-0.6B": shown in stats and logs. */
  readonly name: string;
  draft(request: DraftRequest): Promise<Draft> | Draft;
}

export interface SpeculationOptions {
  drafter: Drafter;
  /**
   * Most drafted tokens per pass (k; the pass feeds k + 1). Default 7: 8 rows, which a GPU runs for the
   * price of one. A drafter may draft fewer (a draft model by what its measurements say pays).
   */
  maxDraft?: number;
}

export const DEFAULT_MAX_DRAFT = 7;
