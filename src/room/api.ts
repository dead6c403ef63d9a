// The browser API of rooms, for the UI and the harness:
//   const room = await createHostRoom({ model: 'https://…/Qwen3-1.7B-q4f16_1-MLC' }); room.link → invite
//   const guest = await joinRoom(location.href);  // on the other device
// The host object (RoomHost) carries the device list, events, remove, re-deal, manual deal and generate.
import type { DataConnection, Peer } from 'peerjs';
import type { EngineKind, EngineOptions, EngineRow, EngineTable, ShareLoadFn } from '../engines/contract.ts';
import { inThreadShare } from '../engines/in-thread-share.ts';
import { readModelConfig } from '../model/config.ts';
import { planWeights } from '../model/load-weights.ts';
import { resolveModelSource } from '../model/sources/resolve.ts';
import type { ModelConfig, ModelSource } from '../model/types.ts';
import { measureCapabilities } from './capabilities.ts';
import type { KvType } from './device-bytes.ts';
import { RoomGuest } from './guest.ts';
import { RoomHost, type HostOptions } from './host.ts';
import { peerjsLink } from './peerjs-link.ts';
import { DEVICE_ID } from './protocol.ts';
import type { LoadWeightsFn } from './share-loader.ts';
import type { MessageLink } from './wire.ts';
import {
  defaultSignaling, guestPeerId, hostPeerId, inviteLink, newDeviceId, newPeerToken, newRoomId, openPeer, parseInvite, peerPrefix,
  type SignalingConfig,
} from './signaling.ts';
import { CachingSource, IndexedDbByteStore, type ByteStore } from './weight-cache.ts';
import { JoinError } from './errors.ts';

export type { EngineKind } from './engine-choice.ts';

interface DeviceOptions {
  /** The engines this page runs (src/engines/table.ts ENGINES, from src/app): the room imports none. */
  engines: EngineTable;
  name?: string;
  /** Forced (?engine=); otherwise a short probe of the table's engines offers the fastest. */
  engine?: EngineKind;
  /** The engines' options (?simd=…): they travel with the probe and every load. */
  engineOptions?: EngineOptions;
  memoryBudgetBytes?: number;  // the user's choice; default from navigator.deviceMemory
  speed?: number;              // fixed instead of measured (tests)
  signaling?: Partial<SignalingConfig>;
  store?: ByteStore;           // default IndexedDB
  /** The share's weights read this way on this thread, then the engine's createEngine (a harness's own reader). */
  loadWeights?: LoadWeightsFn;
  /** Load + engine in one step instead of the engine row's loadShare. */
  loadShare?: ShareLoadFn;
}

export interface HostRoomOptions extends DeviceOptions {
  /** A model URL (guests read it by Range too) or a ModelSource such as a local folder (guests read via the host). */
  model: string | ModelSource;
  ctx?: number;                // the context wanted (default 2048): the room deals the largest it holds, up to this
  /** The context was asked for (?ctx=): deal exactly it, or refuse naming the context the room holds. */
  ctxExact?: boolean;
  kv?: KvType;                 // how the KV cache is stored (default f16)
  /** Re-open this room (a reloaded host): its id, the signaling token it was opened with, and how long to wait for the id. */
  roomId?: string;
  peerToken?: string;
  /** How long a room id still held on the signaling server is tried again (default ~3 s). */
  idRetryMs?: number;
  /** The deal in effect before a reload: dealt again first when the same devices are back (HostOptions.resumeDeal). */
  resumeDeal?: HostOptions['resumeDeal'];
  host?: Partial<Pick<HostOptions, 'heartbeatMs' | 'lossTimeoutMs' | 'microChunk' | 'prefillChunk' | 'autoRedeal' | 'ckpt' | 'directHops'>>;
}

export interface HostRoom {
  roomId: string;
  /** The signaling token the room's id was opened with: kept, a reload opens the same id again at once. */
  peerToken: string;
  link: string;
  host: RoomHost;
  config: ModelConfig;
  close(): Promise<void>;
}

/** How a device loads its shares: the caller's loadShare, its loadWeights then the row's engine, else the row's loadShare. */
function shareLoader(o: DeviceOptions, row: EngineRow): ShareLoadFn {
  const options = o.engineOptions ?? {};
  if (o.loadShare) return o.loadShare;
  return o.loadWeights ? inThreadShare(o.loadWeights, row.createEngine(options)) : row.loadShare(options);
}

/** The loader with `before` run on the source first. */
function beforeEachLoad(before: JoinOptions['beforeLoad'], loadShare: ShareLoadFn): ShareLoadFn {
  return before ? async (share) => { await before(share.source); return loadShare(share); } : loadShare;
}

/** This device's capabilities: its engine forced or the fastest of a short probe of the table's. */
function capsOf(o: DeviceOptions) {
  return measureCapabilities({
    engines: o.engines, engine: o.engine, memoryBudgetBytes: o.memoryBudgetBytes, speed: o.speed,
    ...(o.engineOptions ? { options: o.engineOptions } : {}),
  });
}

