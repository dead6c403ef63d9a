// The calls in a finished answer, read as the agent reads them (src/agent/call-codec.ts): the near-miss
// parser, then the repairs, then OpenAI's tool_calls with JSON-string arguments.
import type { ToolSchema } from '../model/chat-types.ts';
import type { ToolFormat } from '../model/tool-format.ts';
import { parseToolCalls } from '../agent/parse/index.ts';
import { repairCall } from '../agent/repairs.ts';
import { newId, type ToolCallOut } from './openai-objects.ts';

export interface AnswerCalls {
  calls: ToolCallOut[];
  /** The answer's prose outside the calls. */
  text: string;
}

export function readCalls(answer: string, format: ToolFormat, tools: readonly ToolSchema[]): AnswerCalls {
  const parsed = parseToolCalls(answer, { format, tools });
  // A call of a tool the request did not declare is not handed to the client as one (its text stays prose).
  const declared = parsed.calls.filter((c) => tools.some((t) => t.name === c.name));
  if (declared.length < parsed.calls.length) return { calls: [], text: answer.trim() };
  const calls = declared.map((c): ToolCallOut => {
    const r = repairCall(c, tools);
    return { id: newId('call_'), type: 'function', function: { name: r.name, arguments: JSON.stringify(r.arguments) } };
  });
  return { calls, text: parsed.text };
}
