// The generate boundary: what a caller asks of one answer and what comes back. Owned here, by the model
// layer; the Generator, the room's host and the agent's backends all speak these types (the agent adds
// only the answer's text, see src/agent/backend.ts).
import type { SamplingOptions, TokenConstraint } from './engine-types.ts';
import type { SpeculationOptions } from './speculative/types.ts';

/**
 * Why an answer ended: the model sampled a stop token ('stop-token'), the answer cap, the context full,
 * the caller stopped it or a device left ('stopped'), a failure.
 */
export type FinishReason = 'stop-token' | 'cap' | 'context' | 'stopped' | 'error';

/**
 * The per-token grammar of one answer: asked before each token with the ids sampled so far (the stop
 * token excluded); null/undefined = free sampling for this token. It may keep state across calls.
 */
export type Constraint = ((generatedSoFar: readonly number[]) => TokenConstraint | null | undefined) & {
  /**
   * The constraints of the tokens after `generatedSoFar` + draft[0..i] for i = 0 … draft.length − 1,
   * without moving the constraint's own state: speculative decoding checks drafted tokens under the
   * grammar with them. A constraint without it turns speculation off for its answer.
   */
  lookahead?(generatedSoFar: readonly number[], draft: readonly number[]): (TokenConstraint | null | undefined)[];
};

export interface GenerateOptions {
  maxNewTokens: number;        // answer cap
  stopTokens?: readonly number[];
  sampling?: SamplingOptions;  // default greedy
  pinAt?: number;              // position of the pinned checkpoint (end of system prompt + tools)
  constraint?: Constraint;
  /** Checked before each prefill chunk and each decode step: Stop waits at most one chunk's time. */
  signal?: AbortSignal;
  /** Prompt reading: called once the reusable prefix is known and after each prefill chunk (`done` counts reused tokens). */
  onPrefill?: (done: number, total: number) => void;
  onToken?: (id: number, generatedSoFar: readonly number[]) => void;
  /** Speculative decoding: drafts checked by the model, the output unchanged (docs/room-speed.md). */
  speculate?: SpeculationOptions;
}

export interface GenerationStats {
  promptTokens: number;        // length of the prompt
  promptComputed: number;      // prompt tokens run through the layers
  promptReused: number;        // prompt tokens served from the KV cache
  generated: number;           // tokens returned (the stop token is not counted)
  prefillSeconds: number;      // start until the first token was sampled
  decodeSeconds: number;       // the rest
  prefillTokensPerSecond: number;  // promptComputed / prefillSeconds
  decodeTokensPerSecond: number;   // tokens after the first / decodeSeconds
  seconds: number;             // total
  seed: number;                // the sampling seed used (random when none was given)
  /** With speculation asked for: drafted tokens checked, of which accepted, and decode passes (each one forward through every layer). */
  drafted?: number;
  accepted?: number;
  passes?: number;
  /** With speculation asked for: the drafter's name ("lookup", "draft:Qwen3-0.6B"). */
  drafter?: string;
  /** Why speculation was asked for but not used (a recurrent model, a constraint without lookahead). */
  speculationOff?: string;
}

export interface GenerationResult {
  ids: number[];               // generated ids, without the stop token
  finish: FinishReason;
  stopToken?: number;          // the stop token sampled, when finish = 'stop-token'
  error?: Error;               // when finish = 'error'
  /** Why the run ended early without being an error, in words: the room names the device that left. */
  note?: string;
  stats: GenerationStats;
}

/** After a run the room stopped (a device left): whether it can run again, in words either way. */
export type RecoverOutcome = { ok: true; text: string } | { ok: false; text: string };

/** What turns a prompt into an answer: the Generator, or the room's host (which adds `note`). */
export interface TokenGenerator {
  generate(prompt: readonly number[], opts: GenerateOptions): Promise<GenerationResult>;
  /**
   * Only where runs can stop for a reason that passes (the room: a device left): waits, bounded, until the
   * generator can run again (the room re-dealt without that device).
   */
  recover?(signal?: AbortSignal): Promise<RecoverOutcome>;
}
