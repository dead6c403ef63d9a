// The WebGPU LayerEngine: a device's share of a Qwen3 model (a layer range, plus embedding and head when
// it holds them) with its f16 KV cache. Calls are serialized and each read-back ends one queue submit:
// runLayers submits once per chunk of up to maxBatch tokens (all its layers, ≤ 8 dispatches each), and
// decode feeds one token through the whole model and picks its candidates on the device in one submit.
import { checkDecode, type DecodeRequest, type LayerEngine, type LayerRange, type RowCandidates, type RowSampling } from '../model/engine-types.ts';
import { ContextFullError, EngineUsageError, PositionError } from '../model/engine-errors.ts';
import { pickRow, sortedCandidates } from '../model/sampler.ts';
import { destroyParts, engineStats, type EngineCounters, type EngineParts, type EngineStats } from './engine-parts.ts';
import type { GpuLayer } from './layer-contract.ts';
import type { Op } from './op.ts';
import { readExpertBytes } from './ffns/moe.ts';
import type { HeadState } from './head.ts';
import { deviceTopK } from './candidates.ts';
import { candidatesOnDevice, greedyCandidates, pickAndRunOnDevice, submitGreedy, type GreedyRead, type PickTarget } from './token-pick.ts';
import { Readbacks, type HostTimes } from './readback.ts';
import { timeOps } from './time-submits.ts';
import { scoreRowsOnDevice } from './score-rows.ts';

export { MAX_DEVICE_TOPK } from './candidates.ts';
export type { EngineParts, EngineStats } from './engine-parts.ts';

/** Typed arrays from any caller (maybe over a SharedArrayBuffer view) as a writeBuffer source. */
const src = (a: Float32Array | Uint32Array): GPUAllowSharedBufferSource => a as unknown as GPUAllowSharedBufferSource;

/** A decode token submitted before the read-back of the one before it returned (WebGPUEngine.decodeOne). */
interface AheadToken {
  position: number;
  token?: number;                // the device's pick it runs on, known once the read-back before it returns
  dispatches: number;
  read: Promise<GreedyRead>;
}

export class WebGPUEngine implements LayerEngine {
  readonly range: LayerRange;
  readonly hasEmbedding: boolean;
  readonly hasHead: boolean;
  /** Holds Gated DeltaNet layers (Qwen3.5): going back needs a snapshot of their state (./recurrent-snapshots.ts). */
  readonly recurrent: boolean;
  private readonly reads: Readbacks;
  private queue: Promise<unknown> = Promise.resolve();
  private disposed = false;
  private counters: EngineCounters = { submits: 0, readbacks: 0, pickRedos: 0, decodesAhead: 0, dispatches: 0, layerTokens: 0 };
  /**
   * Test seam, unset in use: maps the uniform given to the device's sampled pick (sampleAndRun). A test
   * skews it so the device picks another token than the reference sampler, to run the redo branch.
   */
  skewDeviceUniform: ((u: number) => number) | undefined;
  private last = { op: 'none', tokens: 0, submits: 0, dispatches: 0 };
  /**
   * Plain greedy decoding's next token, submitted before the read-back of the one before it returned
   * (decodeOne): it runs at `position` on the token the device picked, `token` once that read-back says
   * which. The next decode call that feeds that token there takes it; any other call drops it first.
   */
  private ahead: AheadToken | undefined;
  private submittingAhead = false;
  private decodeOps: Op[] | undefined;     // gather + every layer's ops, made once (decode's whole model)

  private gpuError: Error | undefined;

  constructor(private readonly parts: EngineParts) {
    // Validation and out-of-memory errors arrive asynchronously; the next read reports them.
    parts.device.addEventListener('uncapturederror', (e) => {
      this.gpuError ??= (e as GPUUncapturedErrorEvent).error as unknown as Error;
    });
    this.reads = new Readbacks(parts.device, {
      submitted: (dispatches) => {
        this.counters.submits++;
        this.counters.dispatches += dispatches;
        this.counters.readbacks++;
        if (this.submittingAhead) {
          this.ahead!.dispatches = dispatches;     // counted in `last` by the call that takes it
          return;
        }
        this.last.submits++;
        this.last.dispatches += dispatches;
      },
      error: () => this.gpuError,
    });
    this.range = parts.range;
    this.hasEmbedding = Boolean(parts.embedding);
    this.hasHead = Boolean(parts.head);
    this.recurrent = parts.layers.some((l) => l.state);
  }

