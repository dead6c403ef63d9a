// The host of a room: accepts guests (hello), keeps the device list, deals layers (auto or manual),
// loads its own share plus embedding/head, serves model bytes to guests when it has a local folder,
// watches every guest (heartbeats every 250 ms, silence > 1.25 s = gone; also channel close, a goodbye,
// and the signaling server's disconnect relay), and runs generation through ONE RoomEngine so the
// Generator and the agent see one engine. A device lost mid-request ends it `stopped` with a note naming
// the device; the room re-deals and the next request recomputes what was lost.
// Direct hops: guests holding consecutive layers form a chain (ChainEngine, one stage of the RoomEngine):
// each is told its neighbours in its `assign` and opens a channel to the next, so hidden states go host →
// A → B → host. A hop that cannot be opened is dealt again through the host; a channel that closes
// mid-request makes the host probe the neighbour: gone, it is lost and named as any device; there, the
// request ends `stopped` naming the hop, and the next deal wires the chain again.
// Guests are not trusted: a hello must carry the device id its connection was opened for; a
// guest whose loading stops moving, or that leaves a forward/checkpoint unanswered, or that returns
// activations that are not finite numbers, is dropped, naming it; its model reads are rationed.
import type { LayerEngine } from '../model/engine-types.ts';
import { Generator } from '../model/generator.ts';
import type { GenerateOptions, GenerationResult } from '../model/generate-types.ts';
import { snapshotBytes } from '../model/types.ts';
import { dealCost, dealCostFromPlan, dealLayers, snapshotsForCkpt, validateDeal, type DealCost, type DealEntry } from './deal.ts';
import { ChainEngine } from './chain-engine.ts';
import { buildChain, routesOf, stagesOf, tokenRoute, type TokenRoute } from './host-chains.ts';
import { DealError, DeviceLeftError, HopError, OutOfOrderError, ProtocolError, RemoteDeviceError } from './errors.ts';
import { ReadRation } from './peer-source.ts';
import { LOAD_FAILED_CODE, PROTOCOL_VERSION, type Frame } from './protocol.ts';
import { RoomEngine } from './room-engine.ts';
import { CachingSource } from './weight-cache.ts';
import { FrameChannel, type MessageLink } from './wire.ts';
import { HostDevice, type DeviceInfo } from './host-device.ts';

export type { DeviceInfo } from './host-device.ts';

import type { AcceptOptions, HostEvent, HostOptions } from './host-types.ts';
export type { AcceptOptions, HostEvent, HostOptions } from './host-types.ts';

export const HOST_ID = 'host';

export class RoomHost {
  readonly host: HostDevice;
  private readonly devices = new Map<string, HostDevice>(); // insertion order = join order (host first)
  private epoch = 0;
  private manual: DealEntry[] | null = null;
  private deal: DealEntry[] = [];
  private hostEngine: LayerEngine | null = null;
  private hostRange: [number, number] | null = null;
  private roomEngine: RoomEngine | null = null;
  private generator: Generator | null = null;
  private dealing: Promise<void> = Promise.resolve();
  private running = false;
  private redealAfterRun = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly listeners = new Set<(e: HostEvent) => void>();
  private closed = false;
  private lastTick = performance.now();
  private readonly pings = new Map<number, (ms: number) => void>();
  /** This deal's neighbours of each device ('' = the host), as told in its assign. */
  private routes = new Map<string, { prev: string; next: string }>();
  /** Hops "a>b" that could not be wired or stalled: dealt through the host until a or b joins again. */
  private readonly cutHops = new Set<string>();
  /** A deal that had to be made again without a hop: whoever waits for the old one waits for the new. */
  private readonly redoneAs = new Map<number, Promise<void>>();

  constructor(readonly opts: HostOptions) {
    this.host = new HostDevice(HOST_ID, opts.name ?? 'Host', opts.caps, null);
    this.host.status = 'loading';
    this.devices.set(HOST_ID, this.host);
    const hb = opts.heartbeatMs ?? 250;
    this.timer = setInterval(() => this.heartbeat(), hb);
  }

