// Room harness: one page per device. The e2e tests and bench/room.bench.ts drive it through window.__room
// (page.evaluate on strings). Roles: host, guest, fuzz (see room.html).
import { Peer, type DataConnection } from 'peerjs';
import { Generator } from '../src/model/generator.ts';
import type { SamplingOptions } from '../src/model/engine-types.ts';
import { loadWeights } from '../src/model/load-weights.ts';
import { resolveModelSource } from '../src/model/sources/resolve.ts';
import { createHostRoom, joinRoom } from '../src/room/api.ts';
import { PAGE_ENGINES } from '../src/engines/page-engines.ts';
import { ENGINES } from '../src/engines/table.ts';
import { engineOf, engineOptionsOf } from '../src/app/url-params.ts';
import type { DealEntry } from '../src/room/deal.ts';
import { fuzzMessages, sampleFrames } from '../src/room/fuzz.ts';
import { defaultSignaling, hostPeerId, peerPrefix } from '../src/room/signaling.ts';
import { encodeFrame, decodeFrame, PROTOCOL_VERSION } from '../src/room/protocol.ts';
import { chunkFrame, Reassembler } from '../src/room/wire.ts';

const params = new URLSearchParams(location.search);
const engine = engineOf(params.get('engine') ?? 'reference', ENGINES);
// ?simd=plain: the WASM engine's SIMD128-only build, as the app's ?simd= (with every load request)
const engineOptions = engineOptionsOf(params, ENGINES) ?? {};
const speed = params.has('speed') ? Number(params.get('speed')) : undefined;
const logEl = document.getElementById('log')!;
const events: Record<string, unknown>[] = [];
function log(type: string, data: Record<string, unknown> = {}): void {
  const e = { type, t: performance.now(), ...data };
  events.push(e);
  logEl.textContent += `${(e.t / 1000).toFixed(2)}s ${type} ${JSON.stringify(data)}\n`;
}
const w = window as unknown as { __room: Record<string, unknown> };

async function host(): Promise<void> {
  document.getElementById('role')!.textContent = 'host';
  const model = params.get('model')!;
  const ctx = Number(params.get('ctx') ?? 256);
  const room = await createHostRoom({
    model, engines: PAGE_ENGINES, engine, engineOptions, ctx, speed, name: 'Host',
    host: {
      microChunk: Number(params.get('micro') ?? 16), autoRedeal: params.get('auto') !== '0', directHops: params.get('hops') !== '0',
      // ?loss=ms: a longer silence before a guest counts as gone (tests of exactness on slow software GPUs)
      ...(params.has('loss') ? { lossTimeoutMs: Number(params.get('loss')) } : {}),
      // ?refused=N: refused frames a connection may send in 10 s before it is dropped (the fuzz test sends
      // a thousand to check crashes and hangs; the budget itself is tested in test/unit/room/hostile-room.test.ts)
      ...(params.has('refused') ? { refusedFrames: { max: Number(params.get('refused')), windowMs: 10_000 } } : {}),
    },
  });
  room.host.on((e) => {
    if (e.type === 'devices') return;
    if (e.type === 'left') log('left', { id: e.device.id, name: e.device.name, why: e.why, detectedAt: e.detectedAt });
    else if (e.type === 'joined') log('joined', { id: e.device.id, name: e.device.name });
    else if (e.type === 'ready') log('ready', { epoch: e.epoch, deal: e.deal });
    else log(e.type, { message: 'error' in e ? e.error.message : '', deviceId: 'deviceId' in e ? e.deviceId : null });
  });
  let single: Generator | null = null;
  w.__room = {
    roomId: room.roomId, link: room.link, events,
    devices: () => room.host.deviceList(),
    /** Each device's engine as its card names it (the hello's caps). */
    engines: () => room.host.deviceList().map((d) => ({ id: d.id, engine: d.caps.engine, label: d.caps.engineLabel ?? null, budget: d.caps.memoryBudgetBytes })),
    chains: () => room.host.chains,
    deal: (entries: DealEntry[] | null) => room.host.setManualDeal(entries),
    redeal: () => room.host.redeal(),
    whenReady: () => room.host.whenReady(),
    remove: (id: string) => room.host.remove(id),
    ping: (id: string, n: number) => room.host.ping(id, n),
    setMicroChunk: (m: number) => { room.host.engine!.microChunk = m; },
    /** `pinAt`: the pinned checkpoint (the end of a system prompt), as the agent asks for it. */
    async generate(prompt: number[], n: number, sampling?: SamplingOptions, pinAt?: number) {
      const t0 = performance.now();
      const r = await room.host.generate(prompt, { maxNewTokens: n, ...(sampling ? { sampling } : {}), ...(pinAt === undefined ? {} : { pinAt }) });
      return { ids: r.ids, finish: r.finish, note: r.note ?? null, error: r.error?.message ?? null, stats: r.stats, endedAt: performance.now(), ms: performance.now() - t0 };
    },
    /** The same model on this device alone (same engine kind): the tokens every split must equal. `fresh`: from scratch (a new engine, nothing reused). */
    async single(prompt: number[], n: number, sampling?: SamplingOptions, fresh = false) {
      if (!single || fresh) {
        const source = await resolveModelSource(new URL(model, location.href).href);
        const weights = await loadWeights(source, { layers: [0, room.config.numLayers], embedding: true, head: true });
        single = new Generator(await ENGINES[engine]!.createEngine(engineOptions)(weights, { ctx, range: [0, room.config.numLayers] }), { ctx });
      }
      const r = await single.generate(prompt, { maxNewTokens: n, ...(sampling ? { sampling } : {}) });
      return { ids: r.ids, finish: r.finish, error: r.error?.message ?? null, stats: r.stats };
    },
  };
  log('hosting', { roomId: room.roomId, link: room.link });
}