  get device(): GPUDevice {
    return this.parts.device;
  }

  stats(): EngineStats {
    return engineStats(this.parts, this.counters, this.last);
  }

  /** Host time around the GPU's since the engine was made (./readback.ts HostTimes): the GPU bench's host ms per token. */
  hostTimes(): HostTimes {
    return this.reads.hostTimes();
  }

  kvLength(): number {
    return this.parts.layers[0]?.kvLength ?? 0;
  }

  /**
   * Cut the KV back to `length`; the Gated DeltaNet layers' state goes back to its snapshot there (zeros
   * at 0). SnapshotMissingError, with nothing changed, when a recurrent layer cannot get there.
   */
  truncate(length: number): Promise<void> {
    return this.serial(false, async () => {
      if (!(Number.isInteger(length) && length >= 0)) throw new EngineUsageError(`truncate: ${length} is not a length`);
      const byIndex = new Map(this.parts.layers.map((l) => [l.index, l]));
      this.parts.snapshots.restore(length, (i) => byIndex.get(i)!.kvLength);
      for (const l of this.parts.layers) l.kvLength = l.state ? length : Math.min(l.kvLength, length);
    });
  }

  /** Copy every Gated DeltaNet layer's state at `position` (= kvLength()) on the device; nothing for Qwen3. */
  snapshot(position: number): Promise<void> {
    return this.serial(false, async () => {
      if (!this.recurrent) return;
      for (const l of this.parts.layers) {
        if (l.kvLength !== position) throw new PositionError(`snapshot at ${position}: layer ${l.index} holds ${l.kvLength} tokens`);
      }
      await this.parts.snapshots.take(position);
    });
  }

  releaseSnapshot(position: number): Promise<void> {
    return this.serial(false, async () => this.parts.snapshots.release(position));
  }

  embed(ids: number[]): Promise<Float32Array> {
    return this.serial(false, async () => {
      this.checkIds('embed', ids);
      return this.runChunks('embed', ids.length, undefined, [], this.parts.embedOps, (c, m) => {
        this.parts.device.queue.writeBuffer(this.parts.ids, 0, new Uint32Array(ids.slice(c, c + m)));
      });
    });
  }

  runLayers(range: LayerRange, pos0: number, hidden: Float32Array): Promise<Float32Array> {
    return this.serial(false, async () => {
      const layers = this.layersFor('runLayers', range);
      const H = this.parts.config.hiddenSize;
      if (hidden.length % H !== 0) throw new EngineUsageError(`runLayers: hidden has ${hidden.length} values, not a whole number of rows of ${H}`);
      const n = hidden.length / H;
      if (n === 0) return new Float32Array(0);
      this.checkContinues('runLayers', layers, pos0, n);
      if (layers.length === 0) {
        this.beginCall('runLayers', n);
        return hidden.slice();
      }
      return this.runChunks('runLayers', n, pos0, layers, layers.flatMap((l) => l.ops), (c, m) => {
        this.parts.device.queue.writeBuffer(this.parts.act.x, 0, src(hidden), c * H, m * H);
      });
    });
  }

  /** embed + runLayers with the gather in each chunk's submit: one read-back per chunk instead of two. */
  runTokens(ids: number[], range: LayerRange, pos0: number): Promise<Float32Array> {
    return this.serial(false, async () => this.runTokensNow(ids, range, pos0));
  }

