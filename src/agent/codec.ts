// The loop's CallCodec for a model: the grammar mask (src/agent/grammar) while sampling, and the
// near-miss parser + repairs (src/agent/parse, src/agent/repairs.ts) on the finished answer.
import type { Tokenizer } from '../model/tokenizer.ts';
import type { ToolFormat } from '../model/tool-format.ts';
import type { ToolSchema } from '../model/chat-types.ts';
import type { CallCodec, ParsedAnswer } from './call-codec.ts';
import type { CallToRun } from './call-runner.ts';
import { ToolCallGrammar } from './grammar/tool-call-mask.ts';
import { parseToolCalls } from './parse/index.ts';
import { repairCall } from './repairs.ts';

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