  on(fn: (e: HostEvent) => void): () => void { this.listeners.add(fn); return () => this.listeners.delete(fn); }
  private emit(e: HostEvent): void { for (const fn of this.listeners) fn(e); }
  private emitDevices(): void { this.emit({ type: 'devices', devices: this.deviceList() }); }

  deviceList(): DeviceInfo[] {
    return [...this.devices.values()].map((d) => {
      const info = d.info();
      const engine = d.id === HOST_ID ? this.hostEngine : d.chain;
      // A guest alone in its stage: its speed as the host sees it, the network included. In a chain of
      // several: its own account of its layers' time (the host cannot see the hops between guests).
      const own = d.chain && d.chain.depth > 1 ? d.chain.speedOf(d.id) : null;
      info.tokensPerSecond = !this.roomEngine || info.range[1] <= info.range[0] ? 0 : own ?? this.roomEngine.speedOf(engine);
      info.snapshotBytes = snapshotBytes(this.opts.config, info.range);
      info.snapshots = info.snapshotBytes > 0 ? (this.generator?.snapshotPositions.length ?? 0) : 0;
      return info;
    });
  }
  get currentDeal(): DealEntry[] { return this.deal.map((e) => ({ ...e })); }
  get currentEpoch(): number { return this.epoch; }
  get engine(): RoomEngine | null { return this.roomEngine; }
  get busy(): boolean { return this.running; }
  /** The chains of guests in this deal, in pipeline order (device ids). */
  get chains(): string[][] {
    const stages = this.roomEngine?.stages ?? [];
    return stages.filter((s): s is ChainEngine => s instanceof ChainEngine).map((c) => c.devices.map((d) => d.id));
  }
  /** How a decode token travels in this deal: device names from the host back to it, and the hops between them. */
  get route(): TokenRoute {
    const stages = this.roomEngine?.stages ?? [];
    return tokenRoute(this.host.name, stages.filter((s): s is ChainEngine => s instanceof ChainEngine).map((c) => c.devices.map((d) => d.name)));
  }

  /**
   * A new connection from a would-be guest; it must say hello within `helloTimeoutMs` (default 10 s),
   * as the device `peerDeviceId` when the transport knows who opened it (PeerJS: from the peer id).
   */
  acceptLink(link: MessageLink, opts: AcceptOptions = {}): void {
    const ch = new FrameChannel(link);
    let device: HostDevice | null = null;
    const timer = setTimeout(() => { if (!device) { ch.trySend({ kind: 'bye', reason: 'no hello' }); ch.close(); } }, opts.helloTimeoutMs ?? 10_000);
    ch.onBadFrame = (e) => this.badFrame(ch, device, e);
    ch.onClose = (why) => { clearTimeout(timer); if (device && device.channel === ch) this.lose(device, `connection closed: ${why}`); };
    ch.onFrame = (f) => {
      if (device) {
        if (device.channel !== ch) return; // lost (or replaced by a reconnect): what is still in flight on this connection is ignored
        device.lastSeen = performance.now();
        this.onFrame(device, f);
        return;
      }
      if (f.kind !== 'hello') { this.badFrame(ch, null, new OutOfOrderError(`"${f.kind}" frame before "hello"`)); return; }
      if (f.protocol !== PROTOCOL_VERSION) { this.refuse(ch, `protocol ${f.protocol} is not ${PROTOCOL_VERSION}: reload the page`); return; }
      if (f.roomId !== this.opts.roomId) { this.refuse(ch, 'this link is for another room'); return; }
      if (f.deviceId === HOST_ID) { this.refuse(ch, 'device id "host" is reserved'); return; }
      // Without this a guest could say hello as another guest, drop it and take its layers.
      if (opts.peerDeviceId !== undefined && f.deviceId !== opts.peerDeviceId) {
        this.refuse(ch, `device id "${f.deviceId}" does not belong to this connection (${opts.peerDeviceId})`);
        return;
      }
      clearTimeout(timer);
      device = this.join(ch, f);
    };
  }

