// Calls written like code: search("foo", "src"), read_file(path="a.txt"), write_file('a.txt', `hi`).
// Positional arguments take the tool's parameter names in schema order; keyword arguments their own.
import type { ToolSchema } from '../../model/chat-types.ts';
import type { ParsedCall } from './types.ts';

type Literal = string | number | boolean | null;

/** Reads a comma-separated list of literals (optionally `key=` / `key:` prefixed) up to the closing ")". */
function readArguments(src: string, from: number): { items: { key?: string; value: Literal }[]; end: number } | null {
  const items: { key?: string; value: Literal }[] = [];
  let i = from;
  const skipSpace = () => { while (i < src.length && /\s/.test(src[i])) i++; };
  for (;;) {
    skipSpace();
    if (src[i] === ')') return { items, end: i + 1 };
    let key: string | undefined;
    const kw = /^([A-Za-z_]\w*)\s*[=:]\s*/.exec(src.slice(i));
    if (kw && !/^(true|false|null|None|True|False)\b/.test(kw[1])) {
      key = kw[1];
      i += kw[0].length;
    }
    const value = readLiteral(src, i);
    if (!value) return null;
    items.push(key === undefined ? { value: value.value } : { key, value: value.value });
    i = value.end;
    skipSpace();
    if (src[i] === ',') i++;
    else if (src[i] !== ')') return null;
  }
}

function readLiteral(src: string, i: number): { value: Literal; end: number } | null {
  const q = src[i];
  if (q === '"' || q === "'" || q === '`') {
    let out = '';
    for (let j = i + 1; j < src.length; j++) {
      const c = src[j];
      if (c === q) return { value: out, end: j + 1 };
      if (c === '\\' && j + 1 < src.length) {
        const n = src[++j];
        out += n === 'n' ? '\n' : n === 't' ? '\t' : n;
      } else out += c;
    }
    return null;
  }
  const m = /^(-?\d+(?:\.\d+)?|true|false|True|False|null|None)/.exec(src.slice(i));
  if (!m) return null;
  const t = m[1];
  const value = /^-?\d/.test(t) ? Number(t) : t === 'true' || t === 'True' ? true : t === 'false' || t === 'False' ? false : null;
  return { value, end: i + t.length };
}

/** Positional calls of declared tools in the text. `wholeLine`: only calls that are a line by themselves. */
export function positionalCalls(text: string, tools: readonly ToolSchema[], wholeLine: boolean): { call: ParsedCall; start: number; end: number }[] {
  if (tools.length === 0) return [];
  const names = tools.map((t) => t.name.replace(/[^\w]/g, '')).join('|');
  const re = new RegExp(`(^|[^\\w.])(${names})\\s*\\(`, 'gm');
  const found: { call: ParsedCall; start: number; end: number }[] = [];
  for (const m of text.matchAll(re)) {
    const start = m.index! + m[1].length;
    const parsed = readArguments(text, m.index! + m[0].length);
    if (!parsed) continue;
    if (wholeLine && !isAloneOnLine(text, start, parsed.end)) continue;
    const tool = tools.find((t) => t.name === m[2])!;
    const order = Object.keys(tool.parameters.properties);
    const args: Record<string, unknown> = {};
    let pos = 0;
    for (const item of parsed.items) {
      if (item.key !== undefined) args[item.key] = item.value;
      else if (pos < order.length) args[order[pos++]] = item.value;
    }
    found.push({ call: { name: tool.name, arguments: args, via: 'positional', raw: text.slice(start, parsed.end) }, start, end: parsed.end });
  }
  return found;
}

function isAloneOnLine(text: string, start: number, end: number): boolean {
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  const lineEnd = text.indexOf('\n', end);
  const before = text.slice(lineStart, start).trim();
  const after = text.slice(end, lineEnd < 0 ? text.length : lineEnd).trim();
  return /^`?$/.test(before) && /^`?;?$/.test(after);
}
