// The whole room as ONE LayerEngine over layers [0, L), so the Generator (and the agent above it) sees a
// single engine: embedding, head and sampling on the host's engine; layers on the stages (the host's
// own engine and ChainLayerEngines: one guest, or a chain of guests passing activations on), in order.
// runLayers on n tokens is pipelined in micro-chunks: chunk c goes to stage s as soon as stage s−1 finished it, right behind chunk c−1 (a
// remote device queues them), so with k devices up to k chunks are computed at once (a wavefront). The
// chunk size is chosen from the stages' measured times (chunk-choice.ts) unless fixed.
//
// Decode in a split room reads back one thing per token on the host: the host engine picks the token and
// runs its own layers on it in the same submit (sampleAndRun), so the next decode call starts at the
// guests. That prepared work is dropped (its cache entry cut) when anything else comes first.
// Truncation is ordered, not awaited: remote devices run their frames in order, so the next request sees
// the cut cache; the acknowledgements are collected with the next request's answers.
import {
  checkDecode, runTokens as runTokensOf, type DecodeRequest, type LayerEngine, type LayerRange, type RowCandidates, type RowSampling,
} from '../model/engine-types.ts';
import { EngineUsageError, PipelineError } from '../model/engine-errors.ts';
import { chooseChunk, StageTimes } from './chunk-choice.ts';
import { requireFinite } from './finite-check.ts';

export interface RoomEngineOptions {
  numLayers: number;
  hiddenSize: number;
  /** Tokens per pipelined micro-chunk during prefill; 0 = no pipelining; 'auto' (default) = from measured stage times. */
  microChunk?: number | 'auto';
  /** The clock stage times are measured with, in ms (default performance.now; the bench's modelled devices bring their own). */
  now?: () => number;
}

/** Before any measurement, 'auto' pipelines in chunks of this many tokens. */
const AUTO_FALLBACK_CHUNK = 16;
/**
 * 'auto' runs batches up to this size whole (a speculative pass's few rows): a device costs about the
 * same for them as for one row (it reads its weights once), so splitting would add a hop chain per piece
 * and save nothing.
 */
const AUTO_MIN_PIPELINED = 16;

interface Prepared { token: number; position: number; hidden: Float32Array }

export class RoomEngine implements LayerEngine {
  readonly range: LayerRange;
  readonly hasEmbedding = true;
  readonly hasHead = true;
  readonly recurrent: boolean;
  microChunk: number | 'auto';
  /**
   * Told each time a stage returns rows it ran (a prefill chunk, a decode token): the host's engine or a
   * chain. The room shows each device's prompt reading from it (app/prefill-progress.ts).
   */
  onStageRows?: (stage: LayerEngine, rows: number) => void;
  /** Who a stage is, for an error about its rows (the host names its devices); default "a stage". */
  stageName?: (stage: LayerEngine) => string;
  private readonly hiddenSize: number;
  private readonly now: () => number;
  private prepared: Prepared | null = null;
  private cuts: Promise<unknown>[] = [];
  private readonly times = new Map<LayerEngine, StageTimes>();
  private readonly busy = new Map<LayerEngine, number>();
  private readonly lastEnd = new Map<LayerEngine, number>();
  /** Layer work each engine did since this deal (seconds include the network for remote engines). */
  private readonly work = new Map<LayerEngine, { tokens: number; seconds: number }>();

  /** host: the host's engine, holds embedding + head (and maybe layers). stages: non-empty layer ranges in order, covering [0, L). */
  constructor(readonly host: LayerEngine, readonly stages: readonly LayerEngine[], opts: RoomEngineOptions) {
    if (!host.hasEmbedding || !host.hasHead) throw new PipelineError('the host engine must hold the embedding and the head');
    let at = 0;
    for (const s of stages) {
      if (s.range[0] !== at || s.range[1] <= s.range[0]) throw new PipelineError(`stage [${s.range}] does not continue the pipeline at layer ${at}`);
      at = s.range[1];
    }
    if (at !== opts.numLayers) throw new PipelineError(`the stages cover layers [0, ${at}) of ${opts.numLayers}`);
    this.range = [0, opts.numLayers];
    this.recurrent = host.recurrent || stages.some((s) => s.recurrent);
    this.hiddenSize = opts.hiddenSize;
    this.microChunk = opts.microChunk ?? 'auto';
    this.now = opts.now ?? (() => performance.now());
  }