function signalingOf(o: DeviceOptions): SignalingConfig {
  return { ...defaultSignaling(), ...o.signaling };
}

export async function createHostRoom(opts: HostRoomOptions): Promise<HostRoom> {
  const roomId = opts.roomId ?? newRoomId();
  const modelUrl = typeof opts.model === 'string' ? new URL(opts.model, location.href).href : '';
  const source = typeof opts.model === 'string' ? await resolveModelSource(modelUrl) : opts.model;
  const { config, file } = await readModelConfig(source);
  const caps = await capsOf(opts);
  const row = opts.engines[caps.engine]!;
  const store = opts.store ?? new IndexedDbByteStore();
  const modelKey = modelUrl || source.label;
  // The plan reads headers only (through the device cache, so the loads that follow reuse them) and
  // gives each layer's exact bytes: the deal weighs a Q6_K layer or an MoE layer as it is.
  const plan = await planWeights(new CachingSource(source, store, modelKey), { layers: [0, config.numLayers], embedding: true, head: true });
  const host = new RoomHost({
    roomId, name: opts.name ?? 'Host', caps, config,
    format: source.modelFile ? 'gguf' : file === 'mlc-chat-config.json' ? 'mlc' : 'safetensors',
    weightBytes: { layerBytes: plan.layerBytes, fixedBytes: plan.fixedBytes },
    source, modelUrl, modelKey, ctx: opts.ctx ?? 2048, ...(opts.ctxExact ? { ctxExact: true } : {}), ...(opts.kv ? { kv: opts.kv } : {}),
    engines: opts.engines, loadShare: shareLoader(opts, row), store, ...(opts.resumeDeal ? { resumeDeal: opts.resumeDeal } : {}), ...opts.host,
  });
  const sig = signalingOf(opts);
  const peerToken = opts.peerToken ?? newPeerToken();
  // Re-opening a room (its token kept): one attempt waits 3 s for OPEN, then frees the id and tries again (signaling.ts).
  const peer = await openPeer(hostPeerId(roomId), sig, {
    token: peerToken, ...(opts.peerToken ? { openTimeoutMs: 3000 } : {}), ...(opts.idRetryMs ? { retryForMs: opts.idRetryMs } : {}),
  });
  const seen = new RecentIds();
  peer.on('connection', (conn: DataConnection) => {
    if (!seen.add(conn.connectionId)) return; // the same connection handed over twice (seen under load): one link
    // The signaling server vouches for conn.peer (one live socket per id): the guest's hello must name
    // the device that id was made from, so no guest can speak as another.
    const deviceId = conn.peer.startsWith(peerPrefix(roomId)) ? conn.peer.slice(peerPrefix(roomId).length) : '';
    if (!/^[0-9a-z]{6,64}$/.test(deviceId) || conn.serialization !== 'raw') { conn.close(); return; }
    conn.once('open', () => host.acceptLink(peerjsLink(conn), { peerDeviceId: deviceId }));
  });
  // The server relays its disconnect events: a closed tab is known in milliseconds, not 15 s.
  const events = new EventSource(`${sig.secure ? 'https' : 'http'}://${sig.host}:${sig.port}/room-events/${roomId}`);
  events.addEventListener('disconnect', (e) => {
    const peerId = (e as MessageEvent<string>).data;
    if (peerId.startsWith(peerPrefix(roomId))) host.signalingDisconnect(peerId.slice(peerPrefix(roomId).length));
  });
  // The page going away (a reload, or the tab closing: a page cannot tell them apart) is no goodbye: the
  // guests keep their layers and try this room again for a while (guest-reconnect.ts). Close room says goodbye.
  const onHide = () => { host.goAway(); peer.destroy(); };
  addEventListener('pagehide', onHide);
  void host.redeal().catch(() => undefined); // the host alone first: ready to generate at once
  return {
    roomId, peerToken, link: inviteLink(roomId), host, config,
    async close() { removeEventListener('pagehide', onHide); events.close(); await host.close(); peer.destroy(); },
  };
}

export interface JoinOptions extends DeviceOptions {
  /** Runs on the share's (cached) source before each load (the app reads the model's config there for its layer bar). */
  beforeLoad?: (source: ModelSource) => Promise<void>;
  /** Where the device id is kept so a reload rejoins as the same device (default sessionStorage). */
  storage?: Storage;
}

/** PeerJS connection ids seen lately (a bounded memory: the last 256). add() says whether `id` is new. */
class RecentIds {
  private readonly ids = new Set<string>();
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > 256) this.ids.delete(this.ids.values().next().value!);
    return true;
  }
}

