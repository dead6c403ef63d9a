// Extracts tool calls from a raw model reply: the model's own format first, then the near misses open
// models write (docs/agent.md, Call formats and the call grammar; the JSON near misses of loose-json.ts).
// Inside <tool_call> blocks any name is kept (the loop reports unknown tools); outside them only declared
// tools count, so prose is not mistaken for a call. A call's `mends` say what had to be mended to read it.
import type { ToolFormat } from '../../model/tool-format.ts';
import type { ToolSchema } from '../../model/chat-types.ts';
import { OPEN_TAG, readToolCallBlock } from './blocks.ts';
import { callFromJson, callsFromJsonText, FLAT_ARGUMENTS } from './json-calls.ts';
import { readLooseValue } from './loose-json.ts';
import { positionalCalls } from './positional.ts';
import type { ParsedCall, ParseResult } from './types.ts';
import { xmlCalls } from './xml-calls.ts';

export type { ParsedCall, ParseResult } from './types.ts';

export interface ParseOptions {
  format: ToolFormat;
  tools: readonly ToolSchema[];
}

interface Span { start: number; end: number; calls: ParsedCall[] }

export function parseToolCalls(reply: string, opts: ParseOptions): ParseResult {
  const spans: Span[] = [...toolCallBlocks(reply, opts)];
  let rest = blank(reply, spans);
  const known = (c: ParsedCall) => {
    const tool = opts.tools.find((t) => t.name === declaredName(c.name, opts.tools));
    // Arguments beside the name count outside a block only when every one is a parameter of the tool.
    return tool !== undefined && (!c.mends?.includes(FLAT_ARGUMENTS) || Object.keys(c.arguments).every((k) => k in tool.parameters.properties));
  };

  // <function=...> / <invoke ...> without the <tool_call> wrapper.
  for (const s of xmlSpans(rest)) if (s.calls.every(known)) spans.push(s);
  rest = blank(reply, spans);
  // JSON calls in a tag other models use instead of <tool_call> (<tool>, <tools>, <response>, <json>,
  // <xml>, any case): only calls of declared tools, so prose that shows such a tag stays prose.
  for (const m of rest.matchAll(/<(tools?|response|json|xml)>([\s\S]*?)<\/\1>/gi)) {
    const calls = callsFromJsonText(m[2], `<${m[1].toLowerCase()}>`);
    if (calls.length > 0 && calls.every(known)) spans.push({ start: m.index!, end: m.index! + m[0].length, calls });
  }
  rest = blank(reply, spans);
  // ```tool fences (and ```json / ```xml fences that hold a call of a declared tool).
  for (const m of rest.matchAll(/```(tool_call|tool_code|tool|function|json|xml)?[ \t]*\n([\s\S]*?)```/g)) {
    const calls = callsFromJsonText(m[2], 'fence');
    const usable = calls.length > 0 && (m[1] === 'tool' || m[1] === 'tool_call' || m[1] === 'tool_code' || m[1] === 'function' ? true : calls.every(known));
    const positional = calls.length === 0 ? positionalCalls(m[2], opts.tools, true).map((p) => p.call) : [];
    if (usable) spans.push({ start: m.index!, end: m.index! + m[0].length, calls });
    else if (positional.length > 0) spans.push({ start: m.index!, end: m.index! + m[0].length, calls: positional });
  }
  rest = blank(reply, spans);
  // Bare JSON {"name": ..., "arguments": ...} ending the reply.
  const tail = bareJsonAtEnd(rest);
  if (tail && known(tail.calls[0])) spans.push(tail);
  rest = blank(reply, spans);
  // search("foo", "src") on a line of its own.
  for (const p of positionalCalls(rest, opts.tools, true)) spans.push({ start: p.start, end: p.end, calls: [p.call] });

  spans.sort((a, b) => a.start - b.start);
  return {
    calls: spans.flatMap((s) => s.calls).map((c) => withDeclaredName(c, opts.tools)),
    text: blank(reply, spans).replace(/\u0000+/g, '').replace(/\n{3,}/g, '\n\n').trim(),
  };
}

/** Each <tool_call> block (closed or not) and the calls inside it, in any spelling (blocks.ts finds its end). */
function* toolCallBlocks(reply: string, opts: ParseOptions): Generator<Span> {
  let at = reply.indexOf(OPEN_TAG);
  while (at >= 0) {
    const block = readToolCallBlock(reply, at);
    yield { start: at, end: block.end, calls: callsInBlock(reply.slice(block.bodyStart, block.bodyEnd), opts) };
    at = block.next;
  }
}

function callsInBlock(body: string, opts: ParseOptions): ParsedCall[] {
  const xml = () => xmlCalls(body);
  const json = () => callsFromJsonText(body, 'json');
  const [first, second] = opts.format === 'xml' ? [xml, json] : [json, xml];
  const a = first();
  if (a.length > 0) return a;
  const b = second();
  if (b.length > 0) return b;
  return positionalCalls(body, opts.tools, false).map((p) => p.call);
}

function xmlSpans(text: string): Span[] {
  return xmlCalls(text).map((call) => {
    const start = text.indexOf(call.raw);
    return { start, end: start + call.raw.length, calls: [call] };
  });
}

function bareJsonAtEnd(text: string): Span | null {
  const end = text.replace(/[\s\u0000]+$/, '').length;
  if (end === 0 || text[end - 1] !== '}') return null;
  const body = text.slice(0, end);
  for (let i = body.indexOf('{'); i >= 0; i = body.indexOf('{', i + 1)) {
    const read = readLooseValue(body, i);
    if (!read || read.end !== end) continue;
    const call = callFromJson(read.value, 'bare-json', body.slice(i, end), read.mends);
    if (call) return { start: i, end, calls: [call] };
  }
  return null;
}

/** Namespaces models put before a tool's name: functions.read_file, default_api.read_file. */
const NAMESPACE = /^(?:functions|function|tools|tool|default_api)\./;

/** The declared tool a name means: itself, or the name without a namespace when that is declared. */
function declaredName(name: string, tools: readonly ToolSchema[]): string {
  const isDeclared = (n: string) => tools.some((t) => t.name === n);
  let bare = name;
  while (!isDeclared(bare) && NAMESPACE.test(bare)) bare = bare.replace(NAMESPACE, '');
  return isDeclared(bare) ? bare : name;
}

function withDeclaredName(call: ParsedCall, tools: readonly ToolSchema[]): ParsedCall {
  const name = declaredName(call.name, tools);
  if (name === call.name) return call;
  return { ...call, name, mends: [...(call.mends ?? []), `name ${JSON.stringify(call.name)} as ${name}`] };
}

/** The reply with the spans' characters replaced by NULs (keeps offsets stable between passes). */
function blank(reply: string, spans: Span[]): string {
  let out = reply;
  for (const s of spans) out = out.slice(0, s.start) + '\u0000'.repeat(s.end - s.start) + out.slice(s.end);
  return out;
}
