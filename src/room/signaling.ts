// PeerJS signaling for rooms: ids, invite links, and opening a Peer on our embedded server (or another
// one, by configuration). Peer ids: host `pooled-<room>-host`, guest `pooled-<room>-<device>`; the room id
// is 128 random bits as 32 hex digits, so the link is the only way in.
import { Peer } from 'peerjs';
import { JoinError } from './errors.ts';

export interface SignalingConfig {
  host: string;
  port: number;
  path: string;                 // where the PeerJS server is mounted ('/signal')
  secure: boolean;
  iceServers: RTCIceServer[];   // [] on a LAN / loopback; STUN/TURN for the internet
}

/** Our own server, from the page's location. */
export function defaultSignaling(loc: Location = location): SignalingConfig {
  const secure = loc.protocol === 'https:';
  return { host: loc.hostname, port: Number(loc.port) || (secure ? 443 : 80), path: '/signal', secure, iceServers: [] };
}

export function newRoomId(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

export function newDeviceId(): string {
  const b = crypto.getRandomValues(new Uint8Array(10));
  return [...b].map((x) => (x % 36).toString(36)).join('');
}

export const peerPrefix = (roomId: string) => `pooled-${roomId}-`;
export const hostPeerId = (roomId: string) => `${peerPrefix(roomId)}host`;
export const guestPeerId = (roomId: string, deviceId: string) => `${peerPrefix(roomId)}${deviceId}`;

/** The link a guest opens: the page's own URL with ?room=<id>. */
export function inviteLink(roomId: string, base = `${location.origin}${location.pathname}`): string {
  const url = new URL(base);
  url.search = '';
  url.searchParams.set('room', roomId);
  return url.href;
}

/** Room id from an invite link or a bare id; a JoinError says what is wrong. */
export function parseInvite(linkOrId: string): string {
  const text = linkOrId.trim();
  let id = text;
  if (/^https?:\/\//.test(text)) id = new URL(text).searchParams.get('room') ?? '';
  if (!/^[0-9a-f]{32}$/.test(id)) throw new JoinError(`"${text}" is not a room link (expected ?room= and 32 hex digits)`);
  return id;
}

/** A token for the signaling server: whoever opens an id again with the same token takes it back at once. */
export function newPeerToken(): string {
  const b = crypto.getRandomValues(new Uint8Array(12));
  return [...b].map((x) => x.toString(36).padStart(2, '0')).join('');
}

export interface OpenPeerOptions {
  /**
   * The signaling server's token for this id (PeerJS: the id is the token's; a socket that opens it again
   * with the same token replaces the old one at once, even before the server saw the old socket close).
   * A reloaded host keeps its token (src/app/room-record.ts) to take its room id back.
   */
  token?: string;
  /**
   * Give up on one attempt when the server has not said OPEN within this long (default: wait). PeerJS's
   * server hands an id still held by a live socket over to a new socket with the same token WITHOUT saying
   * OPEN; closing that new socket then frees the id, so the next attempt registers it afresh and is told OPEN.
   * A reloaded host sets it (its old page's socket may not have closed yet).
   */
  openTimeoutMs?: number;
  /** How long an id still held by another socket ('unavailable-id') is tried again (default ~3 s: a reloading guest). */
  retryForMs?: number;
}

/** The id stayed held by another socket for as long as it was tried. */
export class PeerIdTakenError extends JoinError {
  override name = 'PeerIdTakenError';
}

/**
 * Open a Peer with `id`. A reloaded page may find its id still held for a moment by its old socket
 * ('unavailable-id': the server drops an id when its socket closes, or after its alive timeout when the
 * socket vanished without closing): tried again with a growing wait (200 ms doubling to 2 s) for up to
 * `retryForMs`, then a PeerIdTakenError.
 */
export async function openPeer(id: string, cfg: SignalingConfig, opts: OpenPeerOptions = {}): Promise<Peer> {
  const retryForMs = opts.retryForMs ?? 3000;
  const start = performance.now();
  let delay = 200;
  for (;;) {
    const peer = new Peer(id, {
      host: cfg.host, port: cfg.port, path: cfg.path, secure: cfg.secure, config: { iceServers: cfg.iceServers }, debug: 0,
      ...(opts.token ? { token: opts.token } : {}),
    });
    const result = await new Promise<Peer | Error>((resolve) => {
      const timer = opts.openTimeoutMs ? setTimeout(() => resolve(Object.assign(new Error('no OPEN from the server'), { type: 'unavailable-id' })), opts.openTimeoutMs) : undefined;
      peer.once('open', () => { clearTimeout(timer); resolve(peer); });
      peer.once('error', (e: Error & { type?: string }) => { clearTimeout(timer); resolve(Object.assign(e, { type: e.type ?? 'error' })); });
    });
    if (!(result instanceof Error)) return result;
    peer.destroy();
    const type = (result as { type?: string }).type;
    if (type === 'unavailable-id') {
      if (performance.now() - start + delay <= retryForMs) { await new Promise((r) => setTimeout(r, delay)); delay = Math.min(delay * 2, 2000); continue; }
      throw new PeerIdTakenError(`signaling server ${cfg.host}:${cfg.port}${cfg.path}: the id ${id.slice(0, 15)}… is still held by another connection after ${((performance.now() - start) / 1000).toFixed(1)} s`);
    }
    throw new JoinError(`signaling server ${cfg.host}:${cfg.port}${cfg.path}: ${type}: ${result.message}`);
  }
}
