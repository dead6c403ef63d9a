// Bounds on what one API request may ask of the room (the server bounds the body's bytes before relaying it).
export const API_LIMITS = {
  messages: 1024,              // messages in one chat request
  tools: 128,                  // tools declared in one request
  toolNameChars: 64,           // OpenAI's own bound on a function name
  stopStrings: 4,              // OpenAI's bound on `stop`
  stopChars: 256,              // one stop string
  /** /v1/completions without max_tokens: OpenAI's default. */
  completionDefaultTokens: 16,
  /** Tool grammars kept built (one per distinct tools list; each holds its lazily built automaton). */
  grammarCache: 8,
} as const;
