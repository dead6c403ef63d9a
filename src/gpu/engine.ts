// The WebGPU LayerEngine: a device's share of a Qwen3 model (a layer range, plus embedding and head when
// it holds them) with its f16 KV cache. Calls are serialized and each read-back ends one queue submit:
// runLayers submits once per chunk of up to maxBatch tokens (all its layers, ≤ 8 dispatches each), and
// decodeToken feeds one token through the whole model and picks the next on the device in one submit.
import type { LayerEngine, LayerRange, RowCandidates, RowSampling, SamplingOptions, TokenConstraint } from '../model/engine-types.ts';
import { ContextFullError, EngineUsageError, PositionError } from '../model/engine-errors.ts';
import { sampleLogits, sortedCandidates } from '../model/sampler.ts';
import { destroyParts, engineStats, type EngineCounters, type EngineParts, type EngineStats } from './engine-parts.ts';
import type { GpuLayer } from './layer-contract.ts';
import type { Op } from './op.ts';
import { readExpertBytes } from './ffns/moe.ts';
import type { HeadState } from './head.ts';
import { deviceTopK } from './candidates.ts';
import { pickAndRunOnDevice, pickOnDevice, type PickTarget } from './token-pick.ts';
import { Readbacks } from './readback.ts';
import { timeOps } from './time-submits.ts';
import { scoreRowsOnDevice } from './score-rows.ts';

export { MAX_DEVICE_TOPK } from './candidates.ts';
export type { EngineParts, EngineStats } from './engine-parts.ts';

/** Typed arrays from any caller (maybe over a SharedArrayBuffer view) as a writeBuffer source. */
const src = (a: Float32Array | Uint32Array): GPUAllowSharedBufferSource => a as unknown as GPUAllowSharedBufferSource;

export class WebGPUEngine implements LayerEngine {
  readonly range: LayerRange;
  readonly hasEmbedding: boolean;
  readonly hasHead: boolean;
  /** Holds Gated DeltaNet layers (Qwen3.5): going back needs a snapshot of their state (./recurrent-snapshots.ts). */
  readonly recurrent: boolean;
  private readonly reads: Readbacks;
  private queue: Promise<unknown> = Promise.resolve();
  private disposed = false;
  private counters: EngineCounters = { submits: 0, readbacks: 0, pickRedos: 0, dispatches: 0, layerTokens: 0 };
  /**
   * Test seam, unset in use: maps the uniform given to the device's sampled pick (sampleAndRun). A test
   * skews it so the device picks another token than the reference sampler, to run the redo branch.
   */
  skewDeviceUniform: ((u: number) => number) | undefined;
  private last = { op: 'none', tokens: 0, submits: 0, dispatches: 0 };

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

  kvLength(): number {
    return this.parts.layers[0]?.kvLength ?? 0;
  }

  /**
   * Cut the KV back to `length`; the Gated DeltaNet layers' state goes back to its snapshot there (zeros
   * at 0). SnapshotMissingError, with nothing changed, when a recurrent layer cannot get there.
   */
  truncate(length: number): Promise<void> {
    return this.serial(async () => {
      if (!(Number.isInteger(length) && length >= 0)) throw new EngineUsageError(`truncate: ${length} is not a length`);
      const byIndex = new Map(this.parts.layers.map((l) => [l.index, l]));
      this.parts.snapshots.restore(length, (i) => byIndex.get(i)!.kvLength);
      for (const l of this.parts.layers) l.kvLength = l.state ? length : Math.min(l.kvLength, length);
    });
  }

  /** Copy every Gated DeltaNet layer's state at `position` (= kvLength()) on the device; nothing for Qwen3. */
  snapshot(position: number): Promise<void> {
    return this.serial(async () => {
      if (!this.recurrent) return;
      for (const l of this.parts.layers) {
        if (l.kvLength !== position) throw new PositionError(`snapshot at ${position}: layer ${l.index} holds ${l.kvLength} tokens`);
      }
      await this.parts.snapshots.take(position);
    });
  }

  releaseSnapshot(position: number): Promise<void> {
    return this.serial(async () => this.parts.snapshots.release(position));
  }

