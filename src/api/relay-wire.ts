// The relay wire protocol v1: the frames between the host tab that serves a room's model and the
// server that answers OpenAI-compatible HTTP requests for it (docs/api.md). JSON text frames over one
// WebSocket at HOST_SOCKET_PATH, same origin as the app. The server keeps no conversation: it checks a
// client's request, hands it to the host as a `request` frame, and writes the host's `chunk`, `done` and
// `error` frames back to the client.
//
// Every frame that crosses the socket is checked here, in both directions, by one validator per frame
// kind (the tables HOST_FRAME_CHECKS and SERVER_FRAME_CHECKS). Unknown fields are ignored, so a later
// version may add optional fields without breaking an older peer; a frame of an unknown kind is refused.
// This file imports nothing: the browser (host tab) and Node (server) both use it.

export const RELAY_WIRE_VERSION = 1;
/** The WebSocket path the host tab connects to. */
export const HOST_SOCKET_PATH = '/v1/host';
/**
 * The close code a host tab uses when the person made a new key: the server forgets the old key at once
 * (its clients get 401, as for any unknown key) instead of remembering it as a closed tab's (503).
 */
export const KEY_REPLACED_CLOSE_CODE = 4001;
/** A frame bigger than this closes the socket (both sides). */
export const MAX_FRAME_BYTES = 4 * 1024 * 1024;
/** The API key the host tab generates and shows: 32..128 of [A-Za-z0-9_-]. */
export const API_KEY_PATTERN = /^[A-Za-z0-9_-]{32,128}$/;
/** Request ids the server makes: short, safe in logs. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const MAX_MODELS = 4;
export const MAX_MODEL_ID_CHARS = 256;
/** contextSize is a positive int no larger than this. */
export const MAX_CONTEXT_SIZE = 1 << 24;
export const MAX_CLIENT_CHARS = 200;
export const MAX_MESSAGE_CHARS = 4096;
export const MAX_WHY_CHARS = 500;
export const MAX_ERROR_TYPE_CHARS = 64;
/** The server pings every PING_EVERY_MS; a peer silent for SILENT_DROP_MS is dropped. */
export const PING_EVERY_MS = 15_000;
export const SILENT_DROP_MS = 45_000;

export type JsonObject = Record<string, unknown>;
export type RequestKind = 'chat' | 'completion';
export const REQUEST_KINDS: readonly RequestKind[] = ['chat', 'completion'];

export interface WireModel { id: string; contextSize: number }

// host -> server
export interface HelloFrame { t: 'hello'; v: 1; key: string; models: WireModel[] }
/** One OpenAI streaming chunk object, already in OpenAI's format; the server writes `data: JSON\n\n`. */
export interface ChunkFrame { t: 'chunk'; id: string; data: JsonObject }
/** Stream: the server writes `data: [DONE]` and ends. Non-stream: `response` is the whole OpenAI response (JSON 200). */
export interface DoneFrame { t: 'done'; id: string; response?: JsonObject }
/** Before any chunk: that HTTP status with OpenAI's error body; after chunks began: one SSE error event, then end. */
export interface ErrorFrame { t: 'error'; id: string; status: number; message: string; type?: string }
// server -> host
export interface ReadyFrame { t: 'ready' }
export interface RefusedFrame { t: 'refused'; why: string }
/** `body` is the client's JSON body, already size-bounded and shape-checked; `client` its User-Agent, cut to 200 chars. */
export interface RequestFrame { t: 'request'; id: string; kind: RequestKind; body: JsonObject; client: string }
/** The client disconnected or aborted: the host stops within one token. */
export interface CancelFrame { t: 'cancel'; id: string }
// both ways
export interface PingFrame { t: 'ping' }
export interface PongFrame { t: 'pong' }

export type HostFrame = HelloFrame | ChunkFrame | DoneFrame | ErrorFrame | PingFrame | PongFrame;
export type ServerFrame = ReadyFrame | RefusedFrame | RequestFrame | CancelFrame | PingFrame | PongFrame;

/** A checked frame, or why it was refused. */
export type Checked<F> = { ok: true; frame: F } | { ok: false; why: string };

// ---- field checks: each returns a reason, or null when the field is fine ----

type FieldCheck = (o: JsonObject) => string | null;

export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A string of 1..max characters with no control characters (ids and names end up in logs and UIs). */
function plainString(v: unknown, max: number): v is string {
  return typeof v === 'string' && v.length >= 1 && v.length <= max && !/[\u0000-\u001f\u007f]/.test(v);
}

const requestId: FieldCheck = (o) => (typeof o.id === 'string' && REQUEST_ID_PATTERN.test(o.id) ? null : 'id must be 1-64 of [A-Za-z0-9_-]');

function checkModel(m: unknown, i: number): string | null {
  if (!isJsonObject(m)) return `models[${i}] must be an object`;
  if (!plainString(m.id, MAX_MODEL_ID_CHARS)) return `models[${i}].id must be 1-${MAX_MODEL_ID_CHARS} printable characters`;
  const c = m.contextSize;
  if (typeof c !== 'number' || !Number.isInteger(c) || c < 1 || c > MAX_CONTEXT_SIZE) return `models[${i}].contextSize must be an integer 1..${MAX_CONTEXT_SIZE}`;
  return null;
}