  /** Tokens per second an engine ran its layers at, as seen from the host (0 before any work). */
  speedOf(engine: LayerEngine | null | undefined): number {
    const w = engine ? this.work.get(engine) : undefined;
    return w && w.seconds > 0 ? w.tokens / w.seconds : 0;
  }

  /** The micro-chunk a prefill of n tokens would use now. */
  chunkFor(n: number): number {
    if (this.microChunk !== 'auto') return this.microChunk > 0 ? this.microChunk : n;
    if (this.stages.length < 2 || n <= AUTO_MIN_PIPELINED) return n;
    const times = this.stages.map((s) => this.timesOf(s));
    return Math.min(n, chooseChunk(n, times, AUTO_FALLBACK_CHUNK));
  }

  private timesOf(engine: LayerEngine): StageTimes {
    let t = this.times.get(engine);
    if (!t) {
      t = new StageTimes();
      // A stage that is a chain of devices (host → A → B → host) says how many it passes chunks through.
      const depth = (engine as { depth?: unknown }).depth;
      t.depth = typeof depth === 'number' && Number.isInteger(depth) && depth >= 1 ? depth : 1;
      this.times.set(engine, t);
    }
    return t;
  }

  private async timed<T>(engine: LayerEngine, tokens: number, run: () => Promise<T>): Promise<T> {
    const alone = (this.busy.get(engine) ?? 0) === 0;
    this.busy.set(engine, (this.busy.get(engine) ?? 0) + 1);
    const t0 = this.now();
    try {
      const result = await run();
      const seconds = (this.now() - t0) / 1000;
      const w = this.work.get(engine) ?? { tokens: 0, seconds: 0 };
      w.tokens += tokens;
      w.seconds += seconds;
      this.work.set(engine, w);
      // A call alone measures the stage's latency; one queued behind another, its pace (from the end before).
      const end = this.now();
      const previousEnd = this.lastEnd.get(engine);
      if (alone) this.timesOf(engine).observe(tokens, seconds);
      else if (previousEnd !== undefined && previousEnd > t0) this.timesOf(engine).observePace(tokens, (end - previousEnd) / 1000);
      this.lastEnd.set(engine, end);
      this.onStageRows?.(engine, tokens);
      return result;
    } finally {
      this.busy.set(engine, this.busy.get(engine)! - 1);
    }
  }

  private finite(stage: LayerEngine, rows: Float32Array, sub: LayerRange, at: number): Float32Array {
    return requireFinite(rows, this.stageName?.(stage) ?? 'a stage', `layers [${sub[0]}, ${sub[1]}) at position ${at}`);
  }

  private engines(): LayerEngine[] { return [...new Set([this.host, ...this.stages])]; }

  kvLength(): number {
    return this.stages.length === 0 ? this.host.kvLength() : Math.min(...this.stages.map((s) => s.kvLength()));
  }

  async truncate(length: number): Promise<void> {
    await this.dropPrepared();
    for (const e of this.engines()) {
      if (e.kvLength() <= length) continue;
      const cut = e.truncate(length);
      cut.catch(() => undefined);          // surfaces with the next request (settleCuts)
      this.cuts.push(cut);
    }
    // Every engine's kvLength() says the cut length from here on (local engines cut at once, remote ones
    // count it as sent); the frames behind it are queued after it on each device. Going back in a
    // recurrent model restores snapshots, which may be missing: that answer is awaited here.
    if (this.recurrent) await this.settleCuts();
  }

