// How the loop reads calls out of an answer and constrains them while they are sampled. The grammar
// helper's parser (src/agent/parse) and grammar (src/agent/grammar) are adapted to this in codec.ts.
import type { TokenMaskSource } from './backend.ts';
import type { ParsedCall } from './call-runner.ts';

export interface ParsedAnswer {
  /** The calls to run, in order, after near-miss parsing and repairs. */
  calls: ParsedCall[];
  /** The answer's text outside the calls (what the timeline shows as the answer). */
  text: string;
  /** The answer tried to call a tool but nothing readable came out. */
  unreadable: boolean;
}

export interface CallCodec {
  parse(answer: string): ParsedAnswer;
  /** Per-token grammar, asked with the tokens sampled so far (see GenerateRequest.mask). */
  mask?(generatedSoFar: number[]): TokenMaskSource | null;
}