function checkHello(o: JsonObject): string | null {
  if (o.v !== RELAY_WIRE_VERSION) return `v must be ${RELAY_WIRE_VERSION}`;
  if (typeof o.key !== 'string' || !API_KEY_PATTERN.test(o.key)) return 'key must be 32-128 of [A-Za-z0-9_-]';
  if (!Array.isArray(o.models) || o.models.length < 1 || o.models.length > MAX_MODELS) return `models must be a list of 1-${MAX_MODELS}`;
  for (let i = 0; i < o.models.length; i++) {
    const why = checkModel(o.models[i], i);
    if (why) return why;
  }
  const ids = new Set(o.models.map((m) => (m as WireModel).id));
  return ids.size === o.models.length ? null : 'model ids must differ';
}

function checkChunk(o: JsonObject): string | null {
  return requestId(o) ?? (isJsonObject(o.data) ? null : 'data must be an object');
}

function checkDone(o: JsonObject): string | null {
  return requestId(o) ?? (o.response === undefined || isJsonObject(o.response) ? null : 'response must be an object when present');
}

function checkError(o: JsonObject): string | null {
  const why = requestId(o);
  if (why) return why;
  if (typeof o.status !== 'number' || !Number.isInteger(o.status) || o.status < 400 || o.status > 599) return 'status must be an integer 400..599';
  if (typeof o.message !== 'string' || o.message.length > MAX_MESSAGE_CHARS) return `message must be a string of at most ${MAX_MESSAGE_CHARS} characters`;
  if (o.type !== undefined && !plainString(o.type, MAX_ERROR_TYPE_CHARS)) return `type must be 1-${MAX_ERROR_TYPE_CHARS} printable characters when present`;
  return null;
}

function checkRefused(o: JsonObject): string | null {
  return typeof o.why === 'string' && o.why.length <= MAX_WHY_CHARS ? null : `why must be a string of at most ${MAX_WHY_CHARS} characters`;
}

function checkRequest(o: JsonObject): string | null {
  const why = requestId(o);
  if (why) return why;
  if (!REQUEST_KINDS.includes(o.kind as RequestKind)) return `kind must be one of ${REQUEST_KINDS.join(', ')}`;
  if (!isJsonObject(o.body)) return 'body must be an object';
  if (typeof o.client !== 'string' || o.client.length > MAX_CLIENT_CHARS) return `client must be a string of at most ${MAX_CLIENT_CHARS} characters`;
  return null;
}

const nothingMore: FieldCheck = () => null;

/** One validator per frame kind the host sends. */
export const HOST_FRAME_CHECKS: Readonly<Record<HostFrame['t'], FieldCheck>> = {
  hello: checkHello,
  chunk: checkChunk,
  done: checkDone,
  error: checkError,
  ping: nothingMore,
  pong: nothingMore,
};

/** One validator per frame kind the server sends. */
export const SERVER_FRAME_CHECKS: Readonly<Record<ServerFrame['t'], FieldCheck>> = {
  ready: nothingMore,
  refused: checkRefused,
  request: checkRequest,
  cancel: requestId,
  ping: nothingMore,
  pong: nothingMore,
};

function checkWith<F>(table: Readonly<Record<string, FieldCheck>>, value: unknown): Checked<F> {
  if (!isJsonObject(value)) return { ok: false, why: 'a frame must be a JSON object' };
  const t = value.t;
  if (typeof t !== 'string' || !Object.prototype.hasOwnProperty.call(table, t)) return { ok: false, why: 'unknown frame kind' };
  const why = table[t]!(value);
  return why ? { ok: false, why: `${t}: ${why}` } : { ok: true, frame: value as F };
}

function parseText(text: string): { ok: true; value: unknown } | { ok: false; why: string } {
  if (text.length > MAX_FRAME_BYTES) return { ok: false, why: 'frame too big' };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, why: 'a frame must be JSON' };
  }
}

/** Checks a parsed value as a frame the host sends (the server's side). */
export function checkHostFrame(value: unknown): Checked<HostFrame> {
  return checkWith<HostFrame>(HOST_FRAME_CHECKS, value);
}

/** Checks a parsed value as a frame the server sends (the host tab's side). */
export function checkServerFrame(value: unknown): Checked<ServerFrame> {
  return checkWith<ServerFrame>(SERVER_FRAME_CHECKS, value);
}

/** Parses and checks one text frame from the host. */
export function readHostFrame(text: string): Checked<HostFrame> {
  const p = parseText(text);
  return p.ok ? checkHostFrame(p.value) : p;
}

/** Parses and checks one text frame from the server. */
export function readServerFrame(text: string): Checked<ServerFrame> {
  const p = parseText(text);
  return p.ok ? checkServerFrame(p.value) : p;
}

/** The text of a frame, ready to send. */
export function writeFrame(frame: HostFrame | ServerFrame): string {
  return JSON.stringify(frame);
}