  /** The cuts ordered so far: their failures belong to the request now finishing. */
  private async settleCuts(): Promise<void> {
    const cuts = this.cuts.splice(0);
    await Promise.all(cuts);
  }

  /** The host's layers ran a token ahead (sampleAndRun): cut that entry unless it is what comes next. */
  private async dropPrepared(): Promise<void> {
    const p = this.prepared;
    if (!p) return;
    this.prepared = null;
    if (this.host.kvLength() > p.position) await this.host.truncate(p.position);
  }

  /** Every device holding recurrent layers pins its state at `position` (each keeps its own layers'). */
  async snapshot(position: number): Promise<void> {
    await this.dropPrepared();
    await this.settleCuts();
    await Promise.all(this.engines().filter((e) => e.recurrent).map((e) => e.snapshot(position)));
  }

  async releaseSnapshot(position: number): Promise<void> {
    await Promise.all(this.engines().filter((e) => e.recurrent).map((e) => e.releaseSnapshot(position)));
  }

  embed(ids: number[]): Promise<Float32Array> { return this.host.embed(ids); }

  /** The host's own first stage (it holds layer 0 in a room), or null when the host holds no layers. */
  private hostStage(): LayerRange | null {
    const first = this.stages[0];
    return first === this.host && first.range[1] > first.range[0] ? first.range : null;
  }

  /** A plain decode step's pick makes the host run its own layers on it (see pick below): a split room whose host holds layers. */
  get samplesAhead(): boolean {
    return !this.alone && this.hostStage() !== null && this.host.sampleAndRun !== undefined && !this.recurrent;
  }

  private get alone(): boolean {
    const [only] = this.stages;
    return this.stages.length === 1 && only === this.host && only.range[0] === 0 && only.range[1] === this.range[1];
  }

  /**
   * The decode call. A room of one hands it to its engine whole: the WebGPU engine feeds a token and
   * picks in one submit and one read-back (instead of three, each a submit that waits for its work, and
   * a worker message). A split room runs the fed tokens through its stages (starting from the host's
   * prepared share when the token is the one it picked ahead), then the host's head picks.
   */
  async decode(request: DecodeRequest): Promise<RowCandidates[]> {
    const checked = checkDecode(request, this.hiddenSize, { range: this.range, hasEmbedding: true, hasHead: true, numLayers: this.range[1] });
    const { n } = checked, { tokens } = request;
    if (this.alone) return tokens ? this.timed(this.host, n, () => this.host.decode(request)) : this.host.decode(request);
    if (!tokens) return this.pick(checked.hidden!, request.rows, request.ahead === true);
    const position = this.kvLength();
    const p = this.prepared;
    let hidden: Float32Array;
    if (n === 1 && p && p.token === tokens[0] && p.position === position) {
      this.prepared = null;
      hidden = await this.pipeline([this.hostStage()![1], this.range[1]], position, 1, async () => p.hidden);
    } else {
      hidden = await this.runTokens([...tokens], this.range, position);
    }
    return this.pick(hidden, request.rows, request.ahead === true);
  }

  /**
   * The host's head on rows that went through every layer. Asked to go ahead (a plain step: the next
   * request feeds this pick), a split room's host also runs its own layers on the pick in the same call
   * (sampleAndRun) and keeps that share for the next decode. A recurrent host cannot be cut back a token
   * (no snapshot there): it does not run ahead.
   */
  private async pick(hidden: Float32Array, rows: readonly RowSampling[], ahead: boolean): Promise<RowCandidates[]> {
    const own = this.hostStage();
    if (!ahead || rows.length !== 1 || !this.samplesAhead || !own) return this.host.decode({ hidden, rows });
    await this.dropPrepared();
    const position = this.host.kvLength();
    const r = await this.timed(this.host, 1, () => this.host.sampleAndRun!(hidden, rows[0]!, own));
    this.prepared = { token: r.token, position, hidden: r.hidden };
    return [r.candidates];
  }

