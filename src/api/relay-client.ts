// The host tab's end of the relay (relay-wire.ts, protocol v1): one WebSocket to the server, opened with
// `hello` (the key and the models served), answering each `request` frame with `chunk`s and `done`, or
// `error`; a `cancel` aborts that request's signal (queued: it leaves the line; running: it stops within
// one token). Every frame received is checked by relay-wire's validators (a bad one is dropped and
// counted); ids not in flight are ignored. A dropped socket is opened again after a growing wait; a
// refused hello is not retried (the server said why: the status shows it). Requests in flight when the
// socket drops are aborted: their clients were answered by the server already.
import {
  HOST_SOCKET_PATH, KEY_REPLACED_CLOSE_CODE, PING_EVERY_MS, RELAY_WIRE_VERSION, SILENT_DROP_MS, readServerFrame, writeFrame,
  type HostFrame, type JsonObject, type RequestFrame, type WireModel,
} from './relay-wire.ts';

/** What the relay is doing, for the host screen. */
export type RelayStatus =
  | { kind: 'connecting' }
  | { kind: 'serving' }
  | { kind: 'refused'; why: string }
  | { kind: 'retrying'; inMs: number; why: string }
  | { kind: 'off' };

/** How a request ended, as the relay sends it. */
export type RequestEnd = { kind: 'done'; response?: JsonObject } | { kind: 'error'; status: number; message: string; type?: string } | { kind: 'cancelled' };

/** Runs one request: streams chunks with `chunk`, resolves with how it ended (never rejects for the request's own faults). */
export type RequestHandler = (request: RequestFrame, chunk: (data: JsonObject) => void, signal: AbortSignal) => Promise<RequestEnd>;

/** The part of a browser WebSocket the client uses (Node tests pass `ws`'s or a fake). */
export interface SocketLike {
  readonly readyState: number;
  send(text: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

export interface RelayClientOptions {
  /** The page's origin (http(s)://host:port): the socket goes to ws(s)://host:port/v1/host. */
  origin: string;
  key: string;
  /** The models served, asked at each (re)connect (the room's context can change). */
  models: () => WireModel[];
  handle: RequestHandler;
  onStatus?: (status: RelayStatus) => void;
  /** Default: the browser's WebSocket. */
  openSocket?: (url: string) => SocketLike;
  /** Waits between reconnects: first, doubled each time, at most max. */
  retryMs?: { first: number; max: number };
  /** Requests accepted at once (running + queued); more get a 429 at once. */
  maxInFlight?: number;
}

const OPEN = 1;

export function hostSocketUrl(origin: string): string {
  const u = new URL(origin);
  return `${u.protocol === 'https:' ? 'wss:' : 'ws:'}//${u.host}${HOST_SOCKET_PATH}`;
}

export class RelayClient {
  private socket: SocketLike | null = null;
  private readonly inFlight = new Map<string, AbortController>();
  private stopped = false;
  private retryWait: number;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private silenceTimer: ReturnType<typeof setTimeout> | undefined;
  /** Frames from the server that failed validation (dropped). */
  refusedFrames = 0;
  status: RelayStatus = { kind: 'off' };

  constructor(private readonly opts: RelayClientOptions) {
    this.retryWait = opts.retryMs?.first ?? 1000;
  }

  start(): void {
    this.stopped = false;
    this.connect();
  }

  /** Closes the socket for good and aborts what is in flight; `keyReplaced`: the server forgets the old key (401 from then on). */
  stop(o: { keyReplaced?: boolean } = {}): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.silenceTimer);
    this.abortAll();
    const s = this.socket;
    this.socket = null;
    if (o.keyReplaced) s?.close(KEY_REPLACED_CLOSE_CODE, 'a new key');
    else s?.close(1000, 'serving turned off');
    this.setStatus({ kind: 'off' });
  }

  get running(): number { return this.inFlight.size; }

