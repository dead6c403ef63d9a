// A guest device: says hello with its capabilities, loads the layers the host assigns (from the model URL
// or from the host over the channel, through its weight cache), runs `forward` and `checkpoint` frames on
// its LayerEngine strictly in sequence order, answers heartbeats, and says goodbye on leaving. It only
// ever exchanges protocol frames: no prompt, file or token reaches it. Transport-agnostic: attach() takes
// any MessageLink (PeerJS in the browser, memory in tests), and a reconnect is just another attach().
//
// Direct hops: a deal names the guest's neighbours. Its forwards then come from its previous device (the
// host, or the guest before it) and its output goes on to the next guest, or back to the host as a
// `result` when it is the last. Checkpoints still come from the host. Frames of one request sequence
// arrive over two channels, so a guest that is not first holds a frame that is early (bounded) until
// the ones before it came; a request that failed upstream reaches it as `skip`.
import { requireFinite } from './finite-check.ts';
import type { LayerEngine, LayerRange } from '../model/engine-types.ts';
import type { LoadProgress, ModelSource } from '../model/types.ts';
import { HopError, OutOfOrderError, ProtocolError } from './errors.ts';
import { NeighbourLinks, type DialFn } from './guest-links.ts';
import { PeerModelSource } from './peer-source.ts';
import { LOAD_FAILED_CODE, MAX_CHAIN, PROTOCOL_VERSION, type DeviceCaps, type Frame, type FrameOf } from './protocol.ts';
import { shareLoaderOf, type ShareLoading } from './share-loader.ts';
import { CachingSource, type ByteStore } from './weight-cache.ts';
import { FrameChannel, MAX_FRAME_BYTES, type MessageLink } from './wire.ts';

export type { EngineFactory, LoadWeightsFn, ShareLoadFn, ShareRequest } from './share-loader.ts';

export interface GuestOptions extends ShareLoading {
  roomId: string;
  deviceId: string;
  name: string;
  caps: DeviceCaps;
  store: ByteStore;
  /** Model URL from an assign → ModelSource (resolveModelSource in the app). */
  resolveSource: (model: string) => Promise<ModelSource>;
  /** No frame from the host for this long: a `host-silent` event (default 4 s). */
  hostTimeoutMs?: number;
  /** Opens a direct channel to another guest of the room (direct hops); without it every hop goes through the host. */
  dial?: DialFn;
  /** A direct channel to the next device must be open within this long (default 8 s). */
  dialTimeoutMs?: number;
}

/** Early frames a guest holds while it waits for the ones before them (see the header). */
export const MAX_HELD_FRAMES = 64;
export const MAX_HELD_BYTES = MAX_FRAME_BYTES;

type Sequenced = FrameOf<'forward'> | FrameOf<'checkpoint'> | FrameOf<'skip'>;

export type GuestEvent =
  | { type: 'connected' }
  /** The host dealt this device `range` at context `ctx` (the KV cache its layers hold). */
  | { type: 'assigned'; epoch: number; range: LayerRange; ctx: number }
  | { type: 'progress'; epoch: number; bytesDone: number; bytesTotal: number }
  | { type: 'ready'; epoch: number; range: LayerRange; networkBytes: number; cacheBytes: number }
  | { type: 'frame-error'; error: Error }
  | { type: 'error'; error: Error }
  | { type: 'removed'; reason: string }
  | { type: 'host-silent'; ms: number }
  | { type: 'host-lost'; why: string };

export class RoomGuest {
  private channel: FrameChannel | null = null;
  private peerSource: PeerModelSource | null = null;
  private engine: LayerEngine | null = null;
  private engineModel = '';
  private engineCtx = 0;
  /** The step the deal gave the engine it holds (undefined: its own). */
  private engineStep: number | undefined = undefined;
  private hiddenSize = 0;                  // H of the loaded model: a forward frame carries [count, H]
  private epoch = -1;
  private range: LayerRange = [0, 0];
  private lastSeq = 0;
  private prev = '';                       // this deal's neighbours ('' = the host)
  private next = '';
  private readonly held = new Map<number, Sequenced>();
  private heldBytes = 0;
  private readonly links: NeighbourLinks;
  private queue: Promise<void> = Promise.resolve();
  private loadAbort: AbortController | null = null;
  private lastHeard = 0;
  private watchdog: ReturnType<typeof setInterval> | undefined;
  private readonly listeners = new Set<(e: GuestEvent) => void>();
  readonly stats = { framesIn: 0, badFrames: 0, forwards: 0, networkBytes: 0, cacheBytes: 0, hopsOut: 0, resultsOut: 0 };
  /**
   * This deal's rows through this device's layers and the seconds they took: the same `work` figure each
   * result reports to the host, so the guest's page and the host's card show one speed (speedThisDeal).
   */
  private dealWork = { rows: 0, seconds: 0 };

