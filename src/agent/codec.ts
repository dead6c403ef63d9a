// The loop's CallCodec for a model: the grammar mask (src/agent/grammar) while sampling, and the
// near-miss parser + repairs (src/agent/parse, src/agent/repairs.ts) on the finished answer.
import type { Tokenizer } from '../model/tokenizer.ts';
import type { ToolFormat } from '../model/tool-format.ts';
import type { ToolSchema } from './tool-types.ts';
import type { CallCodec, ParsedAnswer } from './call-codec.ts';
import { ToolCallGrammar } from './grammar/tool-call-mask.ts';

export interface CodecOptions { tokenizer: Tokenizer; format: ToolFormat; tools: readonly ToolSchema[] }

export function createCallCodec(opts: CodecOptions): CallCodec {
  const grammar = new ToolCallGrammar({ tokenizer: opts.tokenizer, format: opts.format, tools: opts.tools });
  return {
    parse: (answer) => parseAnswer(answer, opts),
    mask: grammar.factory,
  };
}

// TEMPORARY until src/agent/parse lands: the two canonical formats only.
function parseAnswer(answer: string, opts: CodecOptions): ParsedAnswer {
  const calls: ParsedAnswer['calls'] = [];
  const blocks = [...answer.matchAll(/<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g)];
  for (const [, body] of blocks) {
    const text = body!.trim();
    if (opts.format === 'json') {
      try {
        const v = JSON.parse(text) as { name: string; arguments: Record<string, unknown> };
        calls.push({ name: v.name, arguments: v.arguments ?? {} });
      } catch { /* unreadable */ }
    } else {
      const fn = /<function=([^>\n]+)>([\s\S]*?)<\/function>/.exec(text);
      if (!fn) continue;
      const args: Record<string, unknown> = {};
      for (const p of fn[2]!.matchAll(/<parameter=([^>\n]+)>\n?([\s\S]*?)\n?<\/parameter>/g)) args[p[1]!] = p[2];
      calls.push({ name: fn[1]!, arguments: args });
    }
  }
  const first = answer.indexOf('<tool_call>');
  return { calls, text: (first >= 0 ? answer.slice(0, first) : answer).trim(), unreadable: blocks.length > 0 && calls.length === 0 };
}