  /**
   * The decode loop's one call (see LayerEngine.decode), each way in as few submits as it can:
   *   one fed token, candidates on the device: gather → every layer → head → top-k, one submit and one
   *     read-back (the candidates only);
   *   the prompt's row: head → top-k, one submit;
   *   several rows (a speculative pass): runTokens, then every row's candidates in one submit;
   *   a row sampled with no device-sized top-k (MAX_DEVICE_TOPK) needs every logit: read back per row.
   */
  decode(request: DecodeRequest): Promise<RowCandidates[]> {
    return this.serial(true, async () => {
      const { config, head } = this.parts;
      const H = config.hiddenSize;
      const checked = checkDecode(request, H, { range: this.range, hasEmbedding: this.hasEmbedding, hasHead: this.hasHead, numLayers: config.numLayers });
      const { n } = checked, { tokens, rows } = request;
      const ks = rows.map((r) => deviceTopK(r.opts, r.constraint));
      if (tokens && n === 1 && ks[0]! > 0) return [await this.decodeOne(tokens[0]!, ks[0]!, rows[0]!, request.ahead === true)];
      await this.dropAhead();
      const hidden = tokens ? await this.runTokensNow([...tokens], this.range, this.kvLength()) : checked.hidden!;
      if (ks.includes(0)) {
        const out: RowCandidates[] = [];
        for (const [i, r] of rows.entries()) out.push(sortedCandidates(await this.logitsNow(hidden.subarray(i * H, (i + 1) * H)), r.opts, r.constraint));
        return out;
      }
      this.writeStep(1, 0);
      if (n === 1) {
        this.beginCall('sample', 1);
        this.parts.device.queue.writeBuffer(this.parts.act.x, 0, src(hidden));
        return [await candidatesOnDevice(this.pickTarget(head!), [], ks[0]!, rows[0]!.constraint)];
      }
      this.beginCall('scoreRows', n);
      return scoreRowsOnDevice({ device: this.parts.device, head: head!, x: this.parts.act.x, hiddenSize: H, reads: this.reads }, hidden, rows, ks);
    });
  }

  /** Raw logits [V] of hidden's last row (final norm + head, read back whole): goldens and benches compare them. */
  logits(hidden: Float32Array): Promise<Float32Array> {
    return this.serial(false, async () => this.logitsNow(hidden));
  }

  /**
   * Pick the token after hidden's last row and run `range` of this engine's layers on it, in one submit
   * and one read-back: head → candidates (masked, and unmasked when the caller wants to hear of an
   * overruled choice) → the pick written into the ids buffer on the device → embedding gather → the
   * layers at kvLength(). The host of a split room does its share of the next token this way.
   *   greedy: argmax → pick_best; exact by construction (comparisons only).
   *   sampling with a device-sized top-k: top-k per block → sample_pick (f32, u from the CPU's PRNG).
   *     The candidates come back with the pick; the reference sampler (doubles) picks from them. When
   *     the two differ (a running sum rounded to the other side of top-p or u's target) the layers are cut
   *     back a position and run on the reference's token: a second read-back, counted in pickRedos.
   * Sampling that needs every logit (no top-k, or top-k > MAX_DEVICE_TOPK), and sampling on recurrent
   * layers (which cannot be cut back a position), take decode then runTokens: two read-backs.
   */
  async sampleAndRun(hidden: Float32Array, row: RowSampling, range: LayerRange): Promise<{ token: number; candidates: RowCandidates; hidden: Float32Array }> {
    const { opts, constraint } = row;
    const k = deviceTopK(opts, constraint);
    const H = this.parts.config.hiddenSize;
    if (k === 0 || !this.parts.embedding || (k > 1 && this.recurrent)) {
      const [candidates] = await this.decode({ hidden, rows: [row] });
      const token = pickRow(candidates!, opts, constraint);
      return { token, candidates: candidates!, hidden: await this.runTokens([token], range, this.kvLength()) };
    }
    return this.serial(false, async () => {
      const head = this.requireHead('sampleAndRun', hidden);
      const pos0 = this.kvLength();
      const layers = this.layersToRun('sampleAndRun', range, pos0, 1);
      const { device } = this.parts;
      this.beginCall('sampleAndRun', 1);
      this.writeStep(1, pos0);
      device.queue.writeBuffer(this.parts.act.x, 0, src(hidden), hidden.length - H);
      const picked = await pickAndRunOnDevice({
        device, head, reads: this.reads, x: this.parts.act.x, ids: this.parts.ids, hiddenSize: H,
        layerOps: [...this.parts.embedOps, ...layers.flatMap((l) => l.ops)],
        skewUniform: this.skewDeviceUniform, onRedo: () => { this.counters.pickRedos++; },
      }, k, opts, constraint);
      this.advance(layers, 1);
      return picked;
    });
  }