  /** Tokens per second this device's layers ran at in the current deal (0 before any work): what the host's card shows for it. */
  get speedThisDeal(): number { return this.dealWork.seconds > 0 ? this.dealWork.rows / this.dealWork.seconds : 0; }

  constructor(readonly opts: GuestOptions) {
    this.links = new NeighbourLinks({
      onFrame: (peer, f) => this.onNeighbourFrame(peer, f),
      onBadFrame: (peer, e) => this.reportBad(0, new ProtocolError(`from device "${peer}": ${e.message}`)),
      onClose: (peer, direction, why) => {
        const ours = direction === 'out' ? peer === this.next : peer === this.prev;
        if (ours && this.channel) this.channel.trySend({ kind: 'link-lost', epoch: this.epoch, peer, reason: `the direct channel ${direction === 'out' ? 'to' : 'from'} it closed: ${why}` });
      },
    }, opts.dial, opts.dialTimeoutMs);
  }

  /** A direct channel another guest of the room opened to this one (the transport vouches for `fromDeviceId`). */
  acceptNeighbour(link: MessageLink, fromDeviceId: string): void { this.links.accept(link, fromDeviceId, this.prev); }

  /** This deal's neighbours ('' = the host). */
  get route(): { prev: string; next: string } { return { prev: this.prev, next: this.next }; }

  on(fn: (e: GuestEvent) => void): () => void { this.listeners.add(fn); return () => this.listeners.delete(fn); }
  private emit(e: GuestEvent): void { for (const fn of this.listeners) fn(e); }

  get assignedRange(): LayerRange { return this.range; }
  get currentEpoch(): number { return this.epoch; }
  get frameChannel(): FrameChannel | null { return this.channel; }

  /** Start talking to the host over `link` (a fresh connection; replaces any previous one). */
  attach(link: MessageLink): void {
    this.channel?.close();
    const ch = new FrameChannel(link);
    this.channel = ch;
    ch.onFrame = (f) => { this.lastHeard = performance.now(); this.stats.framesIn++; this.onFrame(ch, f); };
    ch.onBadFrame = (e) => this.reject(ch, 0, e);
    ch.onClose = (why) => { if (this.channel === ch) this.hostGone(`connection closed: ${why}`); };
    this.lastHeard = performance.now();
    const timeout = this.opts.hostTimeoutMs ?? 4000;
    clearInterval(this.watchdog);
    const every = Math.min(1000, timeout / 2);
    let lastTick = performance.now();
    let silent = false;
    this.watchdog = setInterval(() => {
      const now = performance.now();
      if (now - lastTick > 2 * every) this.lastHeard = Math.max(this.lastHeard, now - every); // we were blocked, not the host
      lastTick = now;
      // Silence is reported, not acted on: a host busy loading its share (or a blocked tab) comes back,
      // and a host that is really gone closes the channel (or the signaling server drops it).
      if (this.channel === ch && !silent && now - this.lastHeard > timeout) { silent = true; this.emit({ type: 'host-silent', ms: now - this.lastHeard }); }
      if (now - this.lastHeard <= timeout) silent = false;
    }, every);
    const { roomId, deviceId, name, caps } = this.opts;
    ch.trySend({ kind: 'hello', protocol: PROTOCOL_VERSION, roomId, deviceId, name, caps });
    this.emit({ type: 'connected' });
  }

  /** Leave: goodbye frame (best effort), close, free the engine. */
  async leave(reason = 'left'): Promise<void> {
    const ch = this.channel;
    this.channel = null;
    clearInterval(this.watchdog);
    if (ch?.isOpen()) { ch.sendNow({ kind: 'bye', reason }); setTimeout(() => ch.close(), 50); }
    this.links.closeAll();
    this.loadAbort?.abort();
    await this.engine?.dispose();
    this.engine = null;
  }

