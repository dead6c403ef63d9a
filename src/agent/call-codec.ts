// How the loop reads calls out of an answer and constrains them while they are sampled. The grammar
// helper's parser (src/agent/parse) and grammar (src/agent/grammar) are adapted to this in codec.ts.
import type { Constraint } from '../model/generate-types.ts';
import type { CallToRun } from './call-runner.ts';

export interface ParsedAnswer {
  /** The calls to run, in order, after near-miss parsing and repairs. */
  calls: CallToRun[];
  /** The answer's text outside the calls (what the timeline shows as the answer). */
  text: string;
  /** The answer tried to call a tool but nothing readable came out. */
  unreadable: boolean;
}

/**
 * The call grammar of one answer: the Constraint the sampler asks, and, when too many tokens were forced
 * by the call format (the engine produces garbage: grammar/forced-tokens.ts), why — the grammar then ends
 * the answer and the loop ends the request with reason `error`.
 */
export type CallConstraint = Constraint & { garbage?(): string | null };

export interface CallCodec {
  parse(answer: string): ParsedAnswer;
  /** A fresh per-token grammar for one answer (BackendRequest.constraint); absent = unconstrained. */
  constraint?(): CallConstraint;
  /** A per-token grammar for an answer that must not call a tool (the closing answer at the step limit). */
  noCalls?(): Constraint;
}
