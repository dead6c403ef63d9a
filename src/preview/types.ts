// Shapes shared by the preview host (browser), the headless driver (Node) and the agent tools.
import type { ServedPort } from '../agent/tool-types.ts';
import { PREVIEW_TOOL_LIMITS } from '../agent/limits.ts';

/** One console line of a served page. seq is global across ports and only grows: it is the cursor. */
export interface PreviewLogLine {
  seq: number;
  port: number;
  level: 'log' | 'info' | 'warn' | 'error' | 'debug';
  /** console = console.*; error = uncaught error; rejection = unhandled rejection; network = 404 / load failure; system = the preview itself */
  source: 'console' | 'error' | 'rejection' | 'network' | 'system';
  text: string;
}

/** A served port resolved to what the preview opened there: a folder and the page inside it. */
export interface ServedPage {
  port: number;
  /** project-relative folder ('' = root) */
  folder: string;
  /** page opened inside the folder, usually 'index.html' */
  page: string;
}

/** A ServedPage, or the agent session's record of a serve call (ServedPort: path as given to serve). */
export type RestorablePort = ServedPage | ServedPort;

export interface ServeResult extends ServedPage {
  /** true when the page fired load within the wait */
  loaded: boolean;
  /** milliseconds until load (or the wait when it did not load) */
  ms: number;
  /** every error line the page reported during the wait, oldest first */
  errors: string[];
  /** true when the same folder was already served and was reloaded */
  reloaded: boolean;
  /** Set when the page was not served: it stalled the preview sandbox and its files have not changed since (why, in words). */
  stalled?: string;
}

export interface LogsResult {
  lines: PreviewLogLine[];
  /** lines after the cursor that did not fit the caps (the oldest ones) */
  skipped: number;
  next: number;
}

export type RunJsResult =
  /** note: how the run ended when it is not the code's own end (the page reloaded itself meanwhile) */
  | { status: 'done'; output: string[]; ms: number; note?: string }
  | { status: 'error'; output: string[]; error: string; ms: number }
  | { status: 'timeout'; output: string[]; ms: number };

/** What the agent tools and the UI need from a preview, in the browser or driven headless from Node. */
export interface PreviewApi {
  serve(folder?: string): Promise<ServeResult>;
  logs(cursor?: number): Promise<LogsResult>;
  runJs(code: string, port?: number): Promise<RunJsResult>;
  served(): Promise<ServedPage[]>;
  /** Serves these ports again (a reopened session). Accepts the agent session's { port, path } too. */
  restore(ports: RestorablePort[]): Promise<void>;
}

/** The preview tools' limits (docs/agent.md, Tools; the numbers are in src/agent/limits.ts) and the preview's own. */
export const PREVIEW_LIMITS = {
  ...PREVIEW_TOOL_LIMITS,
  keptLogLines: 2_000,
  maxServedBytes: 64 * 1024 * 1024,
  /** A page's localStorage, and its sessionStorage, each: keys and values in UTF-16 code units (browsers allow an origin ~5 MB). */
  storageChars: 5 * 1024 * 1024,
  /** Changes per storage message from a frame (frame-runtime.js sends at most this many). */
  storageBatch: 5_000,
} as const;

/** A request the preview refuses (bad folder, unknown port …): the message says what to do. */
export class PreviewError extends Error {
  override name = 'PreviewError';
}