  private hostGone(why: string): void {
    const ch = this.channel;
    this.channel = null;
    clearInterval(this.watchdog);
    ch?.close();
    this.links.closeAll();
    this.peerSource?.failAll(`the host went away (${why})`);
    this.loadAbort?.abort();
    this.emit({ type: 'host-lost', why });
  }

  /** A frame the guest cannot accept: tell the host (error frame with the request's seq) and go on. */
  private reject(ch: FrameChannel, seq: number, error: Error): void {
    this.stats.badFrames++;
    this.emit({ type: 'frame-error', error });
    ch.trySend({ kind: 'error', seq, code: (error as { code?: string }).code ?? 'error', message: error.message });
  }

  /** The same, for what came from a neighbour: the host hears of it (it is the one that can act). */
  private reportBad(seq: number, error: Error): void {
    if (this.channel) this.reject(this.channel, seq, error);
    else { this.stats.badFrames++; this.emit({ type: 'frame-error', error }); }
  }

  /** Frames from a neighbour: only the previous device of this deal may send, and only forwards and skips. */
  private onNeighbourFrame(peer: string, f: Frame): void {
    this.stats.framesIn++;
    // Reported with seq 0: the seq of a frame from a stranger is no request of ours (answering it would
    // fail whichever request has that number).
    if (peer !== this.prev) {
      this.reportBad(0, new ProtocolError(`"${f.kind}" frame from device "${peer}", which is not this device's previous hop (${this.prev ? `"${this.prev}"` : 'the host'})`));
      return;
    }
    if (f.kind !== 'forward' && f.kind !== 'skip') { this.reportBad(0, new ProtocolError(`from device "${peer}": a neighbour does not send "${f.kind}" frames`)); return; }
    this.sequenced(f, peer);
  }

  /**
   * A frame of the request sequence from `from` ('' = the host): run it if it is next, hold it if it is
   * early and another channel may still bring the ones before it, refuse it otherwise.
   */
  private sequenced(f: Sequenced, from: string): void {
    const host = this.channel;
    if (!host) return;
    const expected = f.kind === 'checkpoint' ? '' : this.prev;
    if (from !== expected) {
      const who = (id: string) => (id ? `device "${id}"` : 'the host');
      this.reject(host, f.seq, new ProtocolError(`"${f.kind}" seq ${f.seq} came from ${who(from)}; in this deal it comes from ${who(expected)}`));
      return;
    }
    // seq 0 again: that seq numbers a request of another deal, not of this one.
    if (f.epoch !== this.epoch) { this.reject(host, 0, new OutOfOrderError(`"${f.kind}" seq ${f.seq} is for deal ${f.epoch}; this device is on deal ${this.epoch}`)); return; }
    if (f.seq > this.lastSeq + 1 && this.prev !== '') {
      const size = f.kind === 'forward' ? f.hidden.byteLength : 0;
      if (this.held.has(f.seq)) { this.reject(host, f.seq, new OutOfOrderError(`"${f.kind}" seq ${f.seq} came twice`)); return; }
      if (this.held.size >= MAX_HELD_FRAMES || this.heldBytes + size > MAX_HELD_BYTES) {
        this.reject(host, f.seq, new OutOfOrderError(`"${f.kind}" seq ${f.seq}: already holding ${this.held.size} early frames (${this.heldBytes} bytes) waiting for seq ${this.lastSeq + 1}`));
        return;
      }
      this.held.set(f.seq, f);
      this.heldBytes += size;
      return;
    }
    if (f.seq !== this.lastSeq + 1) { this.reject(host, f.seq, new OutOfOrderError(`"${f.kind}" seq ${f.seq} does not follow seq ${this.lastSeq}`)); return; }
    for (let g: Sequenced | undefined = f; g; g = this.takeHeld(this.lastSeq + 1)) this.run(host, g);
  }

  private takeHeld(seq: number): Sequenced | undefined {
    const f = this.held.get(seq);
    if (!f) return undefined;
    this.held.delete(seq);
    if (f.kind === 'forward') this.heldBytes -= f.hidden.byteLength;
    return f;
  }

