// The host's stand-in for a chain of guests holding consecutive layers: ONE LayerEngine over the union
// of their ranges, so RoomEngine treats the chain as one stage (of `depth` devices). runLayers sends one
// `forward` to the first guest; each guest runs its part and hands the rows straight to the next (a
// direct hop), and the last returns a `result`: N + 1 hops per token for N guests instead of 2N through
// the host. A chain of one guest is the plain host → guest → host exchange.
//
// Every request has one sequence number for the whole chain, and every guest sees every number: a
// forward travels through all of them, a checkpoint (truncate; for a chain holding Gated DeltaNet layers
// pin, restore and release, which a dense guest takes as no-ops or a truncation) goes from the host to
// each guest directly and each acknowledges it. So a guest can put the frames it gets from the host and from its
// previous neighbour back in one order. Several requests may be in flight (pipelined prefill, a
// speculative batch of k + 1 rows is just a forward of k + 1 rows).
//
// The guests are not trusted: answers come only from whom they are expected from (a result from the
// last guest, an ack from each guest once), every request has a deadline, and activations must be
// finite numbers; a failure names the device (or, for a chain that stalls, the chain).
import { firstNonFinite, NON_FINITE_CODE } from './finite-check.ts';
import type { LayerEngine, LayerRange, RowCandidates } from '../model/engine-types.ts';
import { EngineUsageError, PositionError } from '../model/engine-errors.ts';
import { ProtocolError, RemoteDeviceError } from './errors.ts';
import type { CheckpointOp, Frame, FrameOf } from './protocol.ts';

export interface RemoteDevice { id: string; name: string }

/** One guest of a chain: who it is, its layers, and how the host sends it a frame. */
export interface ChainMember {
  device: RemoteDevice;
  range: LayerRange;
  send: (f: Frame) => Promise<void>;
  /** Its layers include Gated DeltaNet layers (their state needs snapshots to go back). */
  recurrent?: boolean;
}

/**
 * The most hidden-state bytes one `forward` carries (README, "The prefill step"): a 512-token step's rows
 * at H 8,192 (16 MiB), well below the wire's 64 MiB frame limit. runLayers on more rows sends several
 * forwards, one after another, so neither a big step nor a long prefill chunk makes a message unbounded.
 */
export const MAX_FORWARD_BYTES = 16 * 2 ** 20;

/** Rows of [H] f32 one forward carries at most (at least one). */
export function forwardRows(hiddenSize: number, maxBytes = MAX_FORWARD_BYTES): number {
  return Math.max(1, Math.floor(maxBytes / (4 * hiddenSize)));
}

export interface ChainEngineOptions {
  /** The most hidden-state bytes a forward carries (default MAX_FORWARD_BYTES; tests make it small). */
  maxForwardBytes?: number;
  /** How long a request of `count` rows (0 for a checkpoint) may take through `depth` devices. Default: no limit. */
  timeoutMs?: (count: number, depth: number) => number;
  /**
   * The chain broke its side of the protocol (no answer in time, non-finite activations). `culprit` is the
   * device at fault when it is known (always, in a chain of one), null when only the chain is.
   */
  onFault?: (why: string, culprit: RemoteDevice | null) => void;
}

type Pending = { timer?: ReturnType<typeof setTimeout> } & (
  | { kind: 'forward'; count: number; position: number; resolve: (h: Float32Array) => void; reject: (e: Error) => void }
  | { kind: 'checkpoint'; op: CheckpointOp; kvAfter: number; waiting: Set<string>; resolve: () => void; reject: (e: Error) => void });

/** Frames to the host from a chain member that the chain answers for. */
export type ChainAnswer = FrameOf<'result'> | FrameOf<'ack'> | FrameOf<'error'>;

