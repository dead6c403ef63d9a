// One host tab that said hello: its models, its open requests, and what each frame it sends does
// (HOST_FRAME_ACTIONS, one row per frame kind). A frame for a request that already ended (the client
// left, a deadline passed) is ignored: the host may not have seen the cancel yet.
import { randomBytes } from 'node:crypto';
import type { Response } from 'express';
import type { WebSocket } from 'ws';
import {
  writeFrame, type HostFrame, type JsonObject, type RequestKind, type ServerFrame, type WireModel,
} from '../../src/api/relay-wire.ts';
import type { KeyDigest } from './auth.ts';
import type { ApiLimits } from './limits.ts';
import { RelayedRequest } from './relayed-request.ts';

type FrameAction<T extends HostFrame['t']> = (host: HostConnection, frame: Extract<HostFrame, { t: T }>) => void;

const HOST_FRAME_ACTIONS: { [T in HostFrame['t']]: FrameAction<T> } = {
  hello: (host) => host.drop('hello sent twice'),
  chunk: (host, f) => host.request(f.id)?.chunk(f.data),
  done: (host, f) => host.request(f.id)?.done(f.response),
  error: (host, f) => host.request(f.id)?.fail(f.status, f.message, f.type),
  ping: (host) => host.send({ t: 'pong' }),
  pong: () => undefined,
};

export class HostConnection {
  /** Unix seconds, for /v1/models' `created`. */
  readonly since = Math.floor(Date.now() / 1000);
  private readonly open = new Map<string, RelayedRequest>();

  constructor(
    private readonly ws: WebSocket,
    readonly digest: KeyDigest,
    readonly models: readonly WireModel[],
    private readonly limits: ApiLimits,
  ) {}

  get openCount(): number { return this.open.size; }

  request(id: string): RelayedRequest | undefined { return this.open.get(id); }

  model(id: string): WireModel | undefined { return this.models.find((m) => m.id === id); }

  send(frame: ServerFrame): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(writeFrame(frame));
  }

  handle(frame: HostFrame): void {
    (HOST_FRAME_ACTIONS[frame.t] as FrameAction<HostFrame['t']>)(this, frame);
  }

  /** Hands a checked request to the host tab; null when it has maxOpenPerHost open already. */
  relay(kind: RequestKind, body: JsonObject, client: string, res: Response): RelayedRequest | null {
    if (this.open.size >= this.limits.maxOpenPerHost) return null;
    const id = `req_${randomBytes(12).toString('base64url')}`;
    const relayed = new RelayedRequest(id, body.stream === true, res, this.limits, (r, cancelHost) => {
      this.open.delete(r.id);
      if (cancelHost) this.send({ t: 'cancel', id: r.id });
    });
    this.open.set(id, relayed);
    this.send({ t: 'request', id, kind, body, client });
    return relayed;
  }

  /** A host that broke the protocol: its socket is closed, and closed() ends its requests. */
  drop(why: string): void {
    this.ws.close(1008, why.slice(0, 120));
    // A hostile host need not answer the close handshake; it gets a second, not ws's 30.
    setTimeout(() => this.ws.terminate(), 1000).unref();
  }

  /** The socket closed: every open request ends (503 before its first byte, an SSE error event after). */
  closed(): void {
    for (const r of [...this.open.values()]) r.fail(503, HOST_CLOSED_MESSAGE, 'server_error', false);
  }
}

export const HOST_CLOSED_MESSAGE = "the host tab serving this room is closed; open it and turn on Serve";