  private clearHeld(): void { this.held.clear(); this.heldBytes = 0; }

  private run(ch: FrameChannel, f: Sequenced): void {
    this.lastSeq = f.seq;
    // A job still queued when a new deal arrives is dropped: the assign has changed this device's
    // neighbours already (at once, so the chain is wired while the layers load), and the host ignores
    // answers of a superseded deal anyway; run against the new neighbours it would fail, or reach them.
    const current = () => f.epoch === this.epoch;
    if (f.kind === 'skip') { this.enqueue(ch, f.seq, () => (current() ? this.passSkip(f.seq) : Promise.resolve())); return; }
    this.enqueue(ch, f.seq, () => (!current() ? Promise.resolve() : f.kind === 'forward' ? this.forward(ch, f) : this.checkpoint(ch, f)));
  }

  /** Tell the next guest that `seq` will not come (best effort: a closed channel is reported on its own). */
  private async passSkip(seq: number): Promise<void> {
    if (!this.next) return;
    this.links.next(this.next)?.trySend({ kind: 'skip', epoch: this.epoch, seq });
  }

  private onFrame(ch: FrameChannel, f: Frame): void {
    switch (f.kind) {
      case 'heartbeat':
        if (!f.reply) ch.trySend({ kind: 'heartbeat', reply: true, sentAt: f.sentAt });
        return;
      case 'data':
        if (!this.peerSource?.answer(f)) this.reject(ch, 0, new OutOfOrderError(`"data" frame ${f.id} answers no read in flight`));
        return;
      case 'bye':
        this.channel = null;
        clearInterval(this.watchdog);
        ch.close();
        this.loadAbort?.abort();
        this.emit({ type: 'removed', reason: f.reason });
        return;
      case 'assign': {
        if (f.prev === this.opts.deviceId || f.next === this.opts.deviceId) { this.reject(ch, 0, new ProtocolError(`"assign" deal ${f.epoch} makes this device its own neighbour`)); return; }
        // A new deal supersedes a load in progress; the queue then runs it after what is running now.
        this.loadAbort?.abort();
        this.epoch = f.epoch;
        this.lastSeq = 0;
        this.clearHeld();
        this.prev = f.prev;
        this.next = f.next;
        // Wire the chain while the layers load: the channel to the next device must be open before `ready`.
        this.links.keepOnly(f.next);
        const wired = f.next ? this.links.connect(f.next) : null;
        this.enqueue(ch, 0, () => this.assign(ch, f, wired).catch((e: Error) => {
          if (this.epoch !== f.epoch) return;   // superseded: the new deal is what counts
          this.emit({ type: 'frame-error', error: e });
          ch.trySend({ kind: 'error', seq: 0, code: LOAD_FAILED_CODE, message: `${e.name}: ${e.message}` });
        }));
        return;
      }
      case 'forward': case 'checkpoint':
        this.sequenced(f, '');
        return;
      case 'error':
        this.emit({ type: 'error', error: new ProtocolError(`the host reported: ${f.message}`) });
        return;
      default:
        this.reject(ch, 0, new ProtocolError(`a guest does not accept "${f.kind}" frames`));
    }
  }

  private enqueue(ch: FrameChannel, seq: number, job: () => Promise<void>): void {
    this.queue = this.queue.then(job).catch((e: Error) => this.reject(ch, seq, e));
  }

  /** The channel to the next device is open, or the host is told it could not be (it then re-deals without this hop). */
  private async wire(ch: FrameChannel, f: FrameOf<'assign'>, wired: Promise<FrameChannel> | null): Promise<void> {
    if (!wired) return;
    try { await wired; } catch (e) {
      if (this.epoch === f.epoch) await ch.send({ kind: 'link-lost', epoch: f.epoch, peer: f.next, reason: (e as Error).message });
    }
  }

