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
import { Generator } from '../model/generator.ts';
import type { GenerateOptions, GenerationResult, RecoverOutcome } from '../model/generate-types.ts';
import { snapshotBytes } from '../model/types.ts';
import { validateDeal, type DealCost, type DealEntry } from './deal.ts';
import { dealRoom, deviceSteps, hostDealCost, resumedDeal, sameDeal } from './host-deal.ts';
import { ChainEngine } from './chain-engine.ts';
import { assignFrame, buildChain, routesOf, stageEngines, stagesOf, tokenRoute, type TokenRoute } from './host-chains.ts';
import { DealError, DeviceLeftError, HopError, OutOfOrderError, ProtocolError, RemoteDeviceError } from './errors.ts';
import { ReadRation } from './peer-source.ts';
import { LOAD_FAILED_CODE, PROTOCOL_VERSION, type Frame } from './protocol.ts';
import { RoomEngine } from './room-engine.ts';
import { FrameChannel, type MessageLink } from './wire.ts';
import { HostDevice, type DeviceInfo } from './host-device.ts';
import { HostLiveness } from './host-liveness.ts';
import { HostShare } from './host-share.ts';
import { clampCard } from './card-limits.ts';
import { FrameBudget } from './frame-budget.ts';
import { NonFiniteActivationsError } from './finite-check.ts';
import { loadDeadlineMs, shareBytes } from './load-deadline.ts';

export type { DeviceInfo } from './host-device.ts';

import type { AcceptOptions, HostEvent, HostOptions, RoomContext } from './host-types.ts';
export type { AcceptOptions, HostEvent, HostOptions, RoomContext } from './host-types.ts';

export const HOST_ID = 'host';

export class RoomHost {
  readonly host: HostDevice;
  private readonly devices = new Map<string, HostDevice>(); // insertion order = join order (host first)
  private epoch = 0;
  private manual: DealEntry[] | null = null;
  /** The deal before this host's page reloaded, until it is dealt or the room changes (another device joins, one leaves). */
  private resume: HostOptions['resumeDeal'] | null;
  /** Host memory kept outside the deal (a draft model's weights and cache). */
  private hostReserved = 0;
  private deal: DealEntry[] = [];
  /** The context of the deal in effect (until the first deal: the one wanted). */
  private context: RoomContext;
  private readonly share: HostShare;
  private roomEngine: RoomEngine | null = null;
  private generator: Generator | null = null;
  private dealing: Promise<void> = Promise.resolve();
  private running = false;
  private redealAfterRun = false;
  private readonly listeners = new Set<(e: HostEvent) => void>();
  private closed = false;
  private readonly liveness: HostLiveness;
  /** This deal's neighbours of each device ('' = the host), as told in its assign. */
  private routes = new Map<string, { prev: string; next: string }>();
  /** Hops "a>b" that could not be wired or stalled: dealt through the host until a or b joins again. */
  private readonly cutHops = new Set<string>();
  /** A deal that had to be made again without a hop: whoever waits for the old one waits for the new. */
  private readonly redoneAs = new Map<number, Promise<void>>();
  /** Refused frames per connection (frame-budget.ts): past the budget, the sender is dropped. */
  private readonly refusals = new WeakMap<FrameChannel, FrameBudget>();

  constructor(readonly opts: HostOptions) {
    this.resume = opts.resumeDeal ?? null;
    this.host = new HostDevice(HOST_ID, opts.name ?? 'Host', opts.caps, null);
    this.host.status = 'loading';
    this.context = { ctx: opts.ctx, want: opts.ctx, oneMoreDeviceHolds: false };
    this.devices.set(HOST_ID, this.host);
    this.share = new HostShare(opts, this.host);
    this.liveness = new HostLiveness({
      opts, cutHops: this.cutHops, redoneAs: this.redoneAs,
      devices: () => this.devices.values(), device: (id) => this.devices.get(id), epoch: () => this.epoch, route: (id) => this.routes.get(id),
      lose: (d, why) => this.lose(d, why), drop: (d, why) => this.drop(d, why), badFrame: (d, error) => this.badFrame(d.channel!, d, error),
      emit: (e) => this.emit(e), redeal: () => this.redeal(),
    });
  }

