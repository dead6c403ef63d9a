// What the parser gives the loop: the calls found in a raw reply, and the reply's text without them.

export interface ParsedCall {
  name: string;
  arguments: Record<string, unknown>;
  /** Which spelling it was found in (for the timeline and tests), e.g. "xml", "json", "fence", "positional". */
  via: string;
  /** The raw text of the call as the model wrote it. */
  raw: string;
  /**
   * What the parser had to mend to read it (e.g. "Python-style dict read as JSON"); absent when the
   * call was written cleanly. Repairs add their own lines after these, and the call card shows both.
   */
  mends?: string[];
}

export interface ParseResult {
  calls: ParsedCall[];
  /** The reply with every call removed and trimmed: the model's prose (the answer when there is no call). */
  text: string;
}
