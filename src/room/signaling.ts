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

/**
 * Open a Peer with `id`. A reloaded page may find its id still held for a moment by its old socket
 * ('unavailable-id'): retry for up to ~3 s.
 */
export async function openPeer(id: string, cfg: SignalingConfig, tries = 15): Promise<Peer> {
  for (let attempt = 1; ; attempt++) {
    const peer = new Peer(id, { host: cfg.host, port: cfg.port, path: cfg.path, secure: cfg.secure, config: { iceServers: cfg.iceServers }, debug: 0 });
    const result = await new Promise<Peer | Error>((resolve) => {
      peer.once('open', () => resolve(peer));
      peer.once('error', (e: Error & { type?: string }) => resolve(Object.assign(e, { type: e.type ?? 'error' })));
    });
    if (!(result instanceof Error)) return result;
    peer.destroy();
    const type = (result as { type?: string }).type;
    if (type === 'unavailable-id' && attempt < tries) { await new Promise((r) => setTimeout(r, 200)); continue; }
    throw new JoinError(`signaling server ${cfg.host}:${cfg.port}${cfg.path}: ${type}: ${result.message}`);
  }
}
