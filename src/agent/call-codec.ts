// The call codec: how the loop reads calls out of an answer and constrains them while they are sampled
// (CallCodec), and the one every model gets (createCallCodec): the grammar mask (src/agent/grammar) while
// sampling, the near-miss parser + repairs (src/agent/parse, src/agent/repairs.ts) on the finished answer.
import type { Constraint } from '../model/generate-types.ts';
import type { Tokenizer } from '../model/tokenizer.ts';
import type { ToolFormat } from '../model/tool-format.ts';
import type { ToolSchema } from '../model/chat-types.ts';
import type { CallToRun } from './call-runner.ts';
import { ToolCallGrammar } from './grammar/tool-call-mask.ts';
import { parseToolCalls } from './parse/index.ts';
import { repairCall } from './repairs.ts';

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

export interface CodecOptions { tokenizer: Tokenizer; format: ToolFormat; tools: readonly ToolSchema[] }

export function createCallCodec(opts: CodecOptions): CallCodec {
  const grammar = new ToolCallGrammar({ tokenizer: opts.tokenizer, format: opts.format, tools: opts.tools });
  return {
    parse: (answer) => parseAnswer(answer, opts),
    constraint: () => grammar.constraint(),
    noCalls: () => grammar.noCalls(),
  };
}

function parseAnswer(answer: string, opts: CodecOptions): ParsedAnswer {
  const parsed = parseToolCalls(answer, { format: opts.format, tools: opts.tools });
  const calls = parsed.calls.map((c): CallToRun => {
    const repaired = repairCall(c, opts.tools);
    const call: CallToRun = { name: repaired.name, arguments: repaired.arguments };
    if (repaired.repairs.length > 0) call.repairs = repaired.repairs;
    return call;
  });
  return { calls, text: parsed.text, unreadable: calls.length === 0 && answer.includes('<tool_call>') };
}
