// Where a <tool_call> block ends, read the same way by the parser (a whole answer) and by the live view
// (an answer still streaming, src/agent/stream.ts). The markers "<tool_call>" and "</tool_call>" count
// only outside the call's own content:
//   - a body that starts with JSON ends after its JSON values, so a marker inside a JSON string is text;
//   - a body of well-formed XML calls (every <parameter=P> closed by </parameter>, the call by
//     </function>) ends after them, so a marker inside a parameter value is part of the value.
// Otherwise (a near miss the structure does not read) the first marker after the opening tag counts.
// While streaming, a body whose text so far ends inside a JSON string or an open parameter value has no
// end yet: what follows may still close the string or the value.
import { jsonValuesEnd } from './json-calls.ts';
import { xmlCallsEnd } from './xml-calls.ts';

export const OPEN_TAG = '<tool_call>';
export const CLOSE_TAG = '</tool_call>';

export interface BlockReading {
  /** Just after the opening tag. */
  bodyStart: number;
  /** Where the body ends: at the close tag, the next block's opening tag, or the end of the text. */
  bodyEnd: number;
  /** Where the block ends: after its close tag, or at bodyEnd when it has none. */
  end: number;
  /** The next block's opening tag at or after `end`, or -1. */
  next: number;
  /** Streaming only: the text ends inside the block's content, so the block is still open. */
  open: boolean;
}

/**
 * The block whose opening tag is at `at`. `streaming`: the text is an answer still being written (the
 * live view); the parser reads a whole answer.
 */
export function readToolCallBlock(text: string, at: number, streaming = false): BlockReading {
  const bodyStart = at + OPEN_TAG.length;
  const from = contentEnd(text, bodyStart, streaming);
  if (from === 'open') return { bodyStart, bodyEnd: text.length, end: text.length, next: -1, open: true };
  const close = text.indexOf(CLOSE_TAG, from);
  const nextOpen = text.indexOf(OPEN_TAG, from);
  let bodyEnd = close >= 0 ? close : text.length;
  if (nextOpen >= 0 && nextOpen < bodyEnd) bodyEnd = nextOpen;
  const end = bodyEnd === close ? close + CLOSE_TAG.length : bodyEnd;
  return { bodyStart, bodyEnd, end, next: nextOpen >= 0 && nextOpen >= bodyEnd ? nextOpen : -1, open: false };
}

/** Where the markers are looked for: after the body's JSON or XML content, or at its start. */
function contentEnd(text: string, bodyStart: number, streaming: boolean): number | 'open' {
  const json = jsonValuesEnd(text, bodyStart);
  if (!streaming) {
    if (json >= 0) return json;
    const xml = xmlCallsEnd(text, bodyStart);
    return typeof xml === 'number' ? xml : bodyStart;
  }
  const jsonStart = jsonBodyStart(text, bodyStart);
  if (jsonStart >= 0) return firstMarkerOutsideJson(text, json >= 0 ? json : jsonStart);
  const xml = xmlCallsEnd(text, bodyStart);
  return xml === 'open' ? 'open' : xml ?? bodyStart;
}

/** Where a JSON body's first value starts (after whitespace and an optional ```json fence line), or -1. */
function jsonBodyStart(text: string, bodyStart: number): number {
  const m = /^\s*(?:```[\w-]*[ \t]*\n)?\s*/.exec(text.slice(bodyStart, bodyStart + 256))!;
  const c = text[bodyStart + m[0].length];
  return c === '{' || c === '[' ? bodyStart + m[0].length : -1;
}

/**
 * Streaming: from the start of a JSON value (or the end of the complete ones), the first marker that is
 * not inside a string, 'open' when the text ends inside a string. Quotes of either kind open a string
 * (the parser reads Python-style strings too); after a value closes only another value keeps the scan
 * string-aware, anything else is plain text.
 */
function firstMarkerOutsideJson(text: string, from: number): number | 'open' {
  let depth = 0;
  let quote = '';
  for (let i = from; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (depth === 0 && c !== '{' && c !== '[' && !/\s/.test(c)) return i; // past the JSON: plain text from here
    if (c === '<' && (text.startsWith(OPEN_TAG, i) || text.startsWith(CLOSE_TAG, i))) return i;
    if (c === '"' || c === "'") quote = c;
    else if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && depth > 0) depth--;
  }
  return quote ? 'open' : text.length;
}