  embed(ids: number[]): Promise<Float32Array> {
    return this.serial(async () => {
      const { embedding } = this.parts;
      if (!embedding) throw new EngineUsageError(`embed: this engine (layers ${this.range.join('..')}) holds no embedding`);
      for (const id of ids) {
        if (!Number.isInteger(id) || id < 0 || id >= embedding.rows) {
          throw new EngineUsageError(`embed: token id ${id} outside the vocabulary [0, ${embedding.rows})`);
        }
      }
      const H = this.parts.config.hiddenSize;
      const out = new Float32Array(ids.length * H);
      this.beginCall('embed', ids.length);
      for (let c = 0; c < ids.length; c += this.parts.maxBatch) {
        const chunk = ids.slice(c, c + this.parts.maxBatch);
        this.writeStep(chunk.length, 0);
        this.parts.device.queue.writeBuffer(this.parts.ids, 0, new Uint32Array(chunk));
        const rows = await this.submitAndRead(this.parts.embedOps, chunk.length, this.parts.act.x, chunk.length * H * 4);
        out.set(new Float32Array(rows), c * H);
      }
      return out;
    });
  }

  runLayers(range: LayerRange, pos0: number, hidden: Float32Array): Promise<Float32Array> {
    return this.serial(async () => {
      const layers = this.layersFor('runLayers', range);
      const H = this.parts.config.hiddenSize;
      if (hidden.length % H !== 0) throw new EngineUsageError(`runLayers: hidden has ${hidden.length} values, not a whole number of rows of ${H}`);
      const n = hidden.length / H;
      if (n === 0) return new Float32Array(0);
      for (const l of layers) {
        if (l.kvLength !== pos0) throw new PositionError(`runLayers: position ${pos0} does not continue layer ${l.index}'s KV cache of ${l.kvLength} tokens`);
      }
      if (pos0 + n > this.parts.ctx) {
        throw new ContextFullError(`runLayers: ${pos0} + ${n} tokens exceed the context of ${this.parts.ctx}`);
      }
      this.beginCall('runLayers', n);
      if (layers.length === 0) return hidden.slice();
      const out = new Float32Array(n * H);
      const ops = layers.flatMap((l) => l.ops);
      for (let c = 0; c < n; c += this.parts.maxBatch) {
        const m = Math.min(this.parts.maxBatch, n - c);
        this.writeStep(m, pos0 + c);
        this.parts.device.queue.writeBuffer(this.parts.act.x, 0, src(hidden), c * H, m * H);
        const rows = await this.submitAndRead(ops, m, this.parts.act.x, m * H * 4);
        out.set(new Float32Array(rows), c * H);
        for (const l of layers) l.kvLength += m;
        this.counters.layerTokens += m;
      }
      return out;
    });
  }

  /** embed + runLayers with the gather in each chunk's submit: one read-back per chunk instead of two. */
  runTokens(ids: number[], range: LayerRange, pos0: number): Promise<Float32Array> {
    return this.serial(async () => {
      const { embedding } = this.parts;
      if (!embedding) throw new EngineUsageError(`runTokens: this engine (layers ${this.range.join('..')}) holds no embedding`);
      for (const id of ids) {
        if (!Number.isInteger(id) || id < 0 || id >= embedding.rows) throw new EngineUsageError(`runTokens: token id ${id} outside the vocabulary [0, ${embedding.rows})`);
      }
      const layers = this.layersFor('runTokens', range);
      for (const l of layers) {
        if (l.kvLength !== pos0) throw new PositionError(`runTokens: position ${pos0} does not continue layer ${l.index}'s KV cache of ${l.kvLength} tokens`);
      }
      const n = ids.length;
      if (pos0 + n > this.parts.ctx) throw new ContextFullError(`runTokens: ${pos0} + ${n} tokens exceed the context of ${this.parts.ctx}`);
      const H = this.parts.config.hiddenSize;
      this.beginCall('runTokens', n);
      const out = new Float32Array(n * H);
      const ops = [...this.parts.embedOps, ...layers.flatMap((l) => l.ops)];
      for (let c = 0; c < n; c += this.parts.maxBatch) {
        const m = Math.min(this.parts.maxBatch, n - c);
        this.writeStep(m, pos0 + c);
        this.parts.device.queue.writeBuffer(this.parts.ids, 0, new Uint32Array(ids.slice(c, c + m)));
        out.set(new Float32Array(await this.submitAndRead(ops, m, this.parts.act.x, m * H * 4)), c * H);
        for (const l of layers) l.kvLength += m;
        if (layers.length > 0) this.counters.layerTokens += m;
      }
      return out;
    });
  }

