// Every per-tool limit in one place (docs/agent.md, Tools).
export const LIMITS = {
  listEntries: 200,           // list_dir
  readLines: 200,             // read_file lines per call
  readChars: 8_000,           // read_file characters per call
  searchHits: 30,             // search hits shown
  searchTimeoutMs: 2_000,     // a pattern that runs longer is refused
  searchLineChars: 200,       // one hit's text is cut to this
  resultChars: 6_000,         // any single tool result, start and end kept
} as const;
