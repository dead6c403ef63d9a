// A guest device: says hello with its capabilities, loads the layers the host assigns (from the model URL
// or from the host over the channel, through its weight cache), runs `forward` and `checkpoint` frames on
// its LayerEngine strictly in sequence order, answers heartbeats, and says goodbye on leaving. It only
// ever exchanges protocol frames: no prompt, file or token reaches it. Transport-agnostic: attach() takes
// any MessageLink (PeerJS in the browser, memory in tests), and a reconnect is just another attach().
import type { LayerEngine, LayerRange } from '../model/engine-types.ts';
import type { ModelSource, ModelWeights, WeightRequest } from '../model/types.ts';
import { OutOfOrderError, ProtocolError } from './errors.ts';
import { PeerModelSource } from './peer-source.ts';
import { PROTOCOL_VERSION, type DeviceCaps, type Frame, type FrameOf } from './protocol.ts';
import { CachingSource, type ByteStore } from './weight-cache.ts';
import { FrameChannel, type MessageLink } from './wire.ts';

export type LoadWeightsFn = (source: ModelSource, request: WeightRequest) => Promise<ModelWeights>;
/** Makes the engine for a device's share (ReferenceEngine, or the WebGPU engine). */
export type EngineFactory = (weights: ModelWeights, opts: { ctx: number; range: LayerRange }) => Promise<LayerEngine>;

export interface GuestOptions {
  roomId: string;
  deviceId: string;
  name: string;
  caps: DeviceCaps;
  loadWeights: LoadWeightsFn;
  createEngine: EngineFactory;
  store: ByteStore;
  /** Model URL from an assign → ModelSource (resolveModelSource in the app). */
  resolveSource: (model: string) => Promise<ModelSource>;
  /** No frame from the host for this long: a `host-silent` event (default 4 s). */
  hostTimeoutMs?: number;
}

export type GuestEvent =
  | { type: 'connected' }
  | { type: 'assigned'; epoch: number; range: LayerRange }
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
  private hiddenSize = 0;                  // H of the loaded model: a forward frame carries [count, H]
  private epoch = -1;
  private range: LayerRange = [0, 0];
  private lastSeq = 0;
  private queue: Promise<void> = Promise.resolve();
  private loadAbort: AbortController | null = null;
  private lastHeard = 0;
  private watchdog: ReturnType<typeof setInterval> | undefined;
  private readonly listeners = new Set<(e: GuestEvent) => void>();
  readonly stats = { framesIn: 0, badFrames: 0, forwards: 0, networkBytes: 0, cacheBytes: 0 };

  constructor(readonly opts: GuestOptions) {}

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
    this.loadAbort?.abort();
    await this.engine?.dispose();
    this.engine = null;
  }

  private hostGone(why: string): void {
    const ch = this.channel;
    this.channel = null;
    clearInterval(this.watchdog);
    ch?.close();
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
      case 'assign':
        // A new deal supersedes a load in progress; the queue then runs it after what is running now.
        this.loadAbort?.abort();
        this.epoch = f.epoch;
        this.lastSeq = 0;
        this.enqueue(ch, 0, () => this.assign(ch, f));
        return;
      case 'forward': case 'checkpoint': {
        const err = this.checkOrder(f);
        if (err) { this.reject(ch, f.seq, err); return; }
        this.lastSeq = f.seq;
        this.enqueue(ch, f.seq, () => (f.kind === 'forward' ? this.forward(ch, f) : this.checkpoint(ch, f)));
        return;
      }
      case 'error':
        this.emit({ type: 'error', error: new ProtocolError(`the host reported: ${f.message}`) });
        return;
      default:
        this.reject(ch, 0, new ProtocolError(`a guest does not accept "${f.kind}" frames`));
    }
  }

  private checkOrder(f: FrameOf<'forward'> | FrameOf<'checkpoint'>): Error | null {
    if (f.epoch !== this.epoch) return new OutOfOrderError(`"${f.kind}" seq ${f.seq} is for deal ${f.epoch}; this device is on deal ${this.epoch}`);
    if (f.seq !== this.lastSeq + 1) return new OutOfOrderError(`"${f.kind}" seq ${f.seq} does not follow seq ${this.lastSeq}`);
    return null;
  }

  private enqueue(ch: FrameChannel, seq: number, job: () => Promise<void>): void {
    this.queue = this.queue.then(job).catch((e: Error) => this.reject(ch, seq, e));
  }

  private async assign(ch: FrameChannel, f: FrameOf<'assign'>): Promise<void> {
    const t0 = performance.now();
    if (this.epoch !== f.epoch) return; // superseded while queued
    this.emit({ type: 'assigned', epoch: f.epoch, range: f.range });
    if (this.engine && this.range[0] === f.range[0] && this.range[1] === f.range[1] && this.engineModel === f.modelKey) {
      // Same layers as before: keep the engine, start from an empty cache.
      await this.engine.truncate(0);
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
      const weights = await this.opts.loadWeights(source, {
        layers: f.range, signal: abort.signal,
        onProgress: (p) => {
          this.emit({ type: 'progress', epoch: f.epoch, bytesDone: p.bytesDone, bytesTotal: p.bytesTotal });
          const now = performance.now();
          if (now - lastSent < 100 && p.bytesDone < p.bytesTotal) return; // at most ~10 progress frames a second
          lastSent = now;
          ch.trySend({ kind: 'progress', epoch: f.epoch, ...p, networkBytes: counts.networkBytes, cacheBytes: counts.cacheBytes });
        },
      });
      if (abort.signal.aborted || this.epoch !== f.epoch) return;
      this.engine = await this.opts.createEngine(weights, { ctx: f.ctx, range: f.range });
      this.engineModel = f.modelKey;
      this.hiddenSize = weights.config.hiddenSize;
    }
    if (this.epoch !== f.epoch) return;
    this.stats.networkBytes += counts.networkBytes;
    this.stats.cacheBytes += counts.cacheBytes;
    const ms = performance.now() - t0;
    await ch.send({ kind: 'ready', epoch: f.epoch, networkBytes: counts.networkBytes, cacheBytes: counts.cacheBytes, ms });
    this.emit({ type: 'ready', epoch: f.epoch, range: f.range, ...counts });
  }

  private async forward(ch: FrameChannel, f: FrameOf<'forward'>): Promise<void> {
    const engine = this.engine;
    if (!engine) throw new OutOfOrderError(`"forward" seq ${f.seq}: this device holds no layers in deal ${this.epoch}`);
    if (f.range[0] < this.range[0] || f.range[1] > this.range[1]) throw new ProtocolError(`"forward" seq ${f.seq}: layers [${f.range}] are not in this device's [${this.range}]`);
    if (f.position !== engine.kvLength()) throw new OutOfOrderError(`"forward" seq ${f.seq}: position ${f.position} does not continue the cache of ${engine.kvLength()}`);
    if (f.hidden.length !== f.count * this.hiddenSize) throw new ProtocolError(`"forward" seq ${f.seq}: hidden has ${f.hidden.length} values, not ${f.count} rows of ${this.hiddenSize}`);
    const hidden = await engine.runLayers(f.range, f.position, f.hidden);
    this.stats.forwards++;
    await ch.send({ kind: 'result', epoch: f.epoch, seq: f.seq, kvLength: engine.kvLength(), hidden });
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
