// The browser API of rooms, for the UI and the harness:
//   const room = await createHostRoom({ model: 'https://…/Qwen3-1.7B-q4f16_1-MLC' }); room.link → invite
//   const guest = await joinRoom(location.href);  // on the other device
// The host object (RoomHost) carries the device list, events, remove, re-deal, manual deal and generate.
import type { DataConnection, Peer } from 'peerjs';
import { readModelConfig } from '../model/config.ts';
import { loadWeights as loadModelWeights, openWeights, planWeights } from '../model/load-weights.ts';
import { materializeWeights } from '../model/load-stream.ts';
import { ReferenceEngine } from '../model/reference/reference-engine.ts';
import { resolveModelSource } from '../model/sources/resolve.ts';
import type { ModelConfig, ModelSource } from '../model/types.ts';
import { measureCapabilities } from './capabilities.ts';
import type { KvType } from './device-bytes.ts';
import { RoomGuest, type EngineFactory, type LoadWeightsFn, type ShareLoadFn } from './guest.ts';
import { RoomHost, type HostOptions } from './host.ts';
import { peerjsLink } from './peerjs-link.ts';
import { DEVICE_ID } from './protocol.ts';
import type { MessageLink } from './wire.ts';
import {
  defaultSignaling, guestPeerId, hostPeerId, inviteLink, newDeviceId, newRoomId, openPeer, parseInvite, peerPrefix,
  type SignalingConfig,
} from './signaling.ts';
import { CachingSource, IndexedDbByteStore, type ByteStore } from './weight-cache.ts';
import { JoinError } from './errors.ts';
import type { EngineKind } from './engine-choice.ts';
import { wasmThreadsHere, wasmThreadsOnThisThread } from './engine-probe.ts';

export type { EngineKind } from './engine-choice.ts';

/**
 * The engine for a device's share: our WebGPU kernels, our WASM SIMD kernels (src/cpu: devices without a
 * usable GPU), or the CPU reference (tests, and the oracle).
 */
export function engineFactory(kind: EngineKind): EngineFactory {
  if (kind === 'reference') return async (weights, { ctx, range, kv }) => new ReferenceEngine(await materializeWeights(weights), { ctx, range, kvType: kv ?? 'f16' });
  if (kind === 'wasm') {
    // On this thread (a draft model, a harness's single-device run): one thread on a page's main thread.
    // A room's share goes to the engine's worker instead (shareLoader).
    return async (weights, { ctx, kv }) => {
      const { createCpuEngine } = await import('../cpu/create-engine.ts');
      const { cpuActivationsPreference } = await import('../cpu/simd-path.ts');
      return createCpuEngine(await materializeWeights(weights), { ctx, kv: kv ?? 'f16', threads: wasmThreadsOnThisThread(), activations: cpuActivationsPreference() });
    };
  }
  return async (weights, { ctx, kv }) => {
    const { createWebGPUEngine } = await import('../gpu/create-engine.ts');
    return createWebGPUEngine(weights, { ctx, kv: kv ?? 'f16' });
  };
}

/**
 * How a device loads its share for that engine: streamed into the WebGPU engine's buffers or the WASM
 * engine's memory (openWeights: at most LOAD_IN_FLIGHT_BYTES of weights in JS at once), or whole for the
 * reference engine, which holds its weights in JS anyway (loadWeights fills each tensor once: its weights
 * plus that bound at the peak).
 */
export function weightLoader(kind: EngineKind): LoadWeightsFn {
  return kind === 'reference' ? (s, r) => loadModelWeights(s, r) : (s, r) => openWeights(s, r);
}

/**
 * How a device loads its share and makes its engine in one step, for the engines that run in a worker of
 * their own: the WASM engine in a browser page (src/cpu/worker-engine.ts), so it never blocks the page and
 * runs the pool's threads where the page is cross-origin isolated. The worker reads a model URL itself
 * (through the device's IndexedDB cache, under the same key); a model only the page reaches (the host's
 * local folder, the host over the channel: model '') it reads through the page's cached source.
 * Undefined elsewhere (loadWeights + createEngine on this thread).
 */
export function shareLoader(kind: EngineKind): ShareLoadFn | undefined {
  if (kind !== 'wasm' || typeof Worker === 'undefined' || typeof (globalThis as { window?: unknown }).window === 'undefined') return undefined;
  return async ({ model, modelKey, source, request, ctx, kv }) => {
    const { CpuWorkerEngine } = await import('../cpu/worker-engine.ts');
    const engine = await CpuWorkerEngine.start({
      ...(model ? { model, cacheKey: modelKey } : {}), layers: request.layers, ...(request.embedding ? { embedding: true } : {}),
      ...(request.head ? { head: true } : {}), ctx, kv: kv ?? 'f16', threads: wasmThreadsHere(),
    }, {
      ...(model ? {} : { source }), ...(request.signal ? { signal: request.signal } : {}),
      // the fetch phase is the download the device card's bar shows; placing the weights follows quickly
      onProgress: (p) => { if (p.phase === 'fetch') request.onProgress?.(p); },
    });
    return { engine, hiddenSize: engine.info.hiddenSize, counts: engine.info.counts };
  };
}

/** The engine to assume before the probe ran (the probe, engine-probe.ts, decides at join). */
export const defaultEngineKind = (): EngineKind => (globalThis.navigator?.gpu ? 'webgpu' : 'wasm');