  private refuse(ch: FrameChannel, reason: string): void {
    ch.trySend({ kind: 'error', seq: 0, code: 'join', message: reason });
    ch.trySend({ kind: 'bye', reason });
    setTimeout(() => ch.close(), 50);
  }

  private badFrame(ch: FrameChannel, device: HostDevice | null, error: Error): void {
    if (device) device.badFrames++;
    this.emit({ type: 'frame-error', deviceId: device?.id ?? null, error });
    ch.trySend({ kind: 'error', seq: 0, code: (error as { code?: string }).code ?? 'protocol', message: error.message });
  }

  private join(ch: FrameChannel, f: Extract<Frame, { kind: 'hello' }>): HostDevice {
    const old = this.devices.get(f.deviceId);
    if (old) this.lose(old, 'reconnected', false); // a reload: the same device comes back on a new connection
    for (const hop of [...this.cutHops]) if (hop.split('>').includes(f.deviceId)) this.cutHops.delete(hop); // worth another try
    const device = new HostDevice(f.deviceId, f.name || `Device ${this.devices.size}`, f.caps, ch);
    device.lastSeen = performance.now();
    this.devices.set(device.id, device);
    this.emit({ type: 'joined', device: device.info() });
    this.emitDevices();
    if (this.opts.autoRedeal ?? true) void this.redeal().catch(() => undefined);
    return device;
  }

  private onFrame(d: HostDevice, f: Frame): void {
    switch (f.kind) {
      case 'heartbeat':
        if (f.reply) { d.rttMs = Math.max(0, performance.now() - f.sentAt); this.pings.get(f.sentAt)?.(d.rttMs); }
        else d.channel?.trySend({ kind: 'heartbeat', reply: true, sentAt: f.sentAt });
        return;
      case 'progress': case 'ready':
        if (f.epoch !== this.epoch) return; // a late answer to a superseded deal: harmless
        d.onLoadFrame(f);
        this.emitDevices();
        return;
      case 'result': case 'ack': case 'error': {
        if (f.kind === 'error' && f.seq === 0 && f.code === LOAD_FAILED_CODE && d.status === 'loading') {
          d.loadFailed(new RemoteDeviceError(d.name, f.code, f.message)); this.emitDevices(); return;
        }
        if (f.kind === 'error' && f.seq === 0) { this.emit({ type: 'frame-error', deviceId: d.id, error: new RemoteDeviceError(d.name, f.code, f.message) }); return; }
        if (f.kind === 'error' && d.status === 'loading') { d.loadFailed(new RemoteDeviceError(d.name, f.code, f.message)); this.emitDevices(); return; }
        if (f.kind !== 'error' && f.epoch !== this.epoch) return;
        const problem = d.chain ? d.chain.handle(d.id, f) : new OutOfOrderError(`"${f.kind}" frame from "${d.name}", which runs no layers`);
        if (problem) this.badFrame(d.channel!, d, problem);
        return;
      }
      case 'read':
        if (this.opts.modelUrl !== '') { this.badFrame(d.channel!, d, new ProtocolError('"read" frame: this room serves its model by URL')); return; }
        d.reads ??= new ReadRation(this.opts.source, (answer) => d.channel ? d.channel.send(answer) : Promise.resolve());
        d.reads.push(f);
        return;
      case 'bye':
        this.lose(d, `said goodbye: ${f.reason}`);
        return;
      case 'link-lost':
        if (f.epoch === this.epoch) this.hopLost(d, f.peer, f.reason);
        return;
      default:
        this.badFrame(d.channel!, d, new ProtocolError(`a host does not accept "${f.kind}" frames`));
    }
  }

  private heartbeat(): void {
    const now = performance.now();
    const timeout = this.opts.lossTimeoutMs ?? 1250;
    const interval = this.opts.heartbeatMs ?? 250;
    const stalled = now - this.lastTick > 2 * interval;
    this.lastTick = now;
    const limits = { silenceMs: timeout, loadStallMs: this.opts.loadStallMs ?? 120_000, loadTimeoutMs: this.opts.loadTimeoutMs ?? 30 * 60_000 };
    for (const d of this.devices.values()) {
      if (!d.channel) continue;
      // This page itself was blocked (a long synchronous load or CPU forward): answers may be queued
      // behind us, so silence proves nothing. Give every device a fresh window instead of blaming it.
      if (stalled) d.freshWindow(now - interval);
      const verdict = d.judge(now, limits);
      if (verdict?.silent) { this.lose(d, verdict.why); continue; }
      if (verdict) { this.drop(d, verdict.why); continue; }
      d.channel.trySend({ kind: 'heartbeat', reply: false, sentAt: now });
    }
  }