async function guest(): Promise<void> {
  document.getElementById('role')!.textContent = 'guest';
  const g = await joinRoom(location.href, { engines: PAGE_ENGINES, engine, engineOptions, speed, name: params.get('name') ?? undefined });
  g.guest.on((e) => {
    if (e.type === 'progress') return;
    log(e.type, { ...('range' in e ? { range: e.range } : {}), ...('error' in e ? { message: e.error.message } : {}), ...('why' in e ? { why: e.why } : {}), ...('networkBytes' in e ? { networkBytes: e.networkBytes, cacheBytes: e.cacheBytes } : {}) });
  });
  w.__room = {
    deviceId: g.deviceId, events,
    state: () => ({ epoch: g.guest.currentEpoch, range: g.guest.assignedRange, route: g.guest.route, stats: { ...g.guest.stats } }),
    /** Feed hostile wire messages into this guest exactly where the host's messages arrive. */
    async inject(seed: number, count: number) {
      const ch = g.guest.frameChannel!;
      const before = g.guest.stats.badFrames;
      // Not `bye`: a valid goodbye from the host means "you were removed", which a guest must obey.
      const msgs = fuzzMessages(seed, count, sampleFrames().filter((f) => f.kind !== 'bye'));
      for (let i = 0; i < msgs.length; i++) {
        ch.receive(msgs[i]!);
        if (i % 50 === 49) await new Promise((r) => setTimeout(r, 0)); // as messages arrive: heartbeats interleave
      }
      return { bad: g.guest.stats.badFrames - before };
    },
    leave: () => g.leave(),
  };
  log('joined', { deviceId: g.deviceId });
}

/** A raw peer in the room that sends hostile frames to the host and collects what the host answers. */
async function fuzz(): Promise<void> {
  document.getElementById('role')!.textContent = 'fuzz';
  const roomId = params.get('room')!;
  const sig = defaultSignaling();
  const peer = new Peer(`${peerPrefix(roomId)}fuzz${Math.floor(Math.random() * 1e9)}`, { host: sig.host, port: sig.port, path: sig.path, secure: sig.secure, config: { iceServers: [] } });
  await new Promise((r) => peer.once('open', r));
  const conn: DataConnection = peer.connect(hostPeerId(roomId), { reliable: true, serialization: 'raw' });
  await new Promise((r) => conn.on('open', () => r(undefined)));
  const answers: string[] = [];
  const reasm = new Reassembler();
  conn.on('data', (d) => {
    try { const b = reasm.push(new Uint8Array(d as ArrayBuffer)); if (b) { const f = decodeFrame(b); answers.push(f.kind === 'error' ? `error:${f.code}:${f.message}` : f.kind); } } catch (e) { answers.push(`undecodable:${(e as Error).message}`); }
  });
  w.__room = {
    answers,
    async fuzz(seed: number, count: number) {
      const msgs = fuzzMessages(seed, count);
      for (let i = 0; i < msgs.length; i++) {
        conn.dataChannel.send(msgs[i]! as Uint8Array<ArrayBuffer>);
        if (i % 100 === 99) await new Promise((r) => setTimeout(r, 10)); // let the host breathe; no busy loop
      }
      // A valid frame after the storm: the host must still answer (a heartbeat reply).
      conn.dataChannel.send(chunkFrame(encodeFrame({ kind: 'heartbeat', reply: false, sentAt: 1 }), 0)[0]! as Uint8Array<ArrayBuffer>);
      return msgs.length;
    },
    /** A valid hello that claims to be device `deviceId` (another guest's id: an impersonation). */
    helloAs(deviceId: string) {
      const caps = { adapter: 'fuzz', engine: 'reference', isFallbackAdapter: false, shaderF16: false, maxStorageBufferBindingSize: 0, maxBufferSize: 0, deviceMemoryGiB: 0, memoryBudgetBytes: 2 ** 30, speed: 1 } as const;
      const hello = encodeFrame({ kind: 'hello', protocol: PROTOCOL_VERSION, roomId, deviceId, name: 'Impostor', caps });
      for (const m of chunkFrame(hello, 1)) conn.dataChannel.send(m as Uint8Array<ArrayBuffer>);
    },
    open: () => conn.open,
  };
  log('fuzzer connected');
}

const role = params.get('role') ?? (params.has('room') ? 'guest' : 'host');
(role === 'host' ? host() : role === 'fuzz' ? fuzz() : guest()).then(
  () => log('started', { role }),
  (e: Error) => { log('failed', { name: e.name, message: e.message }); (w.__room ??= {}).failed = `${e.name}: ${e.message}`; },
);
