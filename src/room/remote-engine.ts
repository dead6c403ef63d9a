// The host's stand-in for a guest's layers: a LayerEngine whose runLayers/truncate/snapshot become
// `forward` / `checkpoint` frames and whose answers are `result` / `ack` frames matched by sequence
// number. Several requests may be in flight (pipelined prefill); the guest answers them in order. One
// instance per (device, epoch): a re-deal makes new ones. A guest holding Gated DeltaNet layers
// (`recurrent`) is sent pin / restore / release ops; a dense one only truncate ops.
// The guest is not trusted: every request has a deadline, and returned activations must be finite
// numbers; either failure is reported to the host (onFault), which drops the device, naming it.
import type { LayerEngine, LayerRange, SamplingOptions } from '../model/engine-types.ts';
import { EngineUsageError, PositionError } from '../model/engine-errors.ts';
import { ProtocolError, RemoteDeviceError } from './errors.ts';
import type { CheckpointOp, Frame, FrameOf } from './protocol.ts';

export interface RemoteDevice { id: string; name: string }

export interface RemoteEngineOptions {
  /** How long a request of `count` tokens (0 for a checkpoint) may go unanswered. Default: no limit. */
  timeoutMs?: (count: number) => number;
  /** The device broke its side of the protocol (no answer in time, non-finite activations): says how. */
  onFault?: (why: string) => void;
  /** The guest's layers include Gated DeltaNet layers (their state needs snapshots to go back). */
  recurrent?: boolean;
}

type Pending = { timer?: ReturnType<typeof setTimeout> } & (
  | { kind: 'forward'; count: number; position: number; resolve: (h: Float32Array) => void; reject: (e: Error) => void }
  | { kind: 'checkpoint'; op: CheckpointOp; kvAfter: number; resolve: (kv: number) => void; reject: (e: Error) => void });

export class RemoteLayerEngine implements LayerEngine {
  readonly hasEmbedding = false;
  readonly hasHead = false;
  private seq = 0;
  private kv = 0;                       // after every request sent so far (confirmed by each answer)
  private readonly pending = new Map<number, Pending>();
  private failure: Error | null = null;

  constructor(
    readonly range: LayerRange,
    readonly device: RemoteDevice,
    readonly epoch: number,
    readonly hiddenSize: number,
    private readonly send: (f: Frame) => Promise<void>,
    private readonly options: RemoteEngineOptions = {},
  ) {}

  /** Sent pin / restore / release ops (it holds Gated DeltaNet layers) rather than truncate ops. */
  get recurrent(): boolean { return this.options.recurrent ?? false; }

  /** Registers a request and starts its deadline. */
  private track(seq: number, p: Pending, count: number, what: string): void {
    const ms = this.options.timeoutMs?.(count);
    if (ms !== undefined && Number.isFinite(ms)) {
      p.timer = setTimeout(() => {
        if (this.pending.get(seq) !== p) return;
        this.fault(`it did not answer "${what}" seq ${seq} in ${Math.round(ms)} ms`, seq);
      }, ms);
    }
    this.pending.set(seq, p);
  }

  /** Tell the host (which drops the device and fails every request); without a host, fail `seq` alone. */
  private fault(why: string, seq: number): void {
    this.options.onFault?.(why);
    this.settleError(seq, new ProtocolError(`device "${this.device.name}": ${why}`));
  }

  kvLength(): number { return this.failure ? 0 : this.kv; }
  get inFlight(): number { return this.pending.size; }