  /** Round trips of `count` heartbeat frames (26 bytes on the wire), one at a time, to a guest: ms each. */
  async ping(deviceId: string, count: number): Promise<number[]> {
    const d = this.devices.get(deviceId);
    if (!d?.channel) throw new DealError(`no connected guest "${deviceId}" to ping`);
    const out: number[] = [];
    for (let i = 0; i < count; i++) {
      const sentAt = performance.now() + i * 1e-6; // unique key even within one clock tick
      const ms = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => { this.pings.delete(sentAt); reject(new DeviceLeftError(d.name, d.id, 'no heartbeat reply in 5 s')); }, 5000);
        this.pings.set(sentAt, (v) => { clearTimeout(timer); this.pings.delete(sentAt); resolve(v); });
        d.channel!.trySend({ kind: 'heartbeat', reply: false, sentAt });
      });
      out.push(ms);
    }
    return out;
  }

  /**
   * The signaling server saw this guest's connection drop (relayed by the server). A hint, not proof:
   * its data channel may be fine (a signaling blip, or a forged event), so the guest is dropped only if
   * its channel is closed or it does not answer a heartbeat within `probeMs` (a closed tab never does).
   */
  signalingDisconnect(deviceId: string, probeMs = this.probeMs): void {
    const d = this.devices.get(deviceId);
    if (!d || d.id === HOST_ID) return;
    this.probe(d, 'its signaling connection closed', probeMs);
  }

  private get probeMs(): number { return Math.min(750, this.opts.lossTimeoutMs ?? 1250); }

  /** Lose `d` (`why`) unless it answers a heartbeat within `probeMs`; then `onAnswer`. */
  private probe(d: HostDevice, why: string, probeMs = this.probeMs, onAnswer?: () => void): void {
    if (!d.channel?.isOpen()) { this.lose(d, why); return; }
    const sentAt = performance.now() + Math.random() * 1e-6; // a key no other ping uses
    const timer = setTimeout(() => { this.pings.delete(sentAt); this.lose(d, `${why} and it stopped answering`); }, probeMs);
    this.pings.set(sentAt, () => { clearTimeout(timer); this.pings.delete(sentAt); onAnswer?.(); });
    d.channel.trySend({ kind: 'heartbeat', reply: false, sentAt });
  }

  /**
   * `d` says its direct channel to neighbour `peerId` could not be opened or closed. While the deal is
   * still wiring, that hop goes through the host instead (a new deal). Once wired, a closed channel most
   * often means the neighbour is gone: probe it, and lose it, naming it, if it does not answer; if it
   * does, only the channel broke: the chain's request fails (`stopped`, naming the hop) and is re-wired.
   */
  private hopLost(d: HostDevice, peerId: string, reason: string): void {
    const route = this.routes.get(d.id);
    const hop = route?.next === peerId ? `${d.id}>${peerId}` : route?.prev === peerId ? `${peerId}>${d.id}` : null;
    if (!hop || !d.channel) {
      if (d.channel) this.badFrame(d.channel, d, new ProtocolError(`"link-lost" frame about device "${peerId}", which is not a neighbour of "${d.name}" in this deal`));
      return;
    }
    const peer = this.devices.get(peerId);
    const names = hop.split('>').map((id) => `"${this.devices.get(id)?.name ?? id}"`).join(' → ');
    const chain = d.chain;
    if (!chain) {
      this.cutHops.add(hop);
      this.emit({ type: 'frame-error', deviceId: d.id, error: new HopError(`direct hop ${names} could not be wired (${reason}): dealing it through the host`) });
      const old = this.epoch;
      const redone = this.redeal();
      redone.catch(() => undefined);
      this.redoneAs.set(old, redone);
      return;
    }
    if (!peer || chain.failed) return;
    this.probe(peer, `its direct channel with "${d.name}" closed`, this.probeMs, () => {
      chain.fail(new HopError(`the direct hop ${names} closed while both devices are still here (${reason})`));
      if (this.opts.autoRedeal ?? true) void this.redeal().catch(() => undefined);
    });
  }

  /** A chain of guests stalled or sent bad activations without naming one of them: its hops go through the host next time. */
  private chainFault(chain: ChainEngine, why: string): void {
    const ids = chain.devices.map((x) => x.id);
    for (let i = 1; i < ids.length; i++) this.cutHops.add(`${ids[i - 1]}>${ids[i]}`);
    chain.fail(new HopError(`chain ${chain.label}: ${why}; its hops go through the host from the next deal`));
    if (this.opts.autoRedeal ?? true) void this.redeal().catch(() => undefined);
  }

  /** A guest misbehaved (stalled, sent non-finite activations): it is told why, dropped, and the room re-deals. */
  private drop(d: HostDevice, why: string): void {
    d.channel?.trySend({ kind: 'bye', reason: `removed by the host: ${why}` });
    this.lose(d, why);
  }

  /** Remove a device: it is told goodbye and its layers are re-dealt. */
  remove(deviceId: string): void {
    const d = this.devices.get(deviceId);
    if (!d || d.id === HOST_ID) throw new DealError(`no guest "${deviceId}" to remove`);
    d.channel?.trySend({ kind: 'bye', reason: 'removed by the host' });
    this.lose(d, 'removed by the host');
  }

  private lose(d: HostDevice, why: string, redeal = true): void {
    if (!this.devices.has(d.id) || this.devices.get(d.id) !== d) return;
    const detectedAt = performance.now();
    this.devices.delete(d.id);
    const ch = d.channel;
    d.channel = null;
    d.status = 'left';
    setTimeout(() => ch?.close(), 100); // let a goodbye out first
    const err = new DeviceLeftError(d.name, d.id, why);
    d.chain?.fail(err);
    d.loadFailed(err);
    this.emit({ type: 'left', device: d.info(), why, detectedAt });
    this.emitDevices();
    if (redeal && (this.opts.autoRedeal ?? true)) void this.redeal().catch(() => undefined);
  }

  /** Set (or clear, with null) a manual deal, then re-deal. */
  setManualDeal(entries: DealEntry[] | null): Promise<void> {
    if (entries) validateDeal(entries, [...this.devices.keys()], this.opts.config.numLayers, { firstLayerOn: HOST_ID });
    this.manual = entries;
    return this.redeal();
  }

  /** Deal layers again (now, or when the running request ends); resolves when every device is ready. */
  redeal(): Promise<void> {
    if (this.running) {
      this.redealAfterRun = true;
      return new Promise((resolve, reject) => {
        const off = this.on((e) => {
          if (e.type === 'ready') { off(); resolve(); } else if (e.type === 'deal-error') { off(); reject(e.error); }
        });
      });
    }
    const epoch = ++this.epoch;
    // A deal still waiting for its devices is superseded now (it would otherwise wait forever: a
    // device's answer for an old deal is ignored), so this one can start.
    for (const d of this.devices.values()) d.supersede();
    const run = this.dealing.catch(() => undefined).then(() => {
      if (epoch !== this.epoch) throw new DealError(`deal ${epoch} was superseded by deal ${this.epoch}`);
      return this.dealNow(epoch);
    });
    this.dealing = run;
    // A deal made again without a hop that could not be wired stands in for this one.
    return run.catch((e: unknown) => {
      const redone = this.redoneAs.get(epoch);
      this.redoneAs.delete(epoch);
      if (redone) return redone;
      throw e;
    });
  }

  /** Resolves when the latest deal is complete (every device ready). */
  async whenReady(): Promise<void> {
    for (;;) {
      const current = this.dealing;
      try { await current; } catch (e) { if (current === this.dealing) throw e; continue; }
      if (current === this.dealing && this.generator && !this.redealAfterRun) return;
      if (current === this.dealing) await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * What dealing counts: each layer's weight + KV bytes (for a linear layer its recurrent state, live and
   * per checkpoint snapshot) and the host's fixed bytes (embedding, head), exact from the weight plan
   * when the loader made one, else estimated from the config.
   */
  get dealCost(): DealCost {
    const { config } = this.opts;
    const snapshots = snapshotsForCkpt(this.opts.ckpt ?? 4);
    return this.opts.weightBytes
      ? dealCostFromPlan(config, this.opts.weightBytes.layerBytes, this.opts.weightBytes.fixedBytes, this.opts.ctx, snapshots)
      : dealCost(config, this.opts.format, this.opts.ctx, snapshots);
  }

  private async dealNow(epoch: number): Promise<void> {
    const { config } = this.opts;
    try {
      const ids = [...this.devices.keys()];
      // A manual deal applies while every device it names is here (a reloading guest comes back to it).
      const manual = this.manual?.every((e) => this.devices.has(e.deviceId)) ? this.manual : null;
      const entries = manual
        ? validateDeal(manual, ids, config.numLayers, { firstLayerOn: HOST_ID })
        : dealLayers([...this.devices.values()].map((d) => ({ id: d.id, name: d.name, memoryBudgetBytes: d.caps.memoryBudgetBytes, speed: d.caps.speed })),
          this.dealCost);
      this.deal = entries;
      this.roomEngine = null;
      this.generator = null;
      const chains = stagesOf(entries, HOST_ID, (this.opts.directHops ?? true) ? this.cutHops : null);
      this.routes = routesOf(chains, HOST_ID);
      const waits: Promise<void>[] = [];
      for (const e of entries) {
        const d = this.devices.get(e.deviceId)!;
        d.chain?.fail(new DeviceLeftError(d.name, d.id, 'superseded by a new deal'));
        d.chain = null;
        const ready = d.startLoad(epoch, e.range);
        // Only devices that hold layers are waited for: one dealt none (a newcomer, or one that never
        // answers) cannot hold the room up.
        if (e.range[1] > e.range[0] || d.id === HOST_ID) waits.push(ready);
        if (d.id === HOST_ID) continue;
        const modelFile = this.opts.modelUrl === '' ? this.opts.source.modelFile : undefined;
        const { prev, next } = this.routes.get(d.id) ?? { prev: '', next: '' };
        d.channel!.trySend({ kind: 'assign', epoch, model: this.opts.modelUrl, modelKey: this.opts.modelKey, range: e.range, ctx: this.opts.ctx, ...(modelFile ? { modelFile } : {}), prev, next });
      }
      this.emitDevices();
      void this.loadHost(epoch, entries.find((e) => e.deviceId === HOST_ID)!.range);
      await Promise.all(waits);
      if (epoch !== this.epoch) return;
      const stages: LayerEngine[] = [];
      for (const group of chains) {
        const members: HostDevice[] = [];
        for (const e of group) {
          const d = this.devices.get(e.deviceId);
          if (!d) throw new DeviceLeftError(e.deviceId, e.deviceId, 'left during the deal');
          members.push(d);
        }
        if (members[0]!.id === HOST_ID) { stages.push(this.hostEngine!); continue; }
        stages.push(this.chainOf(members, group, epoch));
      }
      this.roomEngine = new RoomEngine(this.hostEngine!, stages, { numLayers: config.numLayers, hiddenSize: config.hiddenSize, microChunk: this.opts.microChunk ?? 16 });
      this.generator = new Generator(this.roomEngine, { ctx: this.opts.ctx, prefillChunk: this.opts.prefillChunk ?? 512, ...(this.opts.ckpt !== undefined ? { ckpt: this.opts.ckpt } : {}) });
      this.emitDevices();
      this.emit({ type: 'ready', epoch, deal: this.currentDeal });
    } catch (e) {
      if (epoch === this.epoch) this.emit({ type: 'deal-error', error: e as Error });
      throw e;
    }
  }

  private chainOf(members: HostDevice[], group: DealEntry[], epoch: number): ChainEngine {
    const chain = buildChain(members, group, epoch, this.opts, (why, culprit) => {
      const d = culprit && this.devices.get(culprit.id);
      if (d) this.drop(d, why); else this.chainFault(chain, why);
    });
    for (const d of members) d.chain = chain;
    return chain;
  }

  private async loadHost(epoch: number, range: [number, number]): Promise<void> {
    const h = this.host;
    try {
      if (this.hostEngine && this.hostRange && this.hostRange[0] === range[0] && this.hostRange[1] === range[1]) {
        await this.hostEngine.truncate(0);
        h.onLoadFrame({ kind: 'ready', epoch, networkBytes: 0, cacheBytes: 0, ms: 0 });
        return;
      }
      const t0 = performance.now();
      const source = new CachingSource(this.opts.source, this.opts.store, this.opts.modelKey);
      const weights = await this.opts.loadWeights(source, {
        layers: range, embedding: true, head: true,
        onProgress: (p) => { h.onLoadFrame({ kind: 'progress', epoch, ...p, ...source.counts }); },
      });
      if (epoch !== this.epoch) return;
      await this.hostEngine?.dispose();
      this.hostEngine = await this.opts.createEngine(weights, { ctx: this.opts.ctx, range });
      this.hostRange = range;
      h.onLoadFrame({ kind: 'ready', epoch, ...source.counts, ms: performance.now() - t0 });
    } catch (e) {
      h.loadFailed(e as Error);
    } finally {
      this.emitDevices();
    }
  }

  /**
   * Generate through the whole room. A device holding layers that leaves mid-request ends it at once,
   * `stopped` with a note naming the device (the Generator unwinds and truncates the others in the
   * background; the next request or re-deal waits for that).
   */
  async generate(prompt: readonly number[], opts: GenerateOptions): Promise<GenerationResult> {
    await this.whenReady();
    const generator = this.generator!;
    const holders = new Set(this.deal.filter((e) => e.range[1] > e.range[0]).map((e) => e.deviceId));
    const t0 = performance.now();
    const sofar: number[] = [];
    let onLeft: (e: DeviceLeftError) => void = () => undefined;
    const left = new Promise<DeviceLeftError>((resolve) => { onLeft = resolve; });
    const off = this.on((e) => { if (e.type === 'left' && holders.has(e.device.id)) onLeft(new DeviceLeftError(e.device.name, e.device.id, e.why)); });
    this.running = true;
    const run = generator.generate(prompt, {
      ...opts,
      onToken: (id, ids) => { sofar.length = 0; sofar.push(...ids); opts.onToken?.(id, ids); },
    }).finally(() => {
      off();
      this.running = false;
      if (this.redealAfterRun) { this.redealAfterRun = false; void this.redeal().catch(() => undefined); }
    });
    this.dealing = this.dealing.then(() => run.then(() => undefined, () => undefined)); // a re-deal waits for the unwinding
    const first = await Promise.race([run.then((result) => ({ result })), left.then((gone) => ({ gone }))]);
    if ('result' in first) {
      const result = first.result;
      if (result.finish === 'error' && (result.error instanceof DeviceLeftError || result.error instanceof HopError)) {
        result.finish = 'stopped';
        result.note = result.error.message;
      }
      return result;
    }
    const seconds = (performance.now() - t0) / 1000;
    return {
      ids: [...sofar], finish: 'stopped', note: first.gone.message, error: first.gone,
      stats: {
        promptTokens: prompt.length, promptComputed: 0, promptReused: 0, generated: sofar.length, prefillSeconds: 0,
        decodeSeconds: 0, prefillTokensPerSecond: 0, decodeTokensPerSecond: 0, seconds, seed: opts.sampling?.seed ?? 0,
      },
    };
  }

  /** Close the room: goodbye to every guest, free engines. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    for (const d of this.devices.values()) { d.channel?.sendNow({ kind: 'bye', reason: 'the host closed the room' }); const ch = d.channel; setTimeout(() => ch?.close(), 50); }
    await this.roomEngine?.dispose();
    await this.hostEngine?.dispose();
  }
}

