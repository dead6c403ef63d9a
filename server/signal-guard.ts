// What stands between the open internet and the PeerJS signaling server: anyone can connect, so every
// connection is checked before PeerJS sees it, and bounded after.
//  * peer ids are [0-9a-z-], at most 96 characters (ours are "pooled-<32 hex>-<device>"): an id is
//    written into other clients' event streams, so one with a newline could forge events;
//  * at most SIGNAL_LIMITS.socketsPerAddress sockets per remote address (one client could otherwise
//    hold PeerJS's whole concurrent limit, so no room could start);
//  * messages are small (PeerJS sends SDP and ICE candidates: a few KiB) and rate-limited per socket:
//    PeerJS queues messages for peers that are not connected yet, so big or endless ones would pile up.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';

export const SIGNAL_LIMITS = {
  socketsPerAddress: 64,
  /** PeerJS's own limit on registered peers (its default is 5,000). */
  concurrentPeers: 1000,
  /** ws closes a socket with 1009 on a bigger message. */
  maxMessageBytes: 64 * 1024,
  /** Token buckets per socket: a burst, then a steady rate (messages and bytes). Past them: close 1008. */
  burstMessages: 200,
  messagesPerSecond: 20,
  burstBytes: 256 * 1024,
  bytesPerSecond: 32 * 1024,
} as const;

export const PEER_ID = /^[0-9a-z-]{1,96}$/;

/** Refuses an upgrade with a status line and closes the socket (never leave one hanging). */
export function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(reason)}\r\n\r\n${reason}`);
  socket.destroy();
}

/** Counts live things per remote address. */
export class PerAddress {
  private readonly counts = new Map<string, number>();
  constructor(readonly limit: number) {}
  /** Takes a slot for `address`; returns a release function, or null when the address is at its limit. */
  take(address: string): (() => void) | null {
    const n = this.counts.get(address) ?? 0;
    if (n >= this.limit) return null;
    this.counts.set(address, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.counts.get(address) ?? 1) - 1;
      if (left <= 0) this.counts.delete(address); else this.counts.set(address, left);
    };
  }
}

export const remoteAddress = (req: IncomingMessage): string => req.socket.remoteAddress ?? 'unknown';

function isJsonObject(data: Buffer | ArrayBuffer | Buffer[]): boolean {
  const text = Array.isArray(data) ? Buffer.concat(data).toString() : Buffer.from(data as ArrayBuffer).toString();
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

/** A socket that sends more than the buckets allow is closed with 1008 (policy violation). */
function rateLimit(ws: WebSocket): void {
  const L = SIGNAL_LIMITS;
  let messages: number = L.burstMessages;
  let bytes: number = L.burstBytes;
  let at = performance.now();
  ws.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
    const now = performance.now();
    const dt = (now - at) / 1000;
    at = now;
    messages = Math.min(L.burstMessages, messages + dt * L.messagesPerSecond) - 1;
    const size = Array.isArray(data) ? data.reduce((a, b) => a + b.length, 0) : data instanceof ArrayBuffer ? data.byteLength : data.length;
    bytes = Math.min(L.burstBytes, bytes + dt * L.bytesPerSecond) - size;
    if (messages < 0 || bytes < 0) { ws.close(1008, 'too many signaling messages'); return; }
    if (!isJsonObject(data)) ws.close(1007, 'signaling messages are JSON objects');
  });
}

/**
 * Routes an upgrade for the signaling path to `sockets` after the checks above; refuses (and closes)
 * anything else at that path. Returns false when the path is not the signaling path (the caller decides).
 */
export function guardSignalUpgrade(sockets: WebSocketServer, perAddress: PerAddress, signalPath: string, req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.pathname !== signalPath) return false;
  const id = url.searchParams.get('id') ?? '';
  if (!PEER_ID.test(id)) { refuseUpgrade(socket, 400, 'peer id must be 1-96 of [0-9a-z-]'); return true; }
  const release = perAddress.take(remoteAddress(req));
  if (!release) { refuseUpgrade(socket, 429, 'too many signaling connections from this address'); return true; }
  socket.once('close', release);
  sockets.handleUpgrade(req, socket, head, (ws) => {
    ws.once('close', release);
    rateLimit(ws); // registered before PeerJS's own listener, so it sees every message first
    sockets.emit('connection', ws, req);
  });
  return true;
}
