// The OpenAI-compatible endpoint's options: its bounds (every one has a default; tests shorten the
// clocks) and the origins allowed to call it from a browser (none unless configured).
import { MAX_FRAME_BYTES, PING_EVERY_MS, SILENT_DROP_MS } from '../../src/api/relay-wire.ts';

export interface ApiLimits {
  /** A request body larger than this is answered 413. */
  maxBodyBytes: number;
  /** `messages` may hold at most this many items (400 beyond). */
  maxMessages: number;
  /** Host tabs served at once ('refused' beyond); sockets still saying hello count against twice this. */
  maxHosts: number;
  /** Host sockets from one address (429 beyond), so one client cannot take every host slot. */
  hostSocketsPerAddress: number;
  /** Requests open (running or queued in the host tab) per host; 429 beyond. */
  maxOpenPerHost: number;
  /** A bigger host frame closes the host's socket. */
  maxFrameBytes: number;
  /** A request still open after this long ends with an error (the host is told to cancel). */
  requestTotalMs: number;
  /** After a stream's first chunk, a gap longer than this between chunks ends it with an error. */
  chunkGapMs: number;
  /** The server pings each host this often, and drops a host it has not heard from in silentDropMs. */
  pingEveryMs: number;
  silentDropMs: number;
  /** A socket must say hello within this long. */
  helloWithinMs: number;
  /** How many keys of closed host tabs are remembered (their requests get 503 with a reason, not 401). */
  closedKeysRemembered: number;
}

export const DEFAULT_API_LIMITS: Readonly<ApiLimits> = {
  maxBodyBytes: 4 * 1024 * 1024,
  maxMessages: 1000,
  maxHosts: 16,
  hostSocketsPerAddress: 4,
  maxOpenPerHost: 32,
  maxFrameBytes: MAX_FRAME_BYTES,
  requestTotalMs: 10 * 60_000,
  chunkGapMs: 2 * 60_000,
  pingEveryMs: PING_EVERY_MS,
  silentDropMs: SILENT_DROP_MS,
  helloWithinMs: 10_000,
  closedKeysRemembered: 64,
};

export interface ApiOptions {
  limits?: Partial<ApiLimits>;
  /**
   * Browser origins (e.g. "https://editor.example.com") that may call the endpoint; "*" allows any.
   * Default from POOLED_API_CORS (comma-separated); unset = none: no Access-Control-* headers at all.
   */
  corsOrigins?: string[];
}

export interface ApiConfig { limits: ApiLimits; corsOrigins: ReadonlySet<string> }

export function apiConfig(opts: ApiOptions = {}, env: NodeJS.ProcessEnv = process.env): ApiConfig {
  const limits = { ...DEFAULT_API_LIMITS, ...opts.limits };
  for (const [name, v] of Object.entries(limits)) {
    if (!Number.isInteger(v) || v <= 0) throw new Error(`api limit ${name} must be a positive integer, not ${String(v)}`);
  }
  const origins = opts.corsOrigins ?? corsOriginsFromEnv(env);
  for (const o of origins) {
    if (o !== '*' && !isOrigin(o)) throw new Error(`a CORS origin is scheme://host[:port] with nothing after it, not ${JSON.stringify(o)}`);
  }
  return { limits, corsOrigins: new Set(origins) };
}

/** POOLED_API_CORS="https://a.example, http://localhost:5173" (or "*"). */
export function corsOriginsFromEnv(env: NodeJS.ProcessEnv): string[] {
  return (env.POOLED_API_CORS ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
}

function isOrigin(s: string): boolean {
  try {
    return new URL(s).origin === s;
  } catch {
    return false;
  }
}
