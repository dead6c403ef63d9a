// Tolerant JSON for calls: code fences, several objects in a row, arrays of calls, arguments given as a
// JSON string, "parameters" for "arguments", an OpenAI-style {"function": {...}} wrapper.
import type { ParsedCall } from './types.ts';

/** Strips one ```lang ... ``` fence around the text, if any. */
export function stripFence(text: string): string {
  const m = /^\s*```[\w-]*[ \t]*\n([\s\S]*?)\n?```\s*$/.exec(text);
  return m ? m[1] : text;
}

/** The end (exclusive) of the balanced JSON object or array starting at `start`, or -1. */
export function balancedEnd(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') stack.push(c);
    else if (c === '}' || c === ']') {
      if (stack.pop() !== (c === '}' ? '{' : '[')) return -1;
      if (stack.length === 0) return i + 1;
    }
  }
  return -1;
}

/** JSON.parse, then once more with trailing commas removed. */
export function parseLooseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    try {
      return JSON.parse(text.replace(/,\s*([}\]])/g, '$1'));
    } catch {
      return undefined;
    }
  }
}

/** A call from a parsed JSON value, or null when it does not look like one. */
export function callFromJson(value: unknown, via: string, raw: string): ParsedCall | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  let obj = value as Record<string, unknown>;
  if (obj.function && typeof obj.function === 'object' && !Array.isArray(obj.function)) obj = obj.function as Record<string, unknown>;
  const name = obj.name ?? obj.tool ?? obj.tool_name;
  if (typeof name !== 'string' || name.length === 0) return null;
  let args = obj.arguments ?? obj.parameters ?? obj.args ?? obj.input ?? {};
  if (typeof args === 'string') args = parseLooseJson(args) ?? {};
  if (!args || typeof args !== 'object' || Array.isArray(args)) return null;
  return { name, arguments: { ...(args as Record<string, unknown>) }, via, raw };
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
    const end = balancedEnd(body, from);
    if (end < 0) {
      // Unbalanced (a brace too few at the end): try closing it.
      const value = parseLooseJson(body.slice(from) + '}');
      const call = callFromJson(value, via, body.slice(from));
      if (call) calls.push(call);
      break;
    }
    const raw = body.slice(from, end);
    const value = parseLooseJson(raw);
    if (Array.isArray(value)) {
      for (const v of value) {
        const call = callFromJson(v, via, raw);
        if (call) calls.push(call);
      }
    } else {
      const call = callFromJson(value, via, raw);
      if (call) calls.push(call);
    }
    i = end;
  }
  return calls;
}