  logits(hidden: Float32Array): Promise<Float32Array> {
    return this.serial(async () => {
      const head = this.requireHead('logits', hidden);
      this.beginCall('logits', 1);
      this.writeStep(1, 0);
      this.parts.device.queue.writeBuffer(this.parts.act.x, 0, src(hidden), hidden.length - this.parts.config.hiddenSize);
      return new Float32Array(await this.submitAndRead(head.logitOps, 1, head.logits, head.vocab * 4));
    });
  }

  async sample(hidden: Float32Array, opts: SamplingOptions, constraint?: TokenConstraint): Promise<number> {
    const k = deviceTopK(opts, constraint);
    if (k === 0) {
      // Full-distribution sampling needs every logit: read them back, sample exactly like the reference.
      return sampleLogits(await this.logits(hidden), opts, constraint);
    }
    return this.serial(async () => {
      const head = this.requireHead('sample', hidden);
      this.beginCall('sample', 1);
      this.writeStep(1, 0);
      this.parts.device.queue.writeBuffer(this.parts.act.x, 0, src(hidden), hidden.length - this.parts.config.hiddenSize);
      return pickOnDevice(this.pickTarget(head), [], k, opts, constraint);
    });
  }

  /**
   * One whole decode token in one queue submit: gather `id` → every layer (its K/V at kvLength()) →
   * final norm + head → candidates on the device. For an engine holding the embedding, all layers and
   * the head (a room of one); gives the same token as embed + runLayers + sample. Sampling that needs
   * all logits (temperature without a device-sized top-k) falls back to those three calls.
   */
  async decodeToken(id: number, opts: SamplingOptions, constraint?: TokenConstraint): Promise<number> {
    const k = deviceTopK(opts, constraint);
    const { embedding, head, layers, config } = this.parts;
    if (!embedding || !head || this.range[0] !== 0 || this.range[1] !== config.numLayers) {
      throw new EngineUsageError('decodeToken needs an engine holding the embedding, every layer and the head');
    }
    if (k === 0) {
      const pos = this.kvLength();
      const hidden = await this.runLayers(this.range, pos, await this.embed([id]));
      return this.sample(hidden, opts, constraint);
    }
    return this.serial(async () => {
      if (!Number.isInteger(id) || id < 0 || id >= embedding.rows) throw new EngineUsageError(`decodeToken: token id ${id} outside the vocabulary [0, ${embedding.rows})`);
      const pos0 = layers[0]?.kvLength ?? 0;
      if (pos0 + 1 > this.parts.ctx) throw new ContextFullError(`decodeToken: position ${pos0} is past the context of ${this.parts.ctx}`);
      this.beginCall('decodeToken', 1);
      this.writeStep(1, pos0);
      this.parts.device.queue.writeBuffer(this.parts.ids, 0, new Uint32Array([id]));
      const ops = [...this.parts.embedOps, ...layers.flatMap((l) => l.ops)];
      const token = await pickOnDevice(this.pickTarget(head), ops, k, opts, constraint);
      for (const l of layers) l.kvLength += 1;
      this.counters.layerTokens += 1;
      return token;
    });
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
   * layers (which cannot be cut back a position), take sample() then runTokens: two read-backs.
   */
  async sampleAndRun(hidden: Float32Array, opts: SamplingOptions, constraint: TokenConstraint | undefined, range: LayerRange): Promise<{ token: number; hidden: Float32Array }> {
    const k = deviceTopK(opts, constraint);
    if (k === 0 || !this.parts.embedding || (k > 1 && this.recurrent)) {
      const token = await this.sample(hidden, opts, constraint);
      return { token, hidden: await this.runTokens([token], range, this.kvLength()) };
    }
    return this.serial(async () => {
      const head = this.requireHead('sampleAndRun', hidden);
      const layers = this.layersFor('sampleAndRun', range);
      const pos0 = this.kvLength();
      for (const l of layers) if (l.kvLength !== pos0) throw new PositionError(`sampleAndRun: layer ${l.index} holds ${l.kvLength} tokens, not ${pos0}`);
      if (pos0 + 1 > this.parts.ctx) throw new ContextFullError(`sampleAndRun: position ${pos0} is past the context of ${this.parts.ctx}`);
      const H = this.parts.config.hiddenSize;
      const { device } = this.parts;
      this.beginCall('sampleAndRun', 1);
      this.writeStep(1, pos0);
      device.queue.writeBuffer(this.parts.act.x, 0, src(hidden), hidden.length - H);
      const picked = await pickAndRunOnDevice({
        device, head, reads: this.reads, x: this.parts.act.x, ids: this.parts.ids, hiddenSize: H,
        layerOps: [...this.parts.embedOps, ...layers.flatMap((l) => l.ops)],
        skewUniform: this.skewDeviceUniform, onRedo: () => { this.counters.pickRedos++; },
      }, k, opts, constraint);
      for (const l of layers) l.kvLength += 1;
      this.counters.layerTokens += 1;
      return picked;
    });
  }

  /**
   * Candidates for every row of hidden [m, H] (a speculative verification pass) in one submit and one
   * read-back: per row, copy it into the head's input, its mask and sampling params into place, then
   * head → top-k (and the unmasked argmax when the row's constraint wants to hear of an overrule), each
   * row's candidates copied out between passes. Rows that need every logit (sampling without a
   * device-sized top-k) read them back row by row instead.
   */
  async scoreRows(hidden: Float32Array, rows: readonly RowSampling[]): Promise<RowCandidates[]> {
    const ks = rows.map((r) => deviceTopK(r.opts, r.constraint));
    const H = this.parts.config.hiddenSize;
    if (hidden.length !== rows.length * H) throw new EngineUsageError(`scoreRows: hidden has ${hidden.length} values for ${rows.length} rows of ${H}`);
    if (ks.includes(0)) {
      const out: RowCandidates[] = [];
      for (const [i, r] of rows.entries()) out.push(sortedCandidates(await this.logits(hidden.subarray(i * H, (i + 1) * H)), r.opts, r.constraint));
      return out;
    }
    return this.serial(async () => {
      const head = this.requireHead('scoreRows', hidden);
      this.beginCall('scoreRows', rows.length);
      this.writeStep(1, 0);
      return scoreRowsOnDevice({ device: this.parts.device, head, x: this.parts.act.x, hiddenSize: H, reads: this.reads }, hidden, rows, ks);
    });
  }

  /**
   * Wall seconds of each op of layer `index` for a step of `tokens` tokens (default 1: a decode token)
   * at position `pos0`: every op runs `repeat` times in one submit, the median of `reps` such submits,
   * less an empty submit's time, over `repeat`. For benches: it writes the layer's K/V from pos0 and
   * moves its recurrent state on, so truncate (or dispose) afterwards.
   */
  profileLayer(index: number, pos0: number, opts: { tokens?: number; repeat?: number; reps?: number } = {}): Promise<{ label: string; seconds: number }[]> {
    return this.serial(async () => {
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
    return this.serial(async () => {
      const moe = this.parts.act.moe;
      return moe ? readExpertBytes(this.parts.device, this.reads, moe, opts.reset ?? false) : new Map<number, Uint32Array>();
    });
  }

  async dispose(): Promise<void> {
    await this.serial(async () => {
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

  /** Calls share the activation buffers: run them one at a time, in order. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      if (this.disposed) throw new EngineUsageError('this engine was disposed');
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

  /** Encode ops in one pass, copy `bytes` of `src` out, one submit, read back. */
  private async submitAndRead(ops: readonly Op[], n: number, src: GPUBuffer, bytes: number): Promise<ArrayBuffer> {
    return (await this.reads.readMany(ops, n, [{ src, bytes }]))[0]!;
  }

}