  /**
   * Wall seconds of each op of layer `index` for a step of `tokens` tokens (default 1: a decode token)
   * at position `pos0`: every op runs `repeat` times in one submit, the median of `reps` such submits,
   * less an empty submit's time, over `repeat`. For benches: it writes the layer's K/V from pos0 and
   * moves its recurrent state on, so truncate (or dispose) afterwards.
   */
  profileLayer(index: number, pos0: number, opts: { tokens?: number; repeat?: number; reps?: number } = {}): Promise<{ label: string; seconds: number }[]> {
    return this.serial(false, async () => {
      const layer = this.parts.layers.find((l) => l.index === index);
      if (!layer) throw new EngineUsageError(`profileLayer: layer ${index} is not held by this engine`);
      const { device } = this.parts;
      const repeat = opts.repeat ?? 8, reps = opts.reps ?? 5, n = opts.tokens ?? 1;
      if (!(Number.isInteger(n) && n >= 1 && n <= this.parts.maxBatch && pos0 + n <= this.parts.ctx)) {
        throw new EngineUsageError(`profileLayer: ${n} tokens at ${pos0} do not fit a step (at most ${this.parts.maxBatch}) within the context of ${this.parts.ctx}`);
      }
      this.writeStep(n, pos0);
      return timeOps(device, layer.ops, n, repeat, reps);
    });
  }

  /**
   * MoE: the weight bytes (rows as stored) each expert's decode matvecs read since the engine was made
   * (or the last `reset`), per MoE layer held: layer index -> [E] bytes. Counted by the kernels
   * themselves, so a test can see that a decode token reads only its chosen experts. u32 per expert:
   * it wraps past 4 GiB, so read it with `reset`.
   */
  expertBytesRead(opts: { reset?: boolean } = {}): Promise<Map<number, Uint32Array>> {
    return this.serial(false, async () => {
      const moe = this.parts.act.moe;
      return moe ? readExpertBytes(this.parts.device, this.reads, moe, opts.reset ?? false) : new Map<number, Uint32Array>();
    });
  }

  async dispose(): Promise<void> {
    await this.serial(false, async () => {
      if (this.disposed) return;
      this.disposed = true;
      this.reads.destroy();
      destroyParts(this.parts);
    }).catch(() => undefined);
  }

  private requireHead(what: string, hidden: Float32Array): HeadState {
    const head = this.parts.head;
    if (!head) throw new EngineUsageError(`${what}: this engine (layers ${this.range.join('..')}) holds no final norm and head`);
    const H = this.parts.config.hiddenSize;
    if (hidden.length < H || hidden.length % H !== 0) throw new EngineUsageError(`${what}: hidden has ${hidden.length} values, not a whole number of rows of ${H}`);
    return head;
  }

  private pickTarget(head: HeadState): PickTarget {
    return { device: this.parts.device, head, reads: this.reads };
  }

