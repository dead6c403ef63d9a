// The structural part of a call grammar: "one of these literal strings, then that state". Tool names,
// parameter names and closing tags are all choices among a few literals; matching them byte by byte
// means a token may end anywhere inside one, or run across several (">\n<parameter=").

export interface Alternative<S> {
  text: string;                // ASCII literal
  next: S;                     // state once the whole literal is read
}

/** Step a choice among literals after `prefix` has been read: the next state, or null if no literal fits. */
export function stepAlternatives<S>(options: Alternative<S>[], prefix: string, b: number, at: (prefix: string) => S): S | null {
  const longer = prefix + String.fromCharCode(b);
  let partial = false;
  for (const o of options) {
    if (o.text === longer) return o.next;
    if (!partial && o.text.startsWith(longer)) partial = true;
  }
  return partial ? at(longer) : null;
}

/** The close tag: the </tool_call> added token when the vocabulary has one, else its text. */
export type CloseTag = 'symbol' | 'text';
export const TOOL_CALL_CLOSE = '</tool_call>';
