// XML-style calls in every spelling open models write: <function=NAME>, <function name="NAME">,
// <invoke name="NAME">; parameters as <parameter=P>, <parameter name="P">; or JSON arguments inside.
// The body is read parameter by parameter (not up to the first </function>), so a value may contain
// </function> or other tags; where a value ends is xml-value.ts's one rule, the grammar's too.
import { callsFromJsonText } from './json-calls.ts';
import { JSON_MEND_LABELS, parseLooseJson } from './loose-json.ts';
import type { ParsedCall } from './types.ts';
import { nextParamOpen, PARAM_OPEN, parameterValueEnd, valueText } from './xml-value.ts';

const OPEN = /<(function|invoke)(?:\s*=\s*["']?([\w.-]+)["']?|\s+name\s*=\s*["']([\w.-]+)["'])\s*>/g;
/** Every XML-style call in the text, in order. */
export function xmlCalls(text: string): ParsedCall[] {
  const calls: ParsedCall[] = [];
  let cursor = 0;
  for (;;) {
    OPEN.lastIndex = cursor;
    const m = OPEN.exec(text);
    if (!m) break;
    const tag = m[1];
    const closeTag = `</${tag}>`;
    const name = m[2] ?? m[3];
    const args: Record<string, unknown> = {};
    let mends: string[] = [];
    let pos = m.index + m[0].length;
    for (;;) {
      const ws = /^\s*/.exec(text.slice(pos))![0].length;
      if (text.startsWith(closeTag, pos + ws)) { pos += ws + closeTag.length; break; }
      const p = nextParamOpen(text, pos + ws);
      if (p && p.index === pos + ws) {
        const start = p.index + p[0].length;
        const { end, after } = parameterValueEnd(text, start, closeTag);
        const key = p[1] ?? p[2];
        if (!(key in args)) args[key] = valueText(text.slice(start, end));
        pos = after;
        continue;
      }
      // Not a parameter: JSON arguments (or junk) up to the closing tag.
      const fnClose = text.indexOf(closeTag, pos);
      const body = text.slice(pos, fnClose >= 0 ? fnClose : text.length).trim();
      if (Object.keys(args).length === 0 && body.length > 0) {
        const json = jsonArguments(body, name);
        Object.assign(args, json.args);
        mends = json.mends;
      }
      pos = fnClose >= 0 ? fnClose + closeTag.length : text.length;
      break;
    }
    const call: ParsedCall = { name, arguments: args, via: tag === 'invoke' ? 'invoke' : 'xml', raw: text.slice(m.index, pos) };
    if (mends.length > 0) call.mends = mends;
    calls.push(call);
    cursor = pos;
  }
  return calls;
}

/** JSON arguments inside <function=NAME>: a plain object, or a whole {"name", "arguments"} call. */
function jsonArguments(body: string, name: string): { args: Record<string, unknown>; mends: string[] } {
  const read = parseLooseJson(body.replace(/^```[\w-]*\s*\n?|\n?```$/g, ''), { closeAtEnd: true });
  const value = read?.value;
  if (!read || !value || typeof value !== 'object' || Array.isArray(value)) return { args: {}, mends: [] };
  const inner = callsFromJsonText(body, 'xml+json')[0];
  if (inner && inner.name === name) return { args: inner.arguments, mends: inner.mends ?? [] };
  return { args: value as Record<string, unknown>, mends: read.mends.map((m) => JSON_MEND_LABELS[m]) };
}

const FN_OPEN_AT = new RegExp(OPEN.source, 'y');
const PARAM_OPEN_AT = new RegExp(PARAM_OPEN.source, 'y');

/**
 * Where the well-formed XML calls at the start of a <tool_call> body end (after the last </function>),
 * so a "</tool_call>" or "<tool_call>" inside a parameter value is part of the value (blocks.ts).
 * Well formed: <function=NAME> (any spelling above), parameters each closed by </parameter> before the
 * next one opens, then </function>. 'open' when the text ends before the calls close and nothing so far
 * is malformed (an answer still streaming); null when the body is not such calls.
 */
export function xmlCallsEnd(text: string, from: number): number | 'open' | null {
  let pos = from;
  let end: number | null = null;
  const skipSpace = () => { while (pos < text.length && /\s/.test(text[pos]!)) pos++; };
  for (;;) {
    skipSpace();
    FN_OPEN_AT.lastIndex = pos;
    const fn = FN_OPEN_AT.exec(text);
    if (!fn) return end ?? (isTagPrefix(text.slice(pos), ['<function', '<invoke']) ? 'open' : null);
    const closeTag = `</${fn[1]}>`;
    pos += fn[0].length;
    for (;;) {
      skipSpace();
      if (pos >= text.length) return 'open';
      if (text.startsWith(closeTag, pos)) { pos += closeTag.length; end = pos; break; }
      PARAM_OPEN_AT.lastIndex = pos;
      const p = PARAM_OPEN_AT.exec(text);
      if (!p) return isTagPrefix(text.slice(pos), ['<parameter', closeTag]) ? 'open' : null;
      const value = parameterValueEnd(text, p.index + p[0].length, closeTag);
      if (!value.closed) return value.end === text.length ? 'open' : null; // still streaming, or left open before the next tag
      pos = value.after;
    }
  }
}

/** The text is the start of one of these tags, not yet closed by ">" (an answer cut mid-tag). */
function isTagPrefix(rest: string, tags: string[]): boolean {
  if (rest === '' || rest.includes('>')) return false;
  return tags.some((t) => t.startsWith(rest) || (rest.startsWith(t) && rest.length < 80));
}
