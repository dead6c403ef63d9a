// How a token is picked: the options, a caller's constraint, a pass's row and what it picks from. On their own so the sampler
// (./sampler.ts) and the engine contract (./engine-types.ts, which re-exports them) share them without a
// circle.

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

/** How one row of a verification pass is picked: the options and constraint of the token at that position. */
export interface RowSampling {
  opts: SamplingOptions;
  constraint?: TokenConstraint | undefined;
}

/**
 * What sampling chooses from for one row, best first (ties: lower id): the allowed argmax alone for a
 * greedy row, else at least the row's top-k (every allowed id when top-k is off). pickFromSorted over
 * them gives the token sampleLogits would. An overruled top choice is reported through the row's constraint.
 */
export interface RowCandidates {
  ids: number[];
  logits: number[];
}