  private connect(): void {
    this.setStatus({ kind: 'connecting' });
    let socket: SocketLike;
    try {
      const url = hostSocketUrl(this.opts.origin);
      socket = this.opts.openSocket ? this.opts.openSocket(url) : (new WebSocket(url) as unknown as SocketLike);
    } catch (e) {
      this.retry(`could not open the socket: ${(e as Error).message}`);
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      this.send({ t: 'hello', v: RELAY_WIRE_VERSION, key: this.opts.key, models: this.opts.models() });
      this.heard();
    };
    socket.onmessage = (ev) => { if (this.socket === socket) this.receive(ev.data); };
    socket.onerror = () => { /* onclose follows */ };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      clearTimeout(this.silenceTimer);
      this.abortAll();
      if (this.status.kind !== 'refused') this.retry('the connection to the server closed');
    };
  }

  private retry(why: string): void {
    if (this.stopped) return;
    const inMs = this.retryWait;
    this.retryWait = Math.min(this.retryWait * 2, this.opts.retryMs?.max ?? 30_000);
    this.setStatus({ kind: 'retrying', inMs, why });
    this.retryTimer = setTimeout(() => this.connect(), inMs);
  }

  /** The server is alive: a silent one (no ping for SILENT_DROP_MS) is dropped and dialled again. */
  private heard(): void {
    clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(() => this.socket?.close(4000, 'the server went silent'), SILENT_DROP_MS + PING_EVERY_MS);
  }

  private receive(data: unknown): void {
    this.heard();
    const checked = typeof data === 'string' ? readServerFrame(data) : { ok: false as const, why: 'not a text frame' };
    if (!checked.ok) { this.refusedFrames++; return; }
    const f = checked.frame;
    switch (f.t) {
      case 'ready':
        this.retryWait = this.opts.retryMs?.first ?? 1000;
        this.setStatus({ kind: 'serving' });
        return;
      case 'refused':
        this.setStatus({ kind: 'refused', why: f.why });
        this.socket?.close(1000, 'refused');
        return;
      case 'ping': this.send({ t: 'pong' }); return;
      case 'pong': return;
      case 'cancel': this.inFlight.get(f.id)?.abort(); return;
      case 'request': this.start1(f); return;
    }
  }

  private start1(request: RequestFrame): void {
    if (this.inFlight.has(request.id)) return;     // a repeated id: the first one answers
    if (this.inFlight.size >= (this.opts.maxInFlight ?? 32)) {
      this.send({ t: 'error', id: request.id, status: 429, message: 'the room is busy: too many requests waiting; try again shortly', type: 'rate_limit_error' });
      return;
    }
    const controller = new AbortController();
    this.inFlight.set(request.id, controller);
    const socket = this.socket;
    const chunk = (data: JsonObject) => { if (!controller.signal.aborted && this.socket === socket) this.send({ t: 'chunk', id: request.id, data }); };
    void this.opts.handle(request, chunk, controller.signal)
      .catch((e: Error): RequestEnd => ({ kind: 'error', status: 500, message: `the host failed: ${e.message}` }))
      .then((end) => {
        this.inFlight.delete(request.id);
        if (end.kind === 'cancelled' || controller.signal.aborted || this.socket !== socket) return;
        if (end.kind === 'done') this.send(end.response ? { t: 'done', id: request.id, response: end.response } : { t: 'done', id: request.id });
        else this.send({ t: 'error', id: request.id, status: end.status, message: end.message.slice(0, 4096), ...(end.type ? { type: end.type } : {}) });
      });
  }

  private abortAll(): void {
    for (const c of this.inFlight.values()) c.abort();
    this.inFlight.clear();
  }

  private send(frame: HostFrame): void {
    if (this.socket?.readyState === OPEN) this.socket.send(writeFrame(frame));
  }

  private setStatus(status: RelayStatus): void {
    this.status = status;
    this.opts.onStatus?.(status);
  }
}