/** A direct channel from this guest to the guest `to` of the room (the next hop of its chain). */
function dialGuest(peer: Peer, roomId: string, to: string, signal: AbortSignal): Promise<MessageLink> {
  return new Promise<MessageLink>((resolve, reject) => {
    const conn = peer.connect(guestPeerId(roomId, to), { reliable: true, serialization: 'raw' });
    const give = () => { conn.close(); reject(new Error('gave up')); };
    signal.addEventListener('abort', give, { once: true });
    conn.on('open', () => { signal.removeEventListener('abort', give); resolve(peerjsLink(conn)); });
    conn.on('error', (e: Error) => { signal.removeEventListener('abort', give); conn.close(); reject(e); });
  });
}

export interface GuestRoom {
  roomId: string;
  deviceId: string;
  guest: RoomGuest;
  /** Join the same room again as the same device, keeping its engine (guest-reconnect.ts drives it); a JoinError when not. */
  reconnect(): Promise<void>;
  leave(): Promise<void>;
}

/** Join the room of an invite link (or bare id). Resolves once connected to the host. */
export async function joinRoom(linkOrId: string, opts: JoinOptions): Promise<GuestRoom> {
  const roomId = parseInvite(linkOrId);
  const storage = opts.storage ?? sessionStorage;
  const key = `pooled.device.${roomId}`;
  const deviceId = storage.getItem(key) ?? newDeviceId();
  storage.setItem(key, deviceId);
  const caps = await capsOf(opts);
  const row = opts.engines[caps.engine]!;
  const peer = await openPeer(guestPeerId(roomId, deviceId), signalingOf(opts));
  const guest = new RoomGuest({
    roomId, deviceId, name: opts.name ?? `Device ${deviceId.slice(0, 4)}`, caps,
    loadShare: beforeEachLoad(opts.beforeLoad, shareLoader(opts, row)),
    store: opts.store ?? new IndexedDbByteStore(), resolveSource: (model) => resolveModelSource(model),
    dial: (to, signal) => dialGuest(peer, roomId, to, signal),
  });
  // Direct hops: the guest before this one in a chain opens a channel here. Only peers of this room, as
  // the signaling server names them, and only raw reliable channels; which of them may send is the guest's call.
  const seen = new RecentIds();
  peer.on('connection', (conn: DataConnection) => {
    if (!seen.add(conn.connectionId)) return;
    const prefix = peerPrefix(roomId);
    const from = conn.peer.startsWith(prefix) ? conn.peer.slice(prefix.length) : '';
    if (!DEVICE_ID.test(from) || from === deviceId || conn.serialization !== 'raw' || !conn.reliable) { conn.close(); return; }
    conn.once('open', () => guest.acceptNeighbour(peerjsLink(conn), from));
  });
  guest.attach(peerjsLink(await connectHost(peer, roomId, 15_000)));
  const onHide = () => { void guest.leave('the page was closed'); peer.destroy(); };
  addEventListener('pagehide', onHide);
  return {
    roomId, deviceId, guest,
    async reconnect() {
      if (peer.destroyed) throw new JoinError('this device left the room');
      if (peer.disconnected) await reopenSignaling(peer);
      guest.attach(peerjsLink(await connectHost(peer, roomId, RECONNECT_ATTEMPT_MS)));
    },
    async leave() { removeEventListener('pagehide', onHide); await guest.leave('left the room'); peer.destroy(); },
  };
}

/** One reconnect attempt waits this long for the host's channel to open (a host still loading its page is not there yet). */
const RECONNECT_ATTEMPT_MS = 8000;

/**
 * A channel to the room's host, open; or a JoinError: the host's id is not on the signaling server (its
 * page is gone or reloading: "is not open"), or it did not answer within `timeoutMs`.
 */
function connectHost(peer: Peer, roomId: string, timeoutMs: number): Promise<DataConnection> {
  return new Promise<DataConnection>((resolve, reject) => {
    const conn = peer.connect(hostPeerId(roomId), { reliable: true, serialization: 'raw' });
    const fail = (error: JoinError) => { clearTimeout(timer); peer.off('error', onError); conn.close(); reject(error); };
    const onError = (e: Error & { type?: string }) => {
      fail(new JoinError(e.type === 'peer-unavailable' ? `room ${roomId.slice(0, 8)}… is not open (its host is gone)` : `joining failed: ${e.message}`));
    };
    const timer = setTimeout(() => fail(new JoinError(`room ${roomId.slice(0, 8)}…: the host did not answer in ${timeoutMs / 1000} s`)), timeoutMs);
    peer.on('error', onError);
    conn.on('open', () => { clearTimeout(timer); peer.off('error', onError); resolve(conn); });
  });
}

/** This device's own signaling connection dropped (the server restarted, the network blinked): open it again, same id. */
function reopenSignaling(peer: Peer): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { peer.off('open', onOpen); reject(new JoinError('the signaling server did not take this device back in 8 s')); }, 8000);
    const onOpen = () => { clearTimeout(timer); resolve(); };
    peer.once('open', onOpen);
    peer.reconnect();
  });
}