  private async assign(ch: FrameChannel, f: FrameOf<'assign'>, wired: Promise<FrameChannel> | null): Promise<void> {
    const t0 = performance.now();
    if (this.epoch !== f.epoch) return; // superseded while queued
    this.emit({ type: 'assigned', epoch: f.epoch, range: f.range, ctx: f.ctx });
    this.dealWork = { rows: 0, seconds: 0 };
    if (this.engine && this.range[0] === f.range[0] && this.range[1] === f.range[1] && this.engineModel === f.modelKey && this.engineCtx === f.ctx && this.engineStep === f.step) {
      // Same layers, context and step as before: keep the engine, start from an empty cache.
      await this.engine.truncate(0);
      await this.wire(ch, f, wired);
      if (this.epoch !== f.epoch) return;
      await ch.send({ kind: 'ready', epoch: f.epoch, networkBytes: 0, cacheBytes: 0, ms: performance.now() - t0 });
      this.emit({ type: 'ready', epoch: f.epoch, range: f.range, networkBytes: 0, cacheBytes: 0 });
      return;
    }
    this.range = f.range;
    await this.engine?.dispose();
    this.engine = null;
    const abort = new AbortController();
    this.loadAbort = abort;
    let counts = { networkBytes: 0, cacheBytes: 0 };
    if (f.range[1] > f.range[0]) {
      let inner: ModelSource;
      if (f.model === '') {
        this.peerSource?.failAll('superseded by a new deal');
        this.peerSource = new PeerModelSource(f.modelKey, (r) => ch.send(r), f.modelFile);
        inner = this.peerSource;
      } else {
        inner = await this.opts.resolveSource(f.model);
      }
      const source = new CachingSource(inner, this.opts.store, f.modelKey);
      counts = source.counts;
      let lastSent = 0;
      const request = {
        layers: f.range, signal: abort.signal,
        onProgress: (p: LoadProgress) => {
          this.emit({ type: 'progress', epoch: f.epoch, bytesDone: p.bytesDone, bytesTotal: p.bytesTotal });
          const now = performance.now();
          if (now - lastSent < 100 && p.bytesDone < p.bytesTotal) return; // at most ~10 progress frames a second
          lastSent = now;
          ch.trySend({ kind: 'progress', epoch: f.epoch, ...p, networkBytes: counts.networkBytes, cacheBytes: counts.cacheBytes });
        },
      };
      const kv = f.kv ? { kv: f.kv } : {};
      const step = f.step !== undefined ? { step: f.step } : {};   // the step its scratch was dealt at (the wire bounds it)
      // this device's previous share is gone already (above): nothing to free before the new engine
      const beforeCreate = async () => !abort.signal.aborted && this.epoch === f.epoch;
      const share = await shareLoaderOf(this.opts)({ model: f.model, modelKey: f.modelKey, source, request, ctx: f.ctx, ...kv, ...step, beforeCreate });
      if (!share) return;
      if (abort.signal.aborted || this.epoch !== f.epoch) { await share.engine.dispose(); return; }
      counts = { networkBytes: counts.networkBytes + share.counts.networkBytes, cacheBytes: counts.cacheBytes + share.counts.cacheBytes };
      this.engine = share.engine;
      this.hiddenSize = share.hiddenSize;
      this.engineModel = f.modelKey;
      this.engineCtx = f.ctx;
      this.engineStep = f.step;
    }
    await this.wire(ch, f, wired);
    if (this.epoch !== f.epoch) return;
    this.stats.networkBytes += counts.networkBytes;
    this.stats.cacheBytes += counts.cacheBytes;
    const ms = performance.now() - t0;
    await ch.send({ kind: 'ready', epoch: f.epoch, networkBytes: counts.networkBytes, cacheBytes: counts.cacheBytes, ms });
    this.emit({ type: 'ready', epoch: f.epoch, range: f.range, ...counts });
  }