  async runLayers(range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array> {
    const H = this.hiddenSize;
    if (hidden.length % H !== 0) throw new EngineUsageError(`runLayers: hidden has ${hidden.length} values, not a whole number of rows of ${H}`);
    await this.dropPrepared();
    const n = hidden.length / H;
    return this.pipeline(range, start, n, async (c0, c1) => hidden.subarray(c0 * H, c1 * H));
  }

  /** embed + runLayers; the host's own stage embeds and runs each chunk in one call (one read-back). */
  async runTokens(ids: number[], range: LayerRange, start: number): Promise<Float32Array> {
    await this.dropPrepared();
    const own = this.hostStage();
    if (!own || range[0] !== 0) return this.runLayers(range, start, await this.host.embed(ids));
    const sub: LayerRange = [0, Math.min(own[1], range[1])];
    const rest: LayerRange = [sub[1], Math.max(sub[1], range[1])];
    return this.pipeline(rest, start, ids.length,
      (c0, c1) => this.timed(this.host, c1 - c0, () => runTokensOf(this.host, ids.slice(c0, c1), sub, start + c0).then((out) => this.finite(this.host, out, sub, start + c0))));
  }

  /**
   * Run `range` over n tokens in micro-chunks; `input(c0, c1)` gives chunk [c0, c1)'s hidden rows for the
   * first stage of the range (already through whatever came before it).
   */
  private async pipeline(range: LayerRange, start: number, n: number, input: (c0: number, c1: number) => Promise<Float32Array>): Promise<Float32Array> {
    const H = this.hiddenSize;
    const stages = this.stages
      .map((s) => ({ engine: s, sub: [Math.max(s.range[0], range[0]), Math.min(s.range[1], range[1])] as LayerRange }))
      .filter((s) => s.sub[1] > s.sub[0]);
    const m = this.chunkFor(n);
    const chunks: [number, number][] = [];
    for (let c0 = 0; c0 < n; c0 += m) chunks.push([c0, Math.min(n, c0 + m)]);

    // Inputs are asked for in order (the host's own stage computes them one after another).
    let previousInput: Promise<unknown> = Promise.resolve();
    let outputs: Promise<Float32Array>[] = chunks.map(([c0, c1]) => {
      const out = previousInput.then(() => input(c0, c1));
      previousInput = out.catch(() => undefined);
      return out;
    });
    for (const { engine, sub } of stages) {
      // Chunk c is handed to the stage after chunk c − 1 was (positions in order), not after it came back.
      let previousCall: Promise<unknown> = Promise.resolve();
      outputs = outputs.map((inputChunk, ci) => {
        const [c0, c1] = chunks[ci]!;
        let called!: () => void;
        const calledNow = new Promise<void>((r) => { called = r; });
        const out = Promise.all([inputChunk, previousCall]).then(([h]) => {
          // Every stage's rows are checked before the next stage (and its cache) gets them.
          const run = this.timed(engine, c1 - c0, () => engine.runLayers(sub, start + c0, h).then((out) => this.finite(engine, out, sub, start + c0)));
          called();
          return run;
        });
        out.catch(() => called());
        previousCall = calledNow;
        return out;
      });
    }
    // Settle everything before reporting, so no stage is still writing when the caller recovers.
    const settled = await Promise.allSettled([...outputs, this.settleCuts()]);
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const values = settled.slice(0, chunks.length).map((r) => (r as PromiseFulfilledResult<Float32Array>).value);
    if (chunks.length === 1) return values[0]!;
    const out = new Float32Array(n * H);
    values.forEach((v, ci) => out.set(v, chunks[ci]![0] * H));
    return out;
  }

  async dispose(): Promise<void> {
    this.prepared = null;
    await Promise.allSettled([...this.cuts.splice(0), ...this.engines().map((e) => e.dispose())]);
  }
}