  on(fn: (e: HostEvent) => void): () => void { this.listeners.add(fn); return () => this.listeners.delete(fn); }
  private emit(e: HostEvent): void { for (const fn of this.listeners) fn(e); }
  private emitDevices(): void { this.emit({ type: 'devices', devices: this.deviceList() }); }

  deviceList(): DeviceInfo[] {
    return [...this.devices.values()].map((d) => {
      const info = d.info();
      const engine = d.id === HOST_ID ? this.share.engine : d.chain;
      // A guest: its own account of its layers' time (each result's `work`), the figure its own page shows
      // (guest.ts speedThisDeal), so both screens agree; the host's view (network included) only when it
      // reported none. The host itself: its engine's time.
      const own = d.chain ? d.chain.speedOf(d.id) || null : null;
      info.tokensPerSecond = !this.roomEngine || info.range[1] <= info.range[0] ? 0 : own ?? this.roomEngine.speedOf(engine);
      info.snapshotBytes = snapshotBytes(this.opts.config, info.range);
      info.snapshots = info.snapshotBytes > 0 ? (this.generator?.snapshotPositions.length ?? 0) : 0;
      return clampCard(info);
    });
  }
  /** The devices whose layers a stage of the room engine runs: the host's own engine, or a chain's guests. */
  private devicesOf(stage: unknown): string[] {
    if (stage === this.share.engine) return [HOST_ID];
    return [...this.devices.values()].filter((d) => d.chain !== null && d.chain === stage).map((d) => d.id);
  }
    get currentDeal(): DealEntry[] { return this.deal.map((e) => ({ ...e })); }
  /** The context the deal in effect holds (KV at this many tokens on every device), of the one wanted. */
  get currentContext(): RoomContext { return { ...this.context }; }
  get currentEpoch(): number { return this.epoch; }
  /** The person's manual deal, or null when the room deals automatically. */
  get manualDeal(): DealEntry[] | null { return this.manual; }
  /** A deal from before a reload still waits for its devices to come back (it was not dealt yet, nor did the room change). */
  get resuming(): boolean { return !!this.resume && !(this.deal.length > 0 && sameDeal(this.deal, this.resume.entries)); }
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
      if (!this.opts.engines[f.caps.engine]) { this.refuse(ch, `engine "${f.caps.engine}" is none this room runs (${Object.keys(this.opts.engines).join(', ')})`); return; }
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
    const budget = this.refusals.get(ch) ?? new FrameBudget(this.opts.refusedFrames?.max, this.opts.refusedFrames?.windowMs);
    this.refusals.set(ch, budget);
    if (budget.refuse()) { this.overBudget(ch, device, budget.count, error); return; }
    if (device) device.badFrames++;
    this.emit({ type: 'frame-error', deviceId: device?.id ?? null, error });
    ch.trySend({ kind: 'error', seq: 0, code: (error as { code?: string }).code ?? 'protocol', message: error.message });
  }

  /** A connection past its refused-frame budget: no more answers; a guest is dropped, naming it (once). */
  private overBudget(ch: FrameChannel, device: HostDevice | null, count: number, last: Error): void {
    if (!device) { ch.close(); return; }
    if (this.devices.get(device.id) !== device) return;
    this.drop(device, `${count} refused frames within ${((this.opts.refusedFrames?.windowMs ?? 10_000) / 1000).toFixed(0)} s (the last: ${last.message.slice(0, 200)})`);
  }

  private join(ch: FrameChannel, f: Extract<Frame, { kind: 'hello' }>): HostDevice {
    const old = this.devices.get(f.deviceId);
    if (old) this.lose(old, 'reconnected', false); // a reload: the same device comes back on a new connection
    for (const hop of [...this.cutHops]) if (hop.split('>').includes(f.deviceId)) this.cutHops.delete(hop); // worth another try
    if (this.resume && !this.resume.entries.some((e) => e.deviceId === f.deviceId)) this.resume = null;   // a newcomer: deal afresh
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
        this.liveness.onHeartbeat(d, f);
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
        // A request's error while the device loads a new deal answers the superseded deal (this one's
        // requests wait for every device's `ready`): heard, not held against the load.
        if (f.kind === 'error' && d.status === 'loading') { this.emit({ type: 'frame-error', deviceId: d.id, error: new RemoteDeviceError(d.name, f.code, f.message) }); return; }
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
        if (f.epoch === this.epoch) this.liveness.hopLost(d, f.peer, f.reason);
        return;
      default:
        this.badFrame(d.channel!, d, new ProtocolError(`a host does not accept "${f.kind}" frames`));
    }
  }

  /** Round trips of `count` heartbeat frames (26 bytes on the wire), one at a time, to a guest: ms each. */
  async ping(deviceId: string, count: number): Promise<number[]> {
    const d = this.devices.get(deviceId);
    if (!d?.channel) throw new DealError(`no connected guest "${deviceId}" to ping`);
    return this.liveness.ping(d, count);
  }

  /**
   * The signaling server saw this guest's connection drop (relayed by the server). A hint, not proof:
   * its data channel may be fine (a signaling blip, or a forged event), so the guest is dropped only if
   * its channel is closed or it does not answer a heartbeat within `probeMs` (a closed tab never does).
   */
  signalingDisconnect(deviceId: string, probeMs = this.liveness.probeMs): void {
    const d = this.devices.get(deviceId);
    if (!d || d.id === HOST_ID) return;
    this.liveness.probe(d, 'its signaling connection closed', probeMs);
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
    if (redeal) this.resume = null;   // the room the old deal was for is gone ('reconnected' is the same device back)
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
    this.resume = null;
    return this.redeal();
  }

  /** Keep `bytes` of host memory out of the deal (a draft model); re-deals if that changes it; DealError (nothing kept) if it no longer fits. */
  reserveHostMemory(bytes: number): Promise<void> {
    if (!(Number.isFinite(bytes) && bytes >= 0)) throw new DealError(`cannot reserve ${bytes} bytes of the host's memory`);
    if (bytes === this.hostReserved) return Promise.resolve();
    const next = dealRoom(this.devices, this.manual, this.opts, HOST_ID, bytes);   // throws when the layers no longer fit
    // Nor may it cost the room context: the agent's budget follows the context, a draft model is a nicety.
    if (this.deal.length > 0 && next.ctx < this.context.ctx) {
      throw new DealError(`keeping ${(bytes / 2 ** 20).toFixed(0)} MiB on the host would cut the room's context from ${this.context.ctx.toLocaleString('en-US')} to ${next.ctx.toLocaleString('en-US')} tokens`);
    }
    this.hostReserved = bytes;
    return sameDeal(next.entries, this.deal) && next.ctx === this.context.ctx ? Promise.resolve() : this.redeal();
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
      // A device this deal waited for was lost or dropped (it stalled, trickled, left): the room deals
      // again without it and goes on, rather than failing whoever asked for this deal.
      if (e instanceof DeviceLeftError && !this.closed) return epoch === this.epoch ? this.redeal() : this.whenReady();
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
  get dealCost(): DealCost { return hostDealCost(this.opts, this.context.ctx); }

  private async dealNow(epoch: number): Promise<void> {
    const { config } = this.opts;
    try {
      // The deal from before a reload while exactly its devices are here (the guests keep their engines), else the usual one.
      const resumed = this.manual ? null : resumedDeal(this.devices, this.resume, this.opts, HOST_ID, this.hostReserved);
      // A manual deal from before the reload is the person's again once its devices are back (not "automatic").
      if (resumed && this.resume?.manual) this.manual = resumed.entries;
      const dealt = resumed ?? dealRoom(this.devices, this.manual, this.opts, HOST_ID, this.hostReserved);
      const { entries, ctx } = dealt;
      const steps = deviceSteps(this.devices, this.opts, HOST_ID, this.hostReserved);   // what each device's scratch was counted at
      this.deal = entries;
      this.context = { ctx, want: dealt.want, oneMoreDeviceHolds: dealt.oneMoreDeviceHolds };
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
        d.loadDeadlineMs = loadDeadlineMs(shareBytes(dealt.cost, e.range), this.opts);
        // Only devices that hold layers are waited for: one dealt none (a newcomer, or one that never
        // answers) cannot hold the room up.
        if (e.range[1] > e.range[0] || d.id === HOST_ID) waits.push(ready);
        if (d.id !== HOST_ID) d.channel!.trySend(assignFrame(this.opts, epoch, e.range, this.routes.get(d.id), ctx, steps.get(d.id)));
      }
      this.emitDevices();
      void this.share.load(epoch, entries.find((e) => e.deviceId === HOST_ID)!.range, ctx, steps.get(HOST_ID), () => this.epoch, () => this.emitDevices());
      await Promise.all(waits);
      if (epoch !== this.epoch) return;
      const stages = stageEngines(chains, this.devices, HOST_ID, this.share.engine!, (members, group) => this.chainOf(members, group, epoch));
      this.roomEngine = new RoomEngine(this.share.engine!, stages, { numLayers: config.numLayers, hiddenSize: config.hiddenSize, microChunk: this.opts.microChunk ?? 16 });
      this.roomEngine.onStageRows = (stage, rows) => this.emit({ type: 'rows', deviceIds: this.devicesOf(stage), rows });
      this.roomEngine.stageName = (stage) => this.devicesOf(stage).map((id) => `device "${this.devices.get(id)?.name ?? id}"`).join(' → ');
      this.generator = new Generator(this.roomEngine, { ctx, prefillChunk: this.opts.prefillChunk ?? 512, ...(this.opts.ckpt !== undefined ? { ckpt: this.opts.ckpt } : {}) });
      this.emitDevices();
      this.emit({ type: 'ready', epoch, deal: this.currentDeal, context: this.currentContext });
    } catch (e) {
      if (epoch === this.epoch) this.emit({ type: 'deal-error', error: e as Error });
      throw e;
    }
  }

  private chainOf(members: HostDevice[], group: DealEntry[], epoch: number): ChainEngine {
    const chain = buildChain(members, group, epoch, this.opts, (why, culprit) => {
      const d = culprit && this.devices.get(culprit.id);
      if (d) this.drop(d, why); else this.liveness.chainFault(chain, why);
    });
    for (const d of members) d.chain = chain;
    return chain;
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
      if (result.finish === 'error' && result.error && (result.error instanceof DeviceLeftError || result.error instanceof HopError || result.error instanceof NonFiniteActivationsError)) {
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

  /**
   * After a request the room stopped because a device left: waits until the room has dealt its layers again
   * without it (the automatic re-deal), then says over how many devices it runs; or why it cannot run again
   * (automatic re-deal off, the layers no longer fit, the room closed). Bounded by the deal's own load
   * deadlines, the room's load timeout and `signal` (the user's Stop).
   */
  async recover(signal?: AbortSignal): Promise<RecoverOutcome> {
    if (this.closed) return { ok: false, text: 'the room is closed' };
    if (!(this.opts.autoRedeal ?? true)) return { ok: false, text: 'Re-deal the layers over the devices still in the room, then send the request again' };
    const cap = this.opts.loadTimeoutMs ?? 30 * 60_000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort = (): void => undefined;
    const stop = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`the room was not ready again within ${Math.round(cap / 1000)} s`), cap);
      onAbort = () => resolve('stopped while the room dealt its layers again');
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const why = await Promise.race([this.whenReady().then(() => null), stop]);
      if (why !== null) return { ok: false, text: why };
    } catch (e) {
      return { ok: false, text: `the room could not deal its layers again (${(e as Error).message}): add a device or pick a smaller model, then send the request again` };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    const holders = this.deal.filter((e) => e.deviceId === HOST_ID || e.range[1] > e.range[0]).length;
    return { ok: true, text: `the room dealt its layers again over ${holders} device${holders === 1 ? '' : 's'}` };
  }

  /**
   * The page goes away (a reload, or its tab closing: a page cannot tell which): no goodbye, so the guests keep
   * their layers and try to join the same room again (guest-reconnect.ts); the channels just close.
   */
  goAway(): void {
    if (this.closed) return;
    this.closed = true;
    this.liveness.stop();
    for (const d of this.devices.values()) d.channel?.close();
  }

  /** Close the room: goodbye to every guest, free engines. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.liveness.stop();
    for (const d of this.devices.values()) { d.channel?.sendNow({ kind: 'bye', reason: 'the host closed the room' }); const ch = d.channel; setTimeout(() => ch?.close(), 50); }
    // The room's engine holds the host's share too: each is freed once, and a failure to free one never keeps the room open.
    await Promise.allSettled([this.roomEngine?.dispose(), this.share.engine?.dispose()]);
  }
}

