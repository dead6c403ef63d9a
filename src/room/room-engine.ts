// The whole room as ONE LayerEngine over layers [0, L), so the Generator (and the agent above it) sees a
// single engine: embedding, head and sampling on the host's engine; layers on the stages (the host's
// own engine and RemoteLayerEngines), in order. runLayers on n tokens is pipelined in micro-chunks: chunk
// c goes to stage s as soon as stage s−1 finished it and stage s finished chunk c−1, so with k devices
// up to k chunks are computed at once (a wavefront). Decode (n = 1) is one chunk.
import { decodeInSteps, type LayerEngine, type LayerRange, type SamplingOptions, type TokenConstraint } from '../model/engine-types.ts';
import { EngineUsageError, PipelineError } from '../model/engine-errors.ts';

export interface RoomEngineOptions {
  numLayers: number;
  hiddenSize: number;
  /** Tokens per pipelined micro-chunk during prefill; 0 = no pipelining (whole batch per stage). */
  microChunk?: number;
}

export class RoomEngine implements LayerEngine {
  readonly range: LayerRange;
  readonly hasEmbedding = true;
  readonly hasHead = true;
  readonly recurrent: boolean;
  microChunk: number;
  private readonly hiddenSize: number;

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
    this.microChunk = opts.microChunk ?? 16;
  }

  /** Layer work each engine did since this deal (seconds include the network for remote engines). */
  private readonly work = new Map<LayerEngine, { tokens: number; seconds: number }>();

  /** Tokens per second an engine ran its layers at, as seen from the host (0 before any work). */
  speedOf(engine: LayerEngine | null | undefined): number {
    const w = engine ? this.work.get(engine) : undefined;
    return w && w.seconds > 0 ? w.tokens / w.seconds : 0;
  }

  private async timed<T>(engine: LayerEngine, tokens: number, run: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    const result = await run();
    const w = this.work.get(engine) ?? { tokens: 0, seconds: 0 };
    w.tokens += tokens;
    w.seconds += (performance.now() - t0) / 1000;
    this.work.set(engine, w);
    return result;
  }

  private engines(): LayerEngine[] { return [...new Set([this.host, ...this.stages])]; }

  kvLength(): number {
    return this.stages.length === 0 ? this.host.kvLength() : Math.min(...this.stages.map((s) => s.kvLength()));
  }

  async truncate(length: number): Promise<void> {
    await Promise.all(this.engines().map((e) => (e.kvLength() > length ? e.truncate(length) : undefined)));
  }

  /** Every device holding recurrent layers pins its state at `position` (each keeps its own layers'). */
  async snapshot(position: number): Promise<void> {
    await Promise.all(this.engines().filter((e) => e.recurrent).map((e) => e.snapshot(position)));
  }

  async releaseSnapshot(position: number): Promise<void> {
    await Promise.all(this.engines().filter((e) => e.recurrent).map((e) => e.releaseSnapshot(position)));
  }

  embed(ids: number[]): Promise<Float32Array> { return this.host.embed(ids); }
  logits(hidden: Float32Array): Promise<Float32Array> { return this.host.logits(hidden); }
  sample(hidden: Float32Array, opts: SamplingOptions, constraint?: TokenConstraint): Promise<number> {
    return this.host.sample(hidden, opts, constraint);
  }

  /**
   * One decode token: feed `id` at kvLength() and sample the next, as embed + runLayers + sample would.
   * A room of one whose engine can fuse (WebGPU) does it in that engine's single call: one GPU submit and
   * one read-back instead of three (each a submit that waits for its work, and a worker message).
   */
  async decodeToken(id: number, opts: SamplingOptions, constraint?: TokenConstraint): Promise<number> {
    const [only] = this.stages;
    const alone = this.stages.length === 1 && only === this.host && only.range[0] === 0 && only.range[1] === this.range[1];
    if (alone) return this.timed(this.host, 1, () => this.host.decodeToken(id, opts, constraint));
    return decodeInSteps(this, id, opts, constraint);
  }

  async runLayers(range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array> {
    const H = this.hiddenSize;
    if (hidden.length % H !== 0) throw new EngineUsageError(`runLayers: hidden has ${hidden.length} values, not a whole number of rows of ${H}`);
    const n = hidden.length / H;
    const stages = this.stages
      .map((s) => ({ engine: s, sub: [Math.max(s.range[0], range[0]), Math.min(s.range[1], range[1])] as LayerRange }))
      .filter((s) => s.sub[1] > s.sub[0]);
    const m = this.microChunk > 0 ? this.microChunk : n;
    const chunks: [number, number][] = [];
    for (let c0 = 0; c0 < n; c0 += m) chunks.push([c0, Math.min(n, c0 + m)]);

    let outputs: Promise<Float32Array>[] = chunks.map(([c0, c1]) => Promise.resolve(hidden.subarray(c0 * H, c1 * H)));
    for (const { engine, sub } of stages) {
      let previous: Promise<unknown> = Promise.resolve();
      outputs = outputs.map((input, ci) => {
        const [c0, c1] = chunks[ci]!;
        const out = Promise.all([input, previous]).then(([h]) => this.timed(engine, c1 - c0, () => engine.runLayers(sub, start + c0, h)));
        previous = out;
        return out;
      });
    }
    // Settle everything before reporting, so no stage is still writing when the caller recovers.
    const settled = await Promise.allSettled(outputs);
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    if (chunks.length === 1) return (settled[0] as PromiseFulfilledResult<Float32Array>).value;
    const out = new Float32Array(n * H);
    settled.forEach((r, ci) => out.set((r as PromiseFulfilledResult<Float32Array>).value, chunks[ci]![0] * H));
    return out;
  }

  async dispose(): Promise<void> {
    await Promise.allSettled(this.engines().map((e) => e.dispose()));
  }
}