  /**
   * Run this device's part of `range` (the range of the whole chain's request) and pass the rows on: to
   * the next guest as a `forward` (a direct hop), or to the host as a `result` when this device is last.
   * A failure is the host's to hear (the caller's catch); the next guest is told to skip the seq.
   */
  private async forward(ch: FrameChannel, f: FrameOf<'forward'>): Promise<void> {
    try {
      const t0 = performance.now();
      const hidden = await this.runShare(f);
      if (f.epoch !== this.epoch) return;   // a new deal arrived while it ran (see run)
      const ms = performance.now() - t0;
      const work = [...(f.work ?? []), ms];
      this.stats.forwards++;
      this.dealWork.rows += f.count; this.dealWork.seconds += ms / 1000;
      if (!this.next) {
        await ch.send({ kind: 'result', epoch: f.epoch, seq: f.seq, kvLength: this.engine!.kvLength(), hidden, work });
        this.stats.resultsOut++;
        return;
      }
      const out = this.links.next(this.next);
      if (!out) throw new HopError(`"forward" seq ${f.seq}: the direct channel to the next device "${this.next}" is closed`);
      if (work.length >= MAX_CHAIN) throw new ProtocolError(`"forward" seq ${f.seq}: a chain of more than ${MAX_CHAIN} devices`);
      try { await out.send({ ...f, hidden, work }); } catch (e) { throw new HopError(`"forward" seq ${f.seq}: could not pass it to the next device "${this.next}": ${(e as Error).message}`); }
      this.stats.hopsOut++;
    } catch (e) {
      if (f.epoch !== this.epoch) return;   // superseded while it ran: nobody waits for it (see run)
      if (e instanceof HopError) {
        // The host hears it as a lost hop: it first finds out whether the next device is gone (then the
        // request ends naming that device) or only the channel broke.
        this.emit({ type: 'frame-error', error: e });
        this.channel?.trySend({ kind: 'link-lost', epoch: f.epoch, peer: this.next, reason: e.message });
        return;
      }
      await this.passSkip(f.seq);
      throw e;
    }
  }

  private async runShare(f: FrameOf<'forward'>): Promise<Float32Array> {
    const engine = this.engine;
    if (!engine) throw new OutOfOrderError(`"forward" seq ${f.seq}: this device holds no layers in deal ${this.epoch}`);
    const sub: [number, number] = [Math.max(f.range[0], this.range[0]), Math.min(f.range[1], this.range[1])];
    // First in the chain: the request starts in this device's layers; last: it ends in them; every
    // device runs some of it (the host never sends a range a device of the chain would skip).
    const upstream = f.work?.length ?? 0;
    if (upstream !== 0 && this.prev === '') throw new ProtocolError(`"forward" seq ${f.seq}: the first device of a chain gets no upstream work list (got ${upstream})`);
    const fits = sub[0] < sub[1] && (this.prev !== '' || f.range[0] >= this.range[0]) && (this.next !== '' || f.range[1] <= this.range[1]);
    if (!fits) throw new ProtocolError(`"forward" seq ${f.seq}: layers [${f.range}] are not a request for this device's [${this.range}] (${this.prev ? 'after another device' : 'first'}, ${this.next ? 'before another device' : 'last'})`);
    if (f.position !== engine.kvLength()) throw new OutOfOrderError(`"forward" seq ${f.seq}: position ${f.position} does not continue the cache of ${engine.kvLength()}`);
    if (f.hidden.length !== f.count * this.hiddenSize) throw new ProtocolError(`"forward" seq ${f.seq}: hidden has ${f.hidden.length} values, not ${f.count} rows of ${this.hiddenSize}`);
    requireFinite(f.hidden, this.prev ? `device "${this.prev}"` : 'the host', `"forward" seq ${f.seq}`); // before any of it reaches the cache
    return engine.runLayers(sub, f.position, f.hidden);
  }

  /**
   * pin: snapshot the recurrent state at `position`, which must be the cache length; restore / truncate:
   * go back to `position` (the engine restores recurrent layers from their snapshot there, or refuses
   * with SnapshotMissingError); release: forget the snapshot at `position`. The engine bounds how many
   * snapshots a host can make it keep (SnapshotLimitError).
   */
  private async checkpoint(ch: FrameChannel, f: FrameOf<'checkpoint'>): Promise<void> {
    const engine = this.engine;
    const kv = engine?.kvLength() ?? 0;
    if (f.op === 'pin') {
      if (f.position !== kv) throw new OutOfOrderError(`"checkpoint" seq ${f.seq}: cannot pin at ${f.position}, the cache holds ${kv}`);
      await engine?.snapshot(f.position);
    } else if (f.op === 'release') {
      await engine?.releaseSnapshot(f.position);
    } else {
      if (f.position > kv) throw new OutOfOrderError(`"checkpoint" seq ${f.seq}: cannot ${f.op} to ${f.position} past the cache of ${kv}`);
      await engine?.truncate(f.position);
    }
    await ch.send({ kind: 'ack', epoch: f.epoch, seq: f.seq, kvLength: engine?.kvLength() ?? 0 });
  }
}
