// The host tabs' WebSocket at HOST_SOCKET_PATH. An upgrade is taken only from a page of the server's own
// origin (Origin's host = the Host header; anything else is refused, so another site's page cannot
// register a host in a visitor's browser), and only while fewer than 2 × maxHosts sockets are open and
// fewer than hostSocketsPerAddress from the same address. The
// first frame must be a valid hello within helloWithinMs; then the host is registered (or refused: its
// key is held by a live host, or the server is full). Every frame is checked (src/api/relay-wire.ts): a
// frame that is not valid, or binary, or too big closes the socket, and its open requests end.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { HOST_SOCKET_PATH, KEY_REPLACED_CLOSE_CODE, readHostFrame, writeFrame, type ServerFrame } from '../../src/api/relay-wire.ts';
import { PerAddress, refuseUpgrade, remoteAddress } from '../signal-guard.ts';
import { keyDigest } from './auth.ts';
import { HostConnection } from './host-connection.ts';
import type { HostRegistry } from './host-registry.ts';
import type { ApiLimits } from './limits.ts';

export class HostSockets {
  private readonly wss: WebSocketServer;
  private readonly heard = new Map<WebSocket, number>();
  private readonly pinger: NodeJS.Timeout;
  private readonly perAddress: PerAddress;

  constructor(private readonly registry: HostRegistry, private readonly limits: ApiLimits) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxFrameBytes });
    this.perAddress = new PerAddress(limits.hostSocketsPerAddress);
    this.pinger = setInterval(() => this.pingAll(), limits.pingEveryMs);
    this.pinger.unref();
  }

  /** Takes an upgrade for the host path (returns true: answered or refused); false for other paths. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    if (new URL(req.url ?? '/', 'http://x').pathname !== HOST_SOCKET_PATH) return false;
    if (!sameOrigin(req)) { refuseUpgrade(socket, 403, 'host sockets are taken from the app\'s own pages only'); return true; }
    if (this.heard.size >= 2 * this.limits.maxHosts) { refuseUpgrade(socket, 503, 'too many host sockets'); return true; }
    const release = this.perAddress.take(remoteAddress(req));
    if (!release) { refuseUpgrade(socket, 429, 'too many host sockets from this address'); return true; }
    socket.once('close', release);
    this.wss.handleUpgrade(req, socket, head, (ws) => { ws.once('close', release); this.accept(ws); });
    return true;
  }

  close(): void {
    clearInterval(this.pinger);
    for (const ws of this.heard.keys()) ws.terminate();
  }

  private accept(ws: WebSocket): void {
    this.heard.set(ws, Date.now());
    let host: HostConnection | undefined;
    let refused = false;
    const refuse = (why: string) => {
      refused = true;
      send(ws, { t: 'refused', why: why.slice(0, 500) });
      ws.close(1008, 'refused');
    };
    const helloTimer = setTimeout(() => refuse('no hello'), this.limits.helloWithinMs);
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (refused) return; // what a refused socket sends while it closes is not read
      this.heard.set(ws, Date.now());
      const read = isBinary ? { ok: false as const, why: 'frames are JSON text' } : readHostFrame(rawText(data));
      if (!read.ok) { if (host) host.drop(read.why); else refuse(read.why); return; }
      if (host) { host.handle(read.frame); return; }
      if (read.frame.t !== 'hello') { refuse('the first frame must be hello'); return; }
      clearTimeout(helloTimer);
      const candidate = new HostConnection(ws, keyDigest(read.frame.key), read.frame.models, this.limits);
      const why = this.registry.add(candidate);
      if (why) { refuse(why); return; }
      host = candidate;
      send(ws, { t: 'ready' });
    });
    ws.on('error', () => undefined); // too big a frame, a broken socket: 'close' follows
    ws.on('close', (code) => {
      clearTimeout(helloTimer);
      this.heard.delete(ws);
      if (!host) return;
      this.registry.remove(host, { remember: code !== KEY_REPLACED_CLOSE_CODE });
      host.closed();
    });
  }

  /** Pings every socket; one silent for silentDropMs is dropped (its requests end on 'close'). */
  private pingAll(): void {
    const now = Date.now();
    for (const [ws, at] of this.heard) {
      if (now - at > this.limits.silentDropMs) ws.terminate();
      else send(ws, { t: 'ping' });
    }
  }
}

function send(ws: WebSocket, frame: ServerFrame): void {
  if (ws.readyState === ws.OPEN) ws.send(writeFrame(frame));
}

function rawText(data: RawData): string {
  return Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
}

/**
 * The page that opens the socket is one of ours: its Origin names the host the request was sent to (the
 * Host header, or the X-Forwarded-Host a reverse proxy that rewrites Host sets; a page cannot set either
 * on a WebSocket, so another site's page cannot pass).
 */
function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (typeof origin !== 'string') return false;
  const forwarded = String(req.headers['x-forwarded-host'] ?? '').split(',')[0]!.trim();
  const hosts = [req.headers.host, forwarded].filter((h): h is string => !!h);
  try {
    const host = new URL(origin).host;
    return hosts.some((h) => h.toLowerCase() === host);
  } catch {
    return false;
  }
}
