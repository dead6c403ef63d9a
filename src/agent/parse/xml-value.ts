// Where an XML parameter value ends: the ONE definition the call grammar (grammar/xml-grammar.ts), the
// parser (xml-calls.ts) and the live view (blocks.ts, through xmlCallsEnd) all use.
//
// The format writes  <parameter=P>\nVALUE\n</parameter> . A value that opens with that newline — every
// value the grammar samples, since it writes the newline itself — ends at the first "\n</parameter>":
// any other text inside it is the value's, "</parameter>" without a newline before it and
// "<parameter=x>" included (a file that documents the call format stays whole). The grammar holds the
// model to the same rule: inside a value only "\n</parameter>" ends it.
// A value written without the newline (`<parameter=p>a.js</parameter>`, a near miss only ever made
// without the grammar) ends at the first "</parameter>", or, left unclosed, where the next parameter
// opens or its function closes.

/** What a value opens with in the format (and what the grammar writes after `<parameter=P>`). */
export const VALUE_START = '\n';
/** What ends a value that opened with VALUE_START. */
export const VALUE_END = '\n</parameter>';
export const PARAM_CLOSE = '</parameter>';

/** Every spelling of a parameter's opening tag: <parameter=P>, <parameter = P>, <parameter name="P">. */
export const PARAM_OPEN = /<parameter(?:\s*=\s*["']?([\w.-]+)["']?|\s+name\s*=\s*["']([\w.-]+)["'])\s*>/g;

export function nextParamOpen(text: string, from: number): RegExpExecArray | null {
  PARAM_OPEN.lastIndex = from;
  return PARAM_OPEN.exec(text);
}

export interface ValueEnd {
  /** Where the value's raw text ends (exclusive; the format's newlines are in it, valueText drops them). */
  end: number;
  /** Where reading goes on after it (past its closing tag when it has one). */
  after: number;
  /** Closed by its tag; false: it ran to the next parameter, its function's close or the end of the text. */
  closed: boolean;
}

/** The end of the value that starts at `start` (just after its opening tag), in a call closed by `fnClose`. */
export function parameterValueEnd(text: string, start: number, fnClose = '</function>'): ValueEnd {
  if (text.startsWith(VALUE_START, start) || text.startsWith('\r\n', start)) {
    const close = text.indexOf(VALUE_END, start);
    // The newline before </parameter> is the format's: the raw text keeps it, valueText drops it.
    if (close >= 0) return { end: close + 1, after: close + VALUE_END.length, closed: true };
  }
  const close = text.indexOf(PARAM_CLOSE, start);
  const following = nextParamOpen(text, start);
  if (close >= 0 && (!following || close < following.index)) return { end: close, after: close + PARAM_CLOSE.length, closed: true };
  const fn = text.indexOf(fnClose, start);
  const end = Math.min(following ? following.index : text.length, fn >= 0 ? fn : text.length);
  return { end, after: end, closed: false };
}

/** A parameter value as written between its tags: one newline each side belongs to the format. */
export function valueText(raw: string): string {
  return raw.replace(/^\r?\n/, '').replace(/\r?\n$/, '');
}
