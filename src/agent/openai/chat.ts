// Chat completions (/v1/chat/completions), for servers that have no /v1/completions (hosted APIs, proxies,
// chat-only builds): the conversation goes as messages and the server renders the turns with its own
// template. Two ways to carry the tools:
//   - native: the OpenAI `tools` list, answers' calls as `tool_calls`, results as `tool` messages; the
//     server streams calls back as `delta.tool_calls` pieces, which we write out as the model's own
//     <tool_call> text so the agent's parser, repairs and live view read them as from any model;
//   - text: for a server that refuses `tools`, the system turn carries them as our template writes them
//     (Qwen: "# Tools" and the call format), calls are written inside the answers, results are the user
//     turns our template writes: the model reads what it would from /v1/completions.
import type { ChatMessage, ToolSchema } from '../../model/chat-types.ts';
import { renderToolCall, type ToolFormat } from '../../model/tool-format.ts';
import type { TurnRenderer } from '../turns.ts';
import type { RequestMessage } from '../backend.ts';
import { ServerError } from './server.ts';

export const COMPLETIONS_PATH = '/v1/completions';
export const CHAT_PATH = '/v1/chat/completions';

/** A message as the wire takes it. */
export type WireMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

interface WireToolCall { id: string; type: 'function'; function: { name: string; arguments: string } }

/** The agent's tools as the OpenAI `tools` list. */
export function wireTools(tools: readonly ToolSchema[]): { type: 'function'; function: ToolSchema }[] {
  return tools.map((t) => ({ type: 'function', function: t }));
}

/**
 * The server has no completions route for this model: 405/501, a 404 that does not name a missing model,
 * or an error that points at chat completions (OpenAI: "This is a chat model and not supported in the
 * v1/completions endpoint").
 */
export function saysNoCompletions(status: number, why: string): boolean {
  if (status < 400) return false;
  if (/chat\/completions|chat model|chat endpoint|only (supports|serves) chat/i.test(why)) return status < 500 || status === 501;
  if (status === 405 || status === 501) return true;
  return status === 404 && !/model/i.test(why);
}

/** The server refused the `tools` field (llama.cpp without --jinja, vLLM without a tool parser, a model without tools). */
export function refusesTools(status: number, why: string): boolean {
  if (status >= 400 && status < 500 && /\btools?\b|tool[_ ]choice|function call/i.test(why)) return true;
  // llama.cpp answers 500 "tools param requires --jinja flag".
  return status >= 500 && /\btools? param|tool[_ ]choice|support(s|ed)? (for )?tools|--jinja/i.test(why);
}

