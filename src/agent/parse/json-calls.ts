// Tolerant JSON for calls: code fences, several objects in a row, arrays of calls, arguments given as a
// JSON string, "parameters" for "arguments", an OpenAI-style {"function": {...}} wrapper, and the
// near misses loose-json.ts reads (each one named on the call as a mend).
import { JSON_MEND_LABELS, parseLooseJson, readLooseValue, type JsonMend } from './loose-json.ts';
import type { ParsedCall } from './types.ts';

export { parseLooseJson } from './loose-json.ts';

/** The mend a call gets when its arguments sit beside its name: {"name": "read_file", "path": "a.js"}. */
export const FLAT_ARGUMENTS = 'arguments given beside the name';

const ARGUMENT_KEYS = ['arguments', 'parameters', 'args', 'input'];
const NAME_KEYS = ['name', 'tool', 'tool_name'];
/** Keys of a call object that are not arguments when the arguments sit beside the name. */
const CALL_KEYS = new Set([...NAME_KEYS, 'type', 'id', 'function']);

/** Strips one ```lang ... ``` fence around the text, if any. */
export function stripFence(text: string): string {
  const m = /^\s*```[\w-]*[ \t]*\n([\s\S]*?)\n?```\s*$/.exec(text);
  return m ? m[1] : text;
}

/**
 * The end (exclusive) of the balanced object or array starting at `start`, or -1. Strings in either
 * quote are skipped, so braces inside them do not count.
 */
export function balancedEnd(text: string, start: number): number {
  const stack: string[] = [];
  let quote = '';
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '{' || c === '[') stack.push(c);
    else if (c === '}' || c === ']') {
      if (stack.pop() !== (c === '}' ? '{' : '[')) return -1;
      if (stack.length === 0) return i + 1;
    }
  }
  return -1;
}

const labels = (mends: readonly JsonMend[]) => mends.map((m) => JSON_MEND_LABELS[m]);

/** A call from a parsed JSON value, or null when it does not look like one. */
export function callFromJson(value: unknown, via: string, raw: string, mends: readonly JsonMend[] = []): ParsedCall | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  let obj = value as Record<string, unknown>;
  if (obj.function && typeof obj.function === 'object' && !Array.isArray(obj.function)) obj = obj.function as Record<string, unknown>;
  const name = obj.name ?? obj.tool ?? obj.tool_name;
  if (typeof name !== 'string' || name.length === 0) return null;
  const found: string[] = labels(mends);
  const argKey = ARGUMENT_KEYS.find((k) => k in obj);
  let args: unknown = argKey === undefined ? {} : obj[argKey];
  if (argKey === undefined) {
    const beside = Object.keys(obj).filter((k) => !CALL_KEYS.has(k));
    if (beside.length > 0) {
      args = Object.fromEntries(beside.map((k) => [k, obj[k]]));
      found.push(FLAT_ARGUMENTS);
    }
  }
  if (typeof args === 'string') {
    const inner = parseLooseJson(args, { closeAtEnd: true });
    args = inner?.value ?? {};
    for (const label of labels(inner?.mends ?? [])) if (!found.includes(label)) found.push(label);
  }
  if (!args || typeof args !== 'object' || Array.isArray(args)) return null;
  const call: ParsedCall = { name, arguments: { ...(args as Record<string, unknown>) }, via, raw };
  if (found.length > 0) call.mends = found;
  return call;
}

/** Every call in a text made of JSON values (objects one after another, or an array of them). */
export function callsFromJsonText(text: string, via: string): ParsedCall[] {
  const body = stripFence(text.trim());
  const calls: ParsedCall[] = [];
  let i = 0;
  while (i < body.length) {
    const start = body.slice(i).search(/[{[]/);
    if (start < 0) break;
    const from = i + start;
    // The block's text ends here, so braces left out at its very end can be closed.
    const read = readLooseValue(body, from, { closeAtEnd: true });
    if (!read) {
      // Not readable: skip the whole bracketed span (its inner objects are not calls of their own).
      const end = balancedEnd(body, from);
      if (end < 0) break;
      i = end;
      continue;
    }
    const raw = body.slice(from, read.end);
    for (const v of Array.isArray(read.value) ? read.value : [read.value]) {
      const call = callFromJson(v, via, raw, read.mends);
      if (call) calls.push(call);
    }
    i = read.end;
  }
  return calls;
}

/**
 * Where the JSON values at the start of a <tool_call> body end (after an optional ```json fence line),
 * or -1 when the body does not start with readable JSON. Lets the block's end be found after the
 * values, so a "</tool_call>" inside a JSON string does not end the block.
 */
export function jsonValuesEnd(text: string, from: number): number {
  let i = from;
  const fence = /^\s*```[\w-]*[ \t]*\n/.exec(text.slice(from, from + 64));
  if (fence) i += fence[0].length;
  let end = -1;
  for (;;) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (text[i] !== '{' && text[i] !== '[') return end;
    const read = readLooseValue(text, i);
    if (!read) return end;
    end = i = read.end;
  }
}
