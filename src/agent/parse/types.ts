// What the parser gives the loop: the calls found in a raw reply, and the reply's text without them.

export interface ParsedCall {
  name: string;
  arguments: Record<string, unknown>;
  /** Which spelling it was found in (for the timeline and tests), e.g. "xml", "json", "fence", "positional". */
  via: string;
  /** The raw text of the call as the model wrote it. */
  raw: string;
}

export interface ParseResult {
  calls: ParsedCall[];
  /** The reply with every call removed and trimmed: the model's prose (the answer when there is no call). */
  text: string;
}