export class ChainEngine implements LayerEngine {
  readonly hasEmbedding = false;
  readonly hasHead = false;
  readonly range: LayerRange;
  /** Some guest holds Gated DeltaNet layers: going back is a restore of snapshots, which pin takes. */
  readonly recurrent: boolean;
  /** The guests in pipeline order. */
  readonly devices: readonly RemoteDevice[];
  private seq = 0;
  private kv = 0;                       // after every request sent so far (confirmed by each answer)
  private readonly pending = new Map<number, Pending>();
  private failure: Error | null = null;
  /** Per guest: rows run and seconds its layers took (its own report, the `work` of each result). */
  private readonly work = new Map<string, { tokens: number; seconds: number }>();
  /** Frames the host sent to the chain, by kind (the hop count of a forward is depth + 1: the guests pass it on). */
  readonly sent = { forward: 0, checkpoint: 0 };

  constructor(
    readonly members: readonly ChainMember[],
    readonly epoch: number,
    readonly hiddenSize: number,
    private readonly options: ChainEngineOptions = {},
  ) {
    if (members.length === 0) throw new EngineUsageError('a chain needs at least one device');
    for (let i = 1; i < members.length; i++) {
      if (members[i]!.range[0] !== members[i - 1]!.range[1]) throw new EngineUsageError(`chain: device "${members[i]!.device.name}" does not continue the layers of "${members[i - 1]!.device.name}"`);
    }
    for (const m of members) if (m.range[1] <= m.range[0]) throw new EngineUsageError(`chain: device "${m.device.name}" holds no layers`);
    this.range = [members[0]!.range[0], members.at(-1)!.range[1]];
    this.devices = members.map((m) => m.device);
    this.recurrent = members.some((m) => m.recurrent === true);
  }

  /** Devices the rows pass through in turn. */
  get depth(): number { return this.members.length; }
  /** "A" → "B" → "C": how errors name the chain. */
  get label(): string { return this.devices.map((d) => `"${d.name}"`).join(' → '); }
  private get who(): string { return this.depth === 1 ? `device ${this.label}` : `chain ${this.label}`; }

  kvLength(): number { return this.failure ? 0 : this.kv; }

  /**
   * Rows per second guest `deviceId` ran its layers at, by its own account (0 before any): the host sees
   * only the whole chain's time, not the hops between two guests.
   */
  speedOf(deviceId: string): number {
    const w = this.work.get(deviceId);
    return w && w.seconds > 0 ? w.tokens / w.seconds : 0;
  }
  get inFlight(): number { return this.pending.size; }
  get failed(): Error | null { return this.failure; }

  /** Registers a request and starts its deadline. */
  private track(seq: number, p: Pending, count: number, what: string): void {
    const ms = this.options.timeoutMs?.(count, this.depth);
    if (ms !== undefined && Number.isFinite(ms)) {
      p.timer = setTimeout(() => {
        if (this.pending.get(seq) !== p) return;
        this.fault(`${this.depth === 1 ? 'it' : 'the chain'} did not answer "${what}" seq ${seq} in ${Math.round(ms)} ms`, seq, this.depth === 1 ? this.devices[0]! : null);
      }, ms);
    }
    this.pending.set(seq, p);
  }

  /** Tell the host (which drops the device, or re-wires the chain); without a host, fail `seq` alone. */
  private fault(why: string, seq: number, culprit: RemoteDevice | null): void {
    this.options.onFault?.(why, culprit);
    this.settleError(seq, new ProtocolError(`${culprit ? `device "${culprit.name}"` : this.who}: ${why}`));
  }

