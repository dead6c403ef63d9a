// A fake host tab for the API server's tests: a Node `ws` client that speaks the relay wire protocol
// (src/api/relay-wire.ts) from a script. It says hello with a key and models, records every frame the
// server sends, and answers each request with whatever the test's `answer` function sends (chunks,
// done, error, raw garbage, or nothing: a stalled host). 127.0.0.1 only.
import WebSocket from 'ws';
import {
  HOST_SOCKET_PATH, readServerFrame, writeFrame,
  type HostFrame, type JsonObject, type RequestFrame, type ServerFrame, type WireModel,
} from '../../src/api/relay-wire.ts';

export interface FakeHost {
  /** 'ready', or 'refused: why', or 'http 403' / 'closed' when the socket never got that far. */
  first: string;
  frames: ServerFrame[];
  send(frame: HostFrame | string): void;
  /** Resolves with the first frame (seen or to come) that `match` accepts; rejects after `ms`. */
  waitFor<F extends ServerFrame>(match: (f: ServerFrame) => f is F, ms?: number): Promise<F>;
  /** The close code, once closed. */
  closed: Promise<number>;
  close(): Promise<void>;
}

export type Answer = (request: RequestFrame, host: FakeHost) => void;

export interface FakeHostOptions {
  key: string;
  models?: WireModel[];
  origin?: string;
  answer?: Answer;
  /** Extra headers on the upgrade (a reverse proxy's). */
  headers?: Record<string, string>;
  /** The socket's path (default HOST_SOCKET_PATH). */
  path?: string;
  /** Answer the server's pings (default true). */
  pong?: boolean;
}

export const FAKE_MODELS: WireModel[] = [{ id: 'pooled-tiny', contextSize: 512 }];

export function connectFakeHost(baseUrl: string, opts: FakeHostOptions): Promise<FakeHost> {
  const url = `${baseUrl.replace(/^http/, 'ws')}${opts.path ?? HOST_SOCKET_PATH}`;
  const ws = new WebSocket(url, { origin: opts.origin ?? baseUrl, headers: opts.headers });
  const frames: ServerFrame[] = [];
  const waiters = new Set<(f: ServerFrame) => void>();
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  const host: FakeHost = {
    first: '',
    frames,
    send: (frame) => ws.send(typeof frame === 'string' ? frame : writeFrame(frame)),
    waitFor: (match, ms = 5000) => new Promise((resolve, reject) => {
      const seen = frames.find(match);
      if (seen) { resolve(seen); return; }
      const timer = setTimeout(() => { waiters.delete(check); reject(new Error(`no matching frame within ${ms} ms`)); }, ms);
      const check = (f: ServerFrame) => { if (match(f)) { clearTimeout(timer); waiters.delete(check); resolve(f); } };
      waiters.add(check);
    }),
    closed,
    close: async () => { ws.close(); await closed; },
  };
  ws.on('message', (data) => {
    const read = readServerFrame(String(data));
    if (!read.ok) throw new Error(`the server sent a bad frame: ${read.why}`);
    const f = read.frame;
    frames.push(f);
    for (const w of [...waiters]) w(f);
    if (f.t === 'ping' && opts.pong !== false) host.send({ t: 'pong' });
    if (f.t === 'request') opts.answer?.(f, host);
  });
  ws.on('open', () => host.send({ t: 'hello', v: 1, key: opts.key, models: opts.models ?? FAKE_MODELS }));
  return new Promise((resolve) => {
    ws.once('unexpected-response', (_req, res) => { host.first = `http ${res.statusCode}`; resolve(host); });
    ws.once('error', () => { host.first ||= 'error'; resolve(host); });
    closed.then(() => { host.first ||= 'closed'; resolve(host); });
    host.waitFor((f): f is ServerFrame => f.t === 'ready' || f.t === 'refused', 10_000).then(
      (f) => { host.first = f.t === 'refused' ? `refused: ${f.why}` : 'ready'; resolve(host); },
      () => undefined,
    );
  });
}

export const isRequest = (f: ServerFrame): f is RequestFrame => f.t === 'request';
export const isCancel = (id: string) => (f: ServerFrame): f is Extract<ServerFrame, { t: 'cancel' }> => f.t === 'cancel' && f.id === id;

/** An OpenAI chat.completion.chunk carrying `delta`. */
export function chatChunk(id: string, model: string, delta: JsonObject, finish: string | null = null): JsonObject {
  return { id, object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** Streams `text` as chat chunks of 4 characters, then done. */
export function streamChat(req: RequestFrame, host: FakeHost, text: string): void {
  const model = String(req.body.model);
  host.send({ t: 'chunk', id: req.id, data: chatChunk(req.id, model, { role: 'assistant', content: '' }) });
  for (let i = 0; i < text.length; i += 4) host.send({ t: 'chunk', id: req.id, data: chatChunk(req.id, model, { content: text.slice(i, i + 4) }) });
  host.send({ t: 'chunk', id: req.id, data: chatChunk(req.id, model, {}, 'stop') });
  host.send({ t: 'done', id: req.id });
}