  /**
   * Calls share the activation buffers: run them one at a time, in order. A token submitted ahead is
   * dropped first (waited for: its read-back holds a staging buffer), except by decode, which may take it.
   */
  private serial<T>(keepAhead: boolean, fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      if (this.disposed) throw new EngineUsageError('this engine was disposed');
      if (!keepAhead) await this.dropAhead();
      return fn();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private beginCall(op: string, tokens: number): void {
    this.last = { op, tokens, submits: 0, dispatches: 0 };
  }

  private writeStep(n: number, pos0: number): void {
    this.parts.device.queue.writeBuffer(this.parts.act.step, 0, new Uint32Array([n, pos0, 0, 0]));
  }

  /** The layers of `range` (within this engine's), in order. */
  private layersFor(what: string, range: LayerRange): GpuLayer[] {
    const [start, end] = range;
    if (!(start >= this.range[0] && end <= this.range[1] && start <= end)) {
      throw new PositionError(`${what}: layers [${start}, ${end}) are not within this engine's [${this.range[0]}, ${this.range[1]})`);
    }
    return this.parts.layers.slice(start - this.range[0], end - this.range[0]);
  }

  /** The layers of `range`, checked to continue at pos0 and to hold n more tokens within the context. */
  private layersToRun(what: string, range: LayerRange, pos0: number, n: number): GpuLayer[] {
    const layers = this.layersFor(what, range);
    this.checkContinues(what, layers, pos0, n);
    return layers;
  }

  private checkContinues(what: string, layers: readonly GpuLayer[], pos0: number, n: number): void {
    for (const l of layers) {
      if (l.kvLength !== pos0) throw new PositionError(`${what}: position ${pos0} does not continue layer ${l.index}'s KV cache of ${l.kvLength} tokens`);
    }
    if (pos0 + n > this.parts.ctx) throw new ContextFullError(`${what}: ${pos0} + ${n} tokens exceed the context of ${this.parts.ctx}`);
  }

  /** Every id a token of the vocabulary (the embedding's rows). */
  private checkIds(what: string, ids: readonly number[]): void {
    const { embedding } = this.parts;
    if (!embedding) throw new EngineUsageError(`${what}: this engine (layers ${this.range.join('..')}) holds no embedding`);
    for (const id of ids) {
      if (!Number.isInteger(id) || id < 0 || id >= embedding.rows) throw new EngineUsageError(`${what}: token id ${id} outside the vocabulary [0, ${embedding.rows})`);
    }
  }

  /**
   * The chunk loop of embed, runLayers and runTokens: n rows in chunks of up to maxBatch, each one
   * submit of `ops` with `write(c, m)` staging chunk [c, c + m)'s input, the rows of x read back; the
   * layers' caches move on by each chunk. pos0 undefined: no positions (the embedding alone).
   */
  private async runChunks(what: string, n: number, pos0: number | undefined, layers: GpuLayer[], ops: readonly Op[], write: (c: number, m: number) => void): Promise<Float32Array> {
    const H = this.parts.config.hiddenSize;
    this.beginCall(what, n);
    const out = new Float32Array(n * H);
    for (let c = 0; c < n; c += this.parts.maxBatch) {
      const m = Math.min(this.parts.maxBatch, n - c);
      this.writeStep(m, pos0 === undefined ? 0 : pos0 + c);
      write(c, m);
      out.set(new Float32Array(await this.submitAndRead(ops, m, this.parts.act.x, m * H * 4)), c * H);
      this.advance(layers, m);
    }
    return out;
  }

  /** The layers hold m more tokens. */
  private advance(layers: readonly GpuLayer[], m: number): void {
    for (const l of layers) l.kvLength += m;
    if (layers.length > 0) this.counters.layerTokens += m;
  }

  /** runTokens inside a serial call. */
  private async runTokensNow(ids: number[], range: LayerRange, pos0: number): Promise<Float32Array> {
    this.checkIds('runTokens', ids);
    const layers = this.layersToRun('runTokens', range, pos0, ids.length);
    return this.runChunks('runTokens', ids.length, pos0, layers, [...this.parts.embedOps, ...layers.flatMap((l) => l.ops)], (c, m) => {
      this.parts.device.queue.writeBuffer(this.parts.ids, 0, new Uint32Array(ids.slice(c, c + m)));
    });
  }

  /** logits inside a serial call. */
  private async logitsNow(hidden: Float32Array): Promise<Float32Array> {
    const head = this.requireHead('logits', hidden);
    this.beginCall('logits', 1);
    this.writeStep(1, 0);
    this.parts.device.queue.writeBuffer(this.parts.act.x, 0, src(hidden), hidden.length - this.parts.config.hiddenSize);
    return new Float32Array(await this.submitAndRead(head.logitOps, 1, head.logits, head.vocab * 4));
  }

  /**
   * One fed token through the whole model and its candidates on the device, in one submit. Plain greedy
   * decoding with no mask (`ahead`: the caller feeds the pick next) on an engine without recurrent state
   * goes one better: the pick is written into the ids buffer on the device and the next token's submit
   * (gather → layers at the next position → head → pick) goes in before this token's read-back returns,
   * so the GPU never waits for the host between tokens. A call that feeds that token takes it (its
   * submit already made); anything else drops it: its K/V entry is past kvLength(), overwritten later.
   */
  private async decodeOne(id: number, k: number, row: RowSampling, ahead: boolean): Promise<RowCandidates> {
    this.checkIds('decodeToken', [id]);
    const pos0 = this.kvLength();
    const layers = this.layersToRun('decodeToken', this.range, pos0, 1);
    this.beginCall('decodeToken', 1);
    const head = this.parts.head!;
    const greedy = k === 1 && !row.constraint && !this.recurrent;
    const prior = this.ahead;
    this.ahead = undefined;
    if (!greedy) {
      if (prior) await prior.read.catch(() => undefined);
      this.writeStep(1, pos0);
      this.parts.device.queue.writeBuffer(this.parts.ids, 0, new Uint32Array([id]));
      const candidates = await candidatesOnDevice(this.pickTarget(head), this.wholeModelOps(), k, row.constraint);
      this.advance(layers, 1);
      return candidates;
    }
    const target = { ...this.pickTarget(head), ids: this.parts.ids };
    let read: Promise<GreedyRead>;
    if (prior && prior.position === pos0 && prior.token === id) {
      read = prior.read;
      this.counters.decodesAhead++;
      this.last.submits++;
      this.last.dispatches += prior.dispatches;
    } else {
      if (prior) await prior.read.catch(() => undefined);
      this.writeStep(1, pos0);
      this.parts.device.queue.writeBuffer(this.parts.ids, 0, new Uint32Array([id]));
      read = submitGreedy(target, this.wholeModelOps());
    }
    let next: AheadToken | undefined;
    if (ahead && pos0 + 2 <= this.parts.ctx) {
      this.writeStep(1, pos0 + 1);
      next = { position: pos0 + 1, dispatches: 0, read: Promise.resolve({ pairs: new ArrayBuffer(0), picked: 0 }) };
      this.ahead = next;
      this.submittingAhead = true;
      try {
        next.read = submitGreedy(target, this.wholeModelOps());
      } finally {
        this.submittingAhead = false;
      }
      next.read.catch(() => undefined);     // a dropped token's failure is not this call's
    }
    let got: GreedyRead;
    try {
      got = await read;
    } catch (e) {
      await this.dropAhead();
      throw e;
    }
    this.advance(layers, 1);
    if (next) next.token = got.picked;
    return greedyCandidates(head, got);
  }

  /** The embedding gather and every layer's ops (decode's whole model), made once. */
  private wholeModelOps(): Op[] {
    return this.decodeOps ??= [...this.parts.embedOps, ...this.parts.layers.flatMap((l) => l.ops)];
  }

  /** Drop a token submitted ahead: wait for its read-back (its staging buffer) and forget it. */
  private async dropAhead(): Promise<void> {
    const a = this.ahead;
    this.ahead = undefined;
    if (a) await a.read.catch(() => undefined);
  }

  /** Encode ops in one pass, copy `bytes` of `src` out, one submit, read back. */
  private async submitAndRead(ops: readonly Op[], n: number, src: GPUBuffer, bytes: number): Promise<ArrayBuffer> {
    return (await this.reads.readMany(ops, n, [{ src, bytes }]))[0]!;
  }

}