/** Messages with native tool calls: each answer's calls get ids, and the results after it answer them in order. */
export function nativeMessages(messages: readonly RequestMessage[]): WireMessage[] {
  let n = 0;
  let open: string[] = [];
  return messages.map((m): WireMessage => {
    if (m.role === 'assistant') {
      if (!m.tool_calls?.length) return { role: 'assistant', content: m.content };
      open = m.tool_calls.map(() => `call_${++n}`);
      const calls = m.tool_calls.map((c, i): WireToolCall => ({ id: open[i]!, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
      return { role: 'assistant', content: m.content, tool_calls: calls };
    }
    if (m.role === 'tool') {
      const id = open.shift();
      return id ? { role: 'tool', tool_call_id: id, content: m.content } : { role: 'user', content: m.content };
    }
    return { role: m.role, content: m.content };
  });
}

/**
 * Messages with the tools in the text, as our template writes them (`turns` renders them): the system turn
 * with the tools, each answer as sampled, the results as the user turn our template makes of them.
 */
export function textMessages(messages: readonly RequestMessage[], turns: TurnRenderer): WireMessage[] {
  const out: WireMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'system') {
      const system = turns.tools.length > 0 ? turns.systemContent() : m.content;
      if (system === null) throw new ServerError('the chat template does not put the tools inside the system turn, so they cannot go in the text');
      out.push({ role: 'system', content: system });
    } else if (m.role === 'assistant') {
      // The model's own words where we have them; else the calls as its template writes them.
      const content = m.sampled ?? (m.tool_calls?.length ? turns.assistantContentWithCalls(m.content, m.tool_calls) : m.content);
      out.push({ role: 'assistant', content });
    } else if (m.role === 'tool') {
      const group: { name: string; content: string }[] = [];
      for (; i < messages.length && messages[i]!.role === 'tool'; i++) {
        const t = messages[i] as Extract<ChatMessage, { role: 'tool' }>;
        group.push({ name: t.name ?? 'tool', content: t.content });
      }
      i--;
      const turn = turns.resultsTurn(group);
      out.push({ role: 'user', content: turns.userContentOf(turn) ?? turn });
    } else {
      out.push({ role: 'user', content: m.content });
    }
  }
  return out;
}

/** At most this many calls in one answer (the answer's length is bounded by the backend). */
const MAX_CALLS = 64;

/**
 * The calls a chat server streams as `delta.tool_calls` pieces ({index, id, function: {name, arguments}}),
 * written out as the model's own <tool_call> text. A call still streaming shows as far as it can be
 * written (JSON format: the arguments as they arrive; XML: its function line).
 */
export class StreamedToolCalls {
  private readonly calls: { name: string; args: string }[] = [];

  constructor(private readonly format: ToolFormat) {}

  get count(): number {
    return this.calls.length;
  }

  /** Characters of names and arguments received so far (each new piece is progress). */
  get chars(): number {
    return this.calls.reduce((n, c) => n + c.name.length + c.args.length, 0);
  }

  /** Feeds one event's `tool_calls` (or a whole message's); refuses what is not that shape. */
  push(pieces: unknown): void {
    if (!Array.isArray(pieces)) throw new ServerError(`the server sent tool_calls that are not a list: ${JSON.stringify(pieces).slice(0, 200)}`);
    for (const piece of pieces as unknown[]) {
      const p = (piece ?? {}) as { index?: unknown; function?: { name?: unknown; arguments?: unknown } };
      const index = p.index === undefined ? Math.max(0, this.calls.length - 1) : p.index;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > this.calls.length || index >= MAX_CALLS) {
        throw new ServerError(`the server sent a tool call with index ${JSON.stringify(p.index)} after ${this.calls.length} calls`);
      }
      const call = (this.calls[index] ??= { name: '', args: '' });
      const name = p.function?.name;
      const args = p.function?.arguments;
      if (typeof name === 'string') call.name += name;
      if (typeof args === 'string') call.args += args;
      else if (args && typeof args === 'object') call.args += JSON.stringify(args);  // some servers send the object
    }
  }

  /** The answer's text: its content, then each call as the model writes it (the last one still open while streaming). */
  text(content: string, streaming: boolean): string {
    if (this.calls.length === 0) return content;
    const written = this.calls.map((c, i) => (streaming && i === this.calls.length - 1 ? this.partial(c) : this.whole(c)));
    const sep = content === '' || content.endsWith('\n') ? '' : '\n';
    return content + sep + written.join('\n');
  }

  private whole(c: { name: string; args: string }): string {
    let args: unknown;
    try {
      args = JSON.parse(c.args === '' ? '{}' : c.args);
    } catch {
      args = undefined;
    }
    if (args && typeof args === 'object' && !Array.isArray(args)) return renderToolCall(this.format, { name: c.name, arguments: args as Record<string, unknown> });
    // Arguments that are not a JSON object: as the JSON format writes a call, for the parser's repairs.
    return `<tool_call>\n{"name": ${JSON.stringify(c.name)}, "arguments": ${c.args.trim() || '{}'}}\n</tool_call>`;
  }

  private partial(c: { name: string; args: string }): string {
    if (c.name === '') return '<tool_call>\n';
    if (this.format === 'xml') return `<tool_call>\n<function=${c.name}>\n`;
    return `<tool_call>\n{"name": ${JSON.stringify(c.name)}, "arguments": ${c.args}`;
  }
}
