// Every limit the agent keeps, in one place (docs/agent.md explains each one). Other modules import
// these; none of them hard-codes a number of its own.

/** Steps one request may take. The last one is the closing answer, without tools (see loop.ts). */
export const MAX_STEPS = 30;
/** Answers one request may run again after the room lost a device mid-answer and dealt its layers again. */
export const MAX_RERUNS = 2;

/** Per-tool limits (the tool table in docs/agent.md). */
export const TOOL_LIMITS = {
  listEntries: 200,           // list_dir entries shown
  readLines: 200,             // read_file lines per call
  readChars: 5_900,           // read_file characters per call: one tool result (6,000) less room for its footer (read-tools.ts)
  searchHits: 30,             // search hits shown
  searchTimeoutMs: 2_000,     // a pattern that runs longer is refused
  searchLineChars: 200,       // one hit's text is cut to this
  resultChars: 6_000,         // any single tool result, start and end kept
} as const;

/** The preview tools' limits (src/preview adds its own internal ones beside these). */
export const PREVIEW_TOOL_LIMITS = {
  defaultPort: 5173,
  loadWaitMs: 2_000,          // serve waits this long for the page's load event
  firstErrorLines: 8,         // serve shows the page's first errors, up to this many lines
  logLines: 40,               // preview_logs lines per call
  logChars: 3_000,            // preview_logs characters per call
  runJsMs: 3_000,             // run_js time limit
} as const;

/**
 * Default context by model size (budget.ts defaultContextFor; ?ctx= overrides): up to about 4B
 * parameters 8,192; bigger dense models 16,384; mixture-of-experts models 32,768.
 */
export const DEFAULT_CONTEXT = { small: 8_192, dense: 16_384, moe: 32_768 } as const;
/** "Up to 4B": Qwen3-4B counts 4.0B parameters, Qwen3-8B 8.2B. */
export const SMALL_MODEL_PARAMETERS = 5e9;

/** Answers and the context (budget.ts turns these into the conversation budget). */
export const ANSWER_CAP = 8_192;          // tokens per answer, less when the context is nearly full
export const ANSWER_MARGIN = 64;          // added to the space kept for the answer
export const COMPACT_TARGET = 0.6;        // compaction shortens the conversation to this share of the budget

/** Compaction (compaction.ts). */
export const KEEP_RECENT_STEPS = 2;       // the newest steps' results and written content are never stubbed
export const STUB_MIN_CHARS = 200;        // shorter results and arguments are kept as they are

/** Hints (hints.ts): how often each may be sent per request. */
export const HINT_SENDS = { 'call-format': 2, 'long-files': 2, 'copy-old': 2, 'one-error': 1 } as const;
/** A write_file whose content has more lines than this is "long": a failure gets the long-files hint. */
export const LONG_WRITE_LINES = 100;

/** Stuck detection (stuck.ts). */
export const CALL_STREAK_STOP = 3;        // the same call with no progress this many steps in a row
export const PAGE_ERROR_NOTE = 3;         // the same first page error after changes: a note …
export const PAGE_ERROR_STOP = 5;         // … and a stop

/**
 * Garbage detection (grammar/forced-tokens.ts): an answer is stopped when the call format overrules the
 * model's own top choice this many tokens in a row, or for more than FORCED_SHARE of a call's tokens
 * once it has FORCED_MIN_CALL_TOKENS.
 */
export const FORCED_RUN_STOP = 64;
export const FORCED_SHARE = 0.5;
export const FORCED_MIN_CALL_TOKENS = 32;

/** Timeline items kept (and saved with the session). */
export const TIMELINE_LIMIT = 200;