  /**
   * Rows [n, H] through layers `range` of the chain, at positions [start, start + n). Every device of the
   * chain must run some of `range` (a guest it skipped would fall behind the others' caches).
   */
  runLayers(range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array> {
    if (this.failure) return Promise.reject(this.failure);
    const [s, t] = range;
    const first = this.members[0]!, last = this.members.at(-1)!;
    if (s < first.range[0] || s >= first.range[1] || t <= last.range[0] || t > last.range[1]) {
      return Promise.reject(new EngineUsageError(`${this.who} holds layers [${this.range}] and runs some on every device: [${range}] is not such a range`));
    }
    const n = hidden.length / this.hiddenSize;
    if (!(Number.isInteger(n) && n > 0)) {
      return Promise.reject(new EngineUsageError(`runLayers on ${this.who}: hidden has ${hidden.length} values, not one or more rows of ${this.hiddenSize}`));
    }
    if (start !== this.kv) return Promise.reject(new PositionError(`${this.who}: position ${start} does not continue its cache of ${this.kv}`));
    const H = this.hiddenSize;
    const rows = forwardRows(H, this.options.maxForwardBytes);
    if (n <= rows) return this.forward(range, hidden, n);
    // More rows than a forward carries: consecutive forwards, all sent at once (each guest runs them in order).
    const parts: Promise<Float32Array>[] = [];
    for (let c = 0; c < n; c += rows) parts.push(this.forward(range, hidden.subarray(c * H, Math.min(n, c + rows) * H), Math.min(rows, n - c)));
    return Promise.all(parts).then((outs) => {
      const out = new Float32Array(n * H);
      outs.forEach((o, i) => out.set(o, i * rows * H));
      return out;
    });
  }

  /** One forward of n rows at the chain's cache length. */
  private forward(range: LayerRange, hidden: Float32Array, n: number): Promise<Float32Array> {
    const first = this.members[0]!;
    const seq = ++this.seq;
    const position = this.kv;
    this.kv += n;
    this.sent.forward++;
    return new Promise<Float32Array>((resolve, reject) => {
      this.track(seq, { kind: 'forward', count: n, position, resolve, reject }, n, 'forward');
      first.send({ kind: 'forward', epoch: this.epoch, seq, range, position, count: n, hidden }).catch((e: Error) => this.settleError(seq, e));
    });
  }

  /**
   * Go back to `length` on every device: a truncation for dense layers (counted as done at once: the
   * next request is ordered behind it on every guest), a restore of the snapshots there when the chain
   * holds recurrent layers (counted once every guest has gone back: one may refuse, no snapshot there).
   */
  async truncate(length: number): Promise<void> {
    if (this.failure) return; // the chain is gone: nothing of ours is left to cut
    if (length > this.kv) throw new PositionError(`${this.who}: cannot restore to ${length} past its cache of ${this.kv}`);
    if (!this.recurrent) this.kv = length;
    await this.checkpoint(this.recurrent ? 'restore' : 'truncate', length, length);
    if (this.recurrent) this.kv = length; // a dense chain's count moved at once; requests sent since may have moved it on
  }

  /** Pin every guest's recurrent state at `position` (the cache length). A dense chain keeps nothing: no frame. */
  async snapshot(position: number): Promise<void> {
    if (!this.recurrent) return;
    if (this.failure) throw this.failure;
    if (position !== this.kv) throw new PositionError(`${this.who}: a snapshot at ${position} is not its cache length ${this.kv}`);
    await this.checkpoint('pin', position, this.kv);
  }

  async releaseSnapshot(position: number): Promise<void> {
    if (!this.recurrent || this.failure) return;
    await this.checkpoint('release', position, this.kv);
  }

  /** One checkpoint op to every guest (each acknowledges it, reporting `kvAfter` as its cache length). */
  private checkpoint(op: CheckpointOp, position: number, kvAfter: number): Promise<void> {
    const seq = ++this.seq;
    this.sent.checkpoint += this.depth;
    return new Promise<void>((resolve, reject) => {
      const waiting = new Set(this.devices.map((d) => d.id));
      this.track(seq, { kind: 'checkpoint', op, kvAfter, waiting, resolve, reject }, 0, 'checkpoint');
      for (const m of this.members) {
        m.send({ kind: 'checkpoint', epoch: this.epoch, seq, op, position }).catch((e: Error) => this.settleError(seq, e));
      }
    });
  }

  /** Route a result/ack/error frame of this epoch from device `fromId`. Returns a ProtocolError when the answer is wrong. */
  handle(fromId: string, f: ChainAnswer): Error | null {
    const member = this.members.find((m) => m.device.id === fromId);
    if (!member) return new ProtocolError(`"${f.kind}" frame from device "${fromId}", which is not in ${this.who}`);
    const name = member.device.name;
    const p = this.pending.get(f.seq);
    if (f.kind === 'error') {
      if (!p) return new ProtocolError(`device "${name}" reported an error: ${f.message}`);
      // A device of the chain refused non-finite rows from its previous neighbour before running them: that neighbour is at fault.
      const i = this.members.indexOf(member);
      if (f.code === NON_FINITE_CODE && i > 0) { this.fault(`it sent non-finite activations to "${name}", which refused them: ${f.message}`, f.seq, this.members[i - 1]!.device); return null; }
      this.settleError(f.seq, new RemoteDeviceError(name, f.code, f.message));
      return null;
    }
    if (!p) return new ProtocolError(`"${f.kind}" frame for seq ${f.seq}, which device "${name}" was not asked for`);
    if (p.kind === 'forward' && f.kind === 'result') {
      if (member !== this.members.at(-1)) return new ProtocolError(`device "${name}" sent a "result" for seq ${f.seq}, but the last device of ${this.who} answers forwards`);
      const bad = firstNonFinite(f.hidden);
      if (bad >= 0) {
        // NaN/Infinity would only surface later as a sampling error naming no one: name the chain now
        // (in a chain the last device only passes on what it computed from its neighbour's rows).
        this.fault(`it sent ${f.hidden[bad]} in its activations (value ${bad} of ${f.hidden.length}, "forward" seq ${f.seq})`, f.seq, this.depth === 1 ? member.device : null);
        return null;
      }
      this.settle(f.seq, p);
      const work = f.work ?? [];
      if (f.hidden.length !== p.count * this.hiddenSize || f.kvLength !== p.position + p.count || (work.length !== 0 && work.length !== this.depth)) {
        const e = new ProtocolError(`device "${name}" answered seq ${f.seq} with ${f.hidden.length} values, cache ${f.kvLength} and ${work.length} work entries, expected ${p.count * this.hiddenSize}, ${p.position + p.count} and ${this.depth}`);
        p.reject(e);
        return e;
      }
      work.forEach((ms, i) => {
        const w = this.work.get(this.devices[i]!.id) ?? { tokens: 0, seconds: 0 };
        w.tokens += p.count;
        w.seconds += ms / 1000;
        this.work.set(this.devices[i]!.id, w);
      });
      p.resolve(f.hidden);
      return null;
    }
    if (p.kind === 'checkpoint' && f.kind === 'ack') {
      if (!p.waiting.delete(fromId)) return new ProtocolError(`device "${name}" acknowledged checkpoint seq ${f.seq} twice`);
      if (f.kvLength !== p.kvAfter) {
        this.settle(f.seq, p);
        const e = new ProtocolError(`device "${name}" acknowledged ${p.op} seq ${f.seq} with cache ${f.kvLength}, expected ${p.kvAfter}`);
        p.reject(e);
        return e;
      }
      if (p.waiting.size === 0) { this.settle(f.seq, p); p.resolve(); }
      return null;
    }
    this.settle(f.seq, p);
    const e = new ProtocolError(`device "${name}" answered seq ${f.seq} (${p.kind}) with "${f.kind}"`);
    p.reject(e);
    return e;
  }

  /** A device of the chain is gone or broken: every request in flight and every later one fails with `e`. */
  fail(e: Error): void {
    this.failure ??= e;
    for (const [seq, p] of this.pending) { this.settle(seq, p); p.reject(e); }
  }

  private settle(seq: number, p: Pending): void {
    this.pending.delete(seq);
    clearTimeout(p.timer);
  }

  private settleError(seq: number, e: Error): void {
    const p = this.pending.get(seq);
    if (!p) return;
    this.settle(seq, p);
    p.reject(e);
  }

  embed(): Promise<Float32Array> { return Promise.reject(new EngineUsageError(`${this.who} holds no embedding`)); }
  decode(): Promise<RowCandidates[]> { return Promise.reject(new EngineUsageError(`${this.who} holds no head`)); }
  async dispose(): Promise<void> { this.fail(new EngineUsageError(`${this.who}: engine of epoch ${this.epoch} was disposed`)); }
}