interface DeviceOptions {
  name?: string;
  engine?: EngineKind;
  memoryBudgetBytes?: number;  // the user's choice; default from navigator.deviceMemory
  speed?: number;              // fixed instead of measured (tests)
  signaling?: Partial<SignalingConfig>;
  store?: ByteStore;           // default IndexedDB
  loadWeights?: LoadWeightsFn;
  /** Load + engine in one step (default for 'wasm' in a page: its worker, shareLoader), unless loadWeights is given. */
  loadShare?: ShareLoadFn;
}

export interface HostRoomOptions extends DeviceOptions {
  /** A model URL (guests read it by Range too) or a ModelSource such as a local folder (guests read via the host). */
  model: string | ModelSource;
  ctx?: number;                // the context wanted (default 2048): the room deals the largest it holds, up to this
  /** The context was asked for (?ctx=): deal exactly it, or refuse naming the context the room holds. */
  ctxExact?: boolean;
  kv?: KvType;                 // how the KV cache is stored (default f16)
  roomId?: string;
  host?: Partial<Pick<HostOptions, 'heartbeatMs' | 'lossTimeoutMs' | 'microChunk' | 'prefillChunk' | 'autoRedeal' | 'ckpt' | 'directHops'>>;
}

export interface HostRoom {
  roomId: string;
  link: string;
  host: RoomHost;
  config: ModelConfig;
  close(): Promise<void>;
}

/** The loadShare a device uses: the caller's, else the engine's worker unless the caller loads weights its own way. */
function shareOption(o: DeviceOptions, engine: EngineKind): { loadShare?: ShareLoadFn } {
  const loadShare = o.loadShare ?? (o.loadWeights ? undefined : shareLoader(engine));
  return loadShare ? { loadShare } : {};
}

/** The loaders with `before` run on the source first. */
function beforeEachLoad(before: JoinOptions['beforeLoad'], l: { loadWeights: LoadWeightsFn; loadShare?: ShareLoadFn }): { loadWeights: LoadWeightsFn; loadShare?: ShareLoadFn } {
  if (!before) return l;
  const { loadWeights, loadShare } = l;
  return {
    loadWeights: async (source, request) => { await before(source); return loadWeights(source, request); },
    ...(loadShare ? { loadShare: async (share) => { await before(share.source); return loadShare(share); } } : {}),
  };
}

function signalingOf(o: DeviceOptions): SignalingConfig {
  return { ...defaultSignaling(), ...o.signaling };
}

export async function createHostRoom(opts: HostRoomOptions): Promise<HostRoom> {
  const roomId = opts.roomId ?? newRoomId();
  const modelUrl = typeof opts.model === 'string' ? new URL(opts.model, location.href).href : '';
  const source = typeof opts.model === 'string' ? await resolveModelSource(modelUrl) : opts.model;
  const { config, file } = await readModelConfig(source);
  // ?engine= forces one; otherwise a short probe of this device's engines offers the fastest.
  const caps = await measureCapabilities({ engine: opts.engine, memoryBudgetBytes: opts.memoryBudgetBytes, speed: opts.speed });
  const engine = caps.engine;
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
    loadWeights: opts.loadWeights ?? weightLoader(engine), createEngine: engineFactory(engine), ...shareOption(opts, engine),
    store, ...opts.host,
  });
  const sig = signalingOf(opts);
  const peer = await openPeer(hostPeerId(roomId), sig);
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
  const onHide = () => { void host.close(); peer.destroy(); };
  addEventListener('pagehide', onHide);
  void host.redeal().catch(() => undefined); // the host alone first: ready to generate at once
  return {
    roomId, link: inviteLink(roomId), host, config,
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
  leave(): Promise<void>;
}

/** Join the room of an invite link (or bare id). Resolves once connected to the host. */
export async function joinRoom(linkOrId: string, opts: JoinOptions = {}): Promise<GuestRoom> {
  const roomId = parseInvite(linkOrId);
  const storage = opts.storage ?? sessionStorage;
  const key = `pooled.device.${roomId}`;
  const deviceId = storage.getItem(key) ?? newDeviceId();
  storage.setItem(key, deviceId);
  // ?engine= forces one; otherwise a short probe of this device's engines offers the fastest.
  const caps = await measureCapabilities({ engine: opts.engine, memoryBudgetBytes: opts.memoryBudgetBytes, speed: opts.speed });
  const engine = caps.engine;
  const peer = await openPeer(guestPeerId(roomId, deviceId), signalingOf(opts));
  const guest = new RoomGuest({
    roomId, deviceId, name: opts.name ?? `Device ${deviceId.slice(0, 4)}`, caps,
    ...beforeEachLoad(opts.beforeLoad, { loadWeights: opts.loadWeights ?? weightLoader(engine), ...shareOption(opts, engine) }),
    createEngine: engineFactory(engine),
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
  const conn = peer.connect(hostPeerId(roomId), { reliable: true, serialization: 'raw' });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new JoinError(`room ${roomId.slice(0, 8)}…: the host did not answer in 15 s`)), 15_000);
    conn.on('open', () => { clearTimeout(timer); resolve(); });
    peer.on('error', (e: Error & { type?: string }) => {
      clearTimeout(timer);
      reject(new JoinError(e.type === 'peer-unavailable' ? `room ${roomId.slice(0, 8)}… is not open (its host is gone)` : `joining failed: ${e.message}`));
    });
  });
  guest.attach(peerjsLink(conn));
  const onHide = () => { void guest.leave('the page was closed'); peer.destroy(); };
  addEventListener('pagehide', onHide);
  return {
    roomId, deviceId, guest,
    async leave() { removeEventListener('pagehide', onHide); await guest.leave('left the room'); peer.destroy(); },
  };
}