  runLayers(range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array> {
    if (this.failure) return Promise.reject(this.failure);
    const [s, t] = range;
    if (s < this.range[0] || t > this.range[1] || s > t) {
      return Promise.reject(new EngineUsageError(`device "${this.device.name}" holds layers [${this.range}], not [${range}]`));
    }
    const n = hidden.length / this.hiddenSize;
    if (!(Number.isInteger(n) && n > 0)) {
      return Promise.reject(new EngineUsageError(`runLayers on "${this.device.name}": hidden has ${hidden.length} values, not one or more rows of ${this.hiddenSize}`));
    }
    if (start !== this.kv) {
      return Promise.reject(new PositionError(`device "${this.device.name}": position ${start} does not continue its cache of ${this.kv}`));
    }
    const seq = ++this.seq;
    const position = this.kv;
    this.kv += n;
    return new Promise<Float32Array>((resolve, reject) => {
      this.track(seq, { kind: 'forward', count: n, position, resolve, reject }, n, 'forward');
      this.send({ kind: 'forward', epoch: this.epoch, seq, range, position, count: n, hidden }).catch((e: Error) => this.settleError(seq, e));
    });
  }

  /** Go back to `length`: a truncation for dense layers, a restore of the snapshot there for recurrent ones. */
  async truncate(length: number): Promise<void> {
    if (this.failure) return; // the device is gone: nothing of ours is left to cut
    if (length > this.kv) throw new PositionError(`device "${this.device.name}": cannot restore to ${length} past its cache of ${this.kv}`);
    const done = this.checkpoint(this.recurrent ? 'restore' : 'truncate', length, length);
    // A dense guest cannot refuse a cut, and runs frames in order: what is sent after it continues from
    // `length` at once (the room orders cuts without waiting for their acks).
    if (!this.recurrent) this.kv = length;
    await done;
    if (this.recurrent) this.kv = length; // a recurrent guest only once it has gone back (it may refuse: no snapshot there)
  }

  /** Pin the guest's recurrent state at `position` (its cache length). Dense guests keep nothing: no frame. */
  async snapshot(position: number): Promise<void> {
    if (!this.recurrent) return;
    if (this.failure) throw this.failure;
    if (position !== this.kv) throw new PositionError(`device "${this.device.name}": a snapshot at ${position} is not its cache length ${this.kv}`);
    await this.checkpoint('pin', position, this.kv);
  }

  async releaseSnapshot(position: number): Promise<void> {
    if (!this.recurrent || this.failure) return;
    await this.checkpoint('release', position, this.kv);
  }

  /** One checkpoint frame; its ack must report `kvAfter` as the guest's cache length. */
  private checkpoint(op: CheckpointOp, position: number, kvAfter: number): Promise<number> {
    const seq = ++this.seq;
    return new Promise<number>((resolve, reject) => {
      this.track(seq, { kind: 'checkpoint', op, kvAfter, resolve, reject }, 0, 'checkpoint');
      this.send({ kind: 'checkpoint', epoch: this.epoch, seq, op, position }).catch((e: Error) => this.settleError(seq, e));
    });
  }

  /** Route a result/ack/error frame of this epoch. Returns a ProtocolError when the answer is wrong. */
  handle(f: FrameOf<'result'> | FrameOf<'ack'> | FrameOf<'error'>): Error | null {
    const p = this.pending.get(f.seq);
    if (f.kind === 'error') {
      if (!p) return new ProtocolError(`device "${this.device.name}" reported an error: ${f.message}`);
      this.settleError(f.seq, new RemoteDeviceError(this.device.name, f.code, f.message));
      return null;
    }
    if (!p) return new ProtocolError(`"${f.kind}" frame for seq ${f.seq}, which device "${this.device.name}" was not asked for`);
    if (p.kind === 'forward' && f.kind === 'result') {
      const bad = firstNonFinite(f.hidden);
      if (bad >= 0) {
        // NaN/Infinity would only surface later as a sampling error naming no one: name the device now.
        this.fault(`it sent ${f.hidden[bad]} in its activations (value ${bad} of ${f.hidden.length}, "forward" seq ${f.seq})`, f.seq);
        return null;
      }
    }
    this.pending.delete(f.seq);
    clearTimeout(p.timer);
    if (p.kind === 'forward' && f.kind === 'result') {
      if (f.hidden.length !== p.count * this.hiddenSize || f.kvLength !== p.position + p.count) {
        const e = new ProtocolError(`device "${this.device.name}" answered seq ${f.seq} with ${f.hidden.length} values and cache ${f.kvLength}, expected ${p.count * this.hiddenSize} and ${p.position + p.count}`);
        p.reject(e);
        return e;
      }
      p.resolve(f.hidden);
      return null;
    }
    if (p.kind === 'checkpoint' && f.kind === 'ack') {
      if (f.kvLength !== p.kvAfter) {
        const e = new ProtocolError(`device "${this.device.name}" acknowledged ${p.op} seq ${f.seq} with cache ${f.kvLength}, expected ${p.kvAfter}`);
        p.reject(e);
        return e;
      }
      p.resolve(f.kvLength);
      return null;
    }
    const e = new ProtocolError(`device "${this.device.name}" answered seq ${f.seq} (${p.kind}) with "${f.kind}"`);
    p.reject(e);
    return e;
  }

  /** The device is gone or broken: every request in flight and every later one fails with `e`. */
  fail(e: Error): void {
    this.failure ??= e;
    for (const [seq, p] of this.pending) { this.pending.delete(seq); clearTimeout(p.timer); p.reject(e); }
  }

  private settleError(seq: number, e: Error): void {
    const p = this.pending.get(seq);
    if (!p) return;
    this.pending.delete(seq);
    clearTimeout(p.timer);
    p.reject(e);
  }

  embed(): Promise<Float32Array> { return Promise.reject(new EngineUsageError(`device "${this.device.name}" holds no embedding`)); }
  logits(): Promise<Float32Array> { return Promise.reject(new EngineUsageError(`device "${this.device.name}" holds no head`)); }
  sample(_h: Float32Array, _o: SamplingOptions): Promise<number> { return this.logits() as unknown as Promise<number>; }
  decodeToken(): Promise<number> { return this.embed() as unknown as Promise<number>; }
  async dispose(): Promise<void> { this.fail(new EngineUsageError(`device "${this.device.name}": engine of epoch ${this.epoch} was disposed`)); }
}

/** Index of the first NaN or ±Infinity, or −1. */
function firstNonFinite(a: Float32Array): number {
  for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i]!)) return i;
  return -1;
}
