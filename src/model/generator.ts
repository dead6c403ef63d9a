// Generator: drives ONE LayerEngine holding the embedding, every layer and the head to turn a prompt into
// tokens. That engine is a device's own (reference or WebGPU) or the room's RoomEngine, which spreads the
// layers over devices; the Generator cannot tell them apart, so one device and a room run the same code.
//
// Prefix reuse and checkpoints. The Generator remembers the tokens whose K/V the engine holds. A new
// prompt reuses the longest cached prefix that ends either at the live end of the cache or at a kept
// checkpoint; the cache is truncated there and only the rest is computed. Checkpoints are positions:
//   - pinned: `pinAt`, the end of the system prompt + tools; never counted, never evicted;
//   - answer checkpoints: the end of each prompt (the start of each answer); the `ckpt` most recent
//     are kept. `ckpt = 0` turns checkpoints off, the pinned one too (only the live end is reused).
// For dense models restoring a checkpoint is a truncation. A hybrid model's recurrent layers cannot be
// cut back, so for an engine that is `recurrent` the Generator has it snapshot their state at every
// checkpoint (prefill breaks at the pin; the answer checkpoint is the prompt's end), releases the
// snapshot of an evicted checkpoint, and reuses only positions with a snapshot: a prompt that leaves the
// cache between two checkpoints goes back to the last one before it and recomputes from there.
//
// Sampling is deterministic for a seed: the token at sequence position p is drawn with
// tokenSeed(seed, p), so cached and fresh runs agree.
//
// Decoding is one loop over a DecodeStrategy (./decode-strategy.ts), each step one engine.decode call:
// plain (feed the last token, pick the next) or speculative (opts.speculate, docs/room-speed.md: feed
// it with a drafter's guesses in one pass and emit every token the model agrees with, plus its own next
// one); the tokens are those plain decoding gives (same seed), and the cache ends as plain decoding's.

import { AnswerRun } from './answer-run.ts';
import { decodeStrategy, type AcceptedTokens, type DecodeStep } from './decode-strategy.ts';
import { runTokens, type LayerEngine } from './engine-types.ts';
import type { FinishReason, GenerateOptions, GenerationResult, TokenGenerator } from './generate-types.ts';
import { EngineUsageError, SamplingError } from './engine-errors.ts';
import { sameConstraint } from './speculative/checks.ts';

export interface GeneratorOptions {
  ctx: number;                 // context capacity in tokens (prompt + answer); ≤ the engine's KV capacity
  ckpt?: number;               // answer checkpoints kept (default 4); 0 = no checkpoints, pinned included
  prefillChunk?: number;       // tokens per prefill call into the engine (default 512)
}

const DEFAULT_CKPT = 4;
const DEFAULT_PREFILL_CHUNK = 512;
export class Generator implements TokenGenerator {
  readonly ctx: number;
  readonly ckpt: number;
  readonly prefillChunk: number;
  private readonly engine: LayerEngine;
  private tokens: number[] = [];           // ids whose K/V the engine holds (positions 0..length-1)
  private answerCheckpoints: number[] = []; // ascending positions, at most `ckpt`
  /** Last prompt row's hidden state [H] at each answer checkpoint: lets the same prompt run again. */
  private answerHidden = new Map<number, Float32Array>();
  private pinned: number | undefined;
  private pinRequest: number | undefined;  // the pin position asked for (by pin() or the last pinAt)
  private readonly snapshots = new Set<number>(); // positions a recurrent engine holds a snapshot for
  private busy = false;

  constructor(engine: LayerEngine, opts: GeneratorOptions) {
    if (!engine.hasEmbedding || !engine.hasHead || engine.range[0] !== 0) {
      throw new EngineUsageError(`Generator: the engine must hold the embedding, every layer and the head; it holds layers [${engine.range}]${engine.hasEmbedding ? '' : ', no embedding'}${engine.hasHead ? '' : ', no head'}`);
    }
    if (!(Number.isInteger(opts.ctx) && opts.ctx > 0)) throw new EngineUsageError(`Generator: ctx ${opts.ctx} must be a positive integer`);
    const ckpt = opts.ckpt ?? DEFAULT_CKPT;
    if (!(Number.isInteger(ckpt) && ckpt >= 0)) throw new EngineUsageError(`Generator: ckpt ${ckpt} must be a whole number >= 0`);
    const chunk = opts.prefillChunk ?? DEFAULT_PREFILL_CHUNK;
    if (!(Number.isInteger(chunk) && chunk > 0)) throw new EngineUsageError(`Generator: prefillChunk ${chunk} must be a positive integer`);
    this.engine = engine;
    this.ctx = opts.ctx;
    this.ckpt = ckpt;
    this.prefillChunk = chunk;
  }

  /** Token ids whose K/V the engine holds. */
  get cachedTokens(): readonly number[] {
    return this.tokens;
  }

  /** Positions where a recurrent engine holds a snapshot (empty for dense engines), ascending. */
  get snapshotPositions(): number[] {
    return [...this.snapshots].sort((a, b) => a - b);
  }

  /** Kept checkpoint positions: the pinned one (if any) and the answer checkpoints, ascending. */
  get checkpoints(): { pinned?: number; answers: readonly number[] } {
    return this.pinned === undefined ? { answers: this.answerCheckpoints } : { pinned: this.pinned, answers: this.answerCheckpoints };
  }

  /**
   * Mark the pinned checkpoint (the end of the system prompt + tools). Kept for later prompts, as a
   * `pinAt` passed to generate is; it takes effect once the cache holds that position. No effect at ckpt = 0.
   */
  pin(position: number): void {
    if (!(Number.isInteger(position) && position >= 0)) throw new EngineUsageError(`pin: ${position} is not a position`);
    this.pinRequest = position;
    if (this.ckpt > 0 && position <= this.tokens.length && this.restorable(position)) this.pinned = position;
  }

  /** Can the engine go back to `position`? Always for dense engines; with a snapshot (or at 0) for recurrent ones. */
  private restorable(position: number): boolean {
    return !this.engine.recurrent || position === 0 || this.snapshots.has(position);
  }

  /** Checkpoint the engine at `position` (its current length): a snapshot for a recurrent engine. */
  private async keep(position: number): Promise<void> {
    if (!this.engine.recurrent || position === 0 || this.snapshots.has(position)) return;
    await this.engine.snapshot(position);
    this.snapshots.add(position);
  }

  /** Free the snapshots no checkpoint uses any more (an evicted answer checkpoint, a moved pin). */
  private async releaseUnused(): Promise<void> {
    for (const position of [...this.snapshots]) {
      if (position === this.pinned || this.answerCheckpoints.includes(position)) continue;
      this.snapshots.delete(position);
      await this.engine.releaseSnapshot(position);
    }
  }

  /** Forget everything cached (truncates the engine to 0). */
  async reset(): Promise<void> {
    this.forget(0);
    await this.engine.truncate(0);
  }

  /**
   * llama2.c's generate(): prefill the prompt, then step until an end, each step feeding the last token
   * (none on the first: the token after the prompt's last row) and returning the tokens it accepted.
   */
  async generate(prompt: readonly number[], opts: GenerateOptions): Promise<GenerationResult> {
    const run = new AnswerRun(prompt, opts);
    const { strategy, off } = decodeStrategy(this.engine, opts, run.sampling, run.seed);
    if (opts.speculate) run.speculating(opts.speculate.drafter.name, off);
    if (this.busy) return run.fail(new EngineUsageError('generate is already running on this Generator'));
    try {
      checkPrompt(prompt, opts);
    } catch (e) {
      return run.fail(e);                                      // bad arguments: the cache is untouched
    }
    this.busy = true;
    try {
      if (prompt.length >= this.ctx) return run.finish('context');
      const hidden = await this.guarded(() => this.prefill(prompt, opts, run));
      if (!hidden) return run.finish('stopped');
      if (opts.maxNewTokens <= 0) return run.finish('cap');
      const { ids } = run;
      for (;;) {
        if (opts.signal?.aborted) {
          if (this.engine.kvLength() > this.tokens.length || !this.engine.recurrent) await this.guarded(() => this.engine.truncate(this.tokens.length));
          return run.finish('stopped');
        }
        const previous = ids.at(-1);
        const s: DecodeStep = {
          previous, hidden, context: [...prompt, ...ids], answer: ids, first: opts.constraint?.(ids) ?? undefined,
          room: Math.min(opts.maxNewTokens - ids.length - 1, this.ctx - prompt.length - ids.length - 1),
        };
        // The first pick runs the head alone on the prompt's row: the cache stays as prefill left it.
        const step = previous === undefined ? await strategy.step(s) : await this.guarded(() => strategy.step(s), previous);
        run.stepped(step, previous !== undefined);
        const end = this.emit(step, previous, prompt, opts, run);
        // Past what the cache should hold: rejected drafts, or work an engine did ahead (a split room's
        // host runs its layers on each token it picks); an answer that ends leaves the cache exact.
        if (this.engine.kvLength() > this.tokens.length || (end && !this.engine.recurrent)) await this.guarded(() => this.engine.truncate(this.tokens.length));
        if (end) return run.finish(end.reason, end.stopToken === undefined ? {} : { stopToken: end.stopToken });
        await run.letThePageRun();
      }
    } catch (e) {
      return run.fail(e);
    } finally {
      this.busy = false;
    }
  }

  /**
   * Reuse the longest cached prefix, compute the rest of the prompt in chunks (breaking at the pin), keep
   * the checkpoints. Returns the prompt's last hidden row [H], or null when stopped between chunks.
   */
  private async prefill(prompt: readonly number[], opts: GenerateOptions, run: AnswerRun): Promise<Float32Array | null> {
    const reuse = await this.restorePrefix(prompt);
    run.stats.promptReused = reuse;
    if (opts.pinAt !== undefined) this.pinRequest = opts.pinAt;
    const pinAt = this.pinRequest;
    if (pinAt !== undefined && this.ckpt > 0 && pinAt === reuse) await this.keep(pinAt);
    if (pinAt !== undefined && this.ckpt > 0 && pinAt <= reuse && this.restorable(pinAt)) this.pinned = pinAt;
    let hidden = reuse === prompt.length ? this.answerHidden.get(reuse) : undefined;
    for (let at = reuse; at < prompt.length;) {
      opts.onPrefill?.(at, prompt.length);
      if (opts.signal?.aborted) return null;
      const end = this.chunkEnd(at, prompt.length, pinAt);
      hidden = await this.forward(prompt.slice(at, end), at);
      run.stats.promptComputed += end - at;
      if (pinAt === end && this.ckpt > 0) {
        await this.keep(end);
        this.pinned = end;
      }
      at = end;
      await run.letThePageRun();
    }
    opts.onPrefill?.(prompt.length, prompt.length);
    if (!hidden) throw new EngineUsageError('internal: the prompt produced no hidden state');
    await this.addAnswerCheckpoint(prompt.length, hidden);
    await this.releaseUnused();
    return hidden;
  }

  /**
   * Emit a step's picks in order, until an end. Pick j was made after row j's token (the one fed, then the
   * kept drafted ones): those rows of the picks used stay cached, as plain decoding would have cached them.
   */
  private emit(step: AcceptedTokens, previous: number | undefined, prompt: readonly number[], opts: GenerateOptions, run: AnswerRun): { reason: FinishReason; stopToken?: number } | null {
    const { ids } = run;
    let used = 0;
    try {
      for (const [j, id] of step.picks.entries()) {
        if (j > 0) {
          const real = opts.constraint?.(ids) ?? undefined;
          if (!sameConstraint(real, step.constraints[j])) break;   // the grammar moved otherwise: pick again next step
          if (step.overruled[j]) real?.overruled?.();
        }
        used++;
        if (opts.stopTokens?.includes(id)) return { reason: 'stop-token', stopToken: id };
        ids.push(id);
        opts.onToken?.(id, ids);
        if (ids.length >= opts.maxNewTokens) return { reason: 'cap' };
        if (prompt.length + ids.length >= this.ctx) return { reason: 'context' };
      }
      return null;
    } finally {
      if (previous !== undefined) {
        this.tokens.push(previous, ...step.picks.slice(0, Math.max(0, used - 1)));
        run.decoded(used);
      }
    }
  }

  /**
   * Engine work. When it fails part-way, which K/V the engine holds is unknown, so the cache starts empty
   * again: unless only a pick failed (a SamplingError, a constraint allowing no token; the layers ran) and
   * the engine's length says it holds the cache with or without `fed`, the token being fed, which is then
   * adopted. Failures between engine calls (the caller's callbacks) never come here: the cache is kept.
   */
  private async guarded<T>(work: () => Promise<T>, fed?: number): Promise<T> {
    try {
      return await work();
    } catch (e) {
      if (!(isSamplingError(e) && this.consistentAfterSampling(fed))) await this.resetAfterFailure();
      throw e;
    }
  }

  /** Embed `ids` at positions [start, start+n) and run every layer; returns the last row [H]. */
  private async forward(ids: number[], start: number): Promise<Float32Array> {
    const hidden = await runTokens(this.engine, ids, this.engine.range, start);                        // [n, H]
    this.tokens.push(...ids);
    const H = hidden.length / ids.length;
    return hidden.subarray(hidden.length - H);                          // [H]
  }

  /**
   * Choose and restore the reusable prefix of `prompt`: the live end when the prompt extends the cache,
   * else the latest kept checkpoint inside the common prefix, else 0. The whole prompt is reused only at
   * an answer checkpoint that kept its last hidden row (the same prompt again); otherwise at least the
   * last prompt token is computed (its hidden state gives the first logits). Returns the tokens reused.
   */
  private async restorePrefix(prompt: readonly number[]): Promise<number> {
    const live = this.engine.kvLength();
    if (live < this.tokens.length) this.forget(live);                   // the engine lost entries: trust it
    let common = 0;
    while (common < this.tokens.length && common < prompt.length && this.tokens[common] === prompt[common]) common++;
    const limit = this.answerHidden.has(prompt.length) ? prompt.length : prompt.length - 1;
    let reuse: number;
    if (common === this.tokens.length && common <= limit) {
      reuse = common;
    } else {
      // The latest kept checkpoint inside the common prefix (all restorable: the Generator keeps only those).
      const kept = [...this.answerCheckpoints, ...(this.pinned === undefined ? [] : [this.pinned])].filter((c) => this.restorable(c));
      reuse = Math.max(0, ...kept.filter((c) => c <= Math.min(common, limit)));
    }
    this.forget(reuse);
    if (this.engine.kvLength() !== reuse) await this.engine.truncate(reuse);
    return reuse;
  }

  /** Drop cached tokens and checkpoints past `length` (the engine drops its snapshots past it on truncate). */
  private forget(length: number): void {
    this.tokens.length = Math.min(this.tokens.length, length);
    this.answerCheckpoints = this.answerCheckpoints.filter((c) => c <= length);
    if (this.pinned !== undefined && this.pinned > length) this.pinned = undefined;
    for (const position of this.answerHidden.keys()) if (!this.answerCheckpoints.includes(position)) this.answerHidden.delete(position);
    for (const position of this.snapshots) if (position > length) this.snapshots.delete(position);
  }

  private async addAnswerCheckpoint(position: number, hidden: Float32Array): Promise<void> {
    if (this.ckpt === 0) return;
    await this.keep(position);
    if (!this.answerCheckpoints.includes(position)) this.answerCheckpoints.push(position);
    this.answerHidden.set(position, hidden.slice());
    this.answerCheckpoints.sort((a, b) => a - b);
    while (this.answerCheckpoints.length > this.ckpt) this.answerHidden.delete(this.answerCheckpoints.shift()!);
  }

  /** End of the prefill chunk starting at `at`: at most prefillChunk tokens, breaking at the pin. */
  private chunkEnd(at: number, end: number, pinAt: number | undefined): number {
    let next = Math.min(end, at + this.prefillChunk);
    if (pinAt !== undefined && this.ckpt > 0 && at < pinAt && pinAt < next) next = pinAt;
    return next;
  }

  /**
   * After a step failed in sampling, the engine holds the cache with or without the token it was feeding
   * (engines count it before or after the pick): adopt whichever its length says. False when the length
   * fits neither (then the caller resets).
   */
  private consistentAfterSampling(feeding: number | undefined): boolean {
    const kv = this.engine.kvLength();
    if (feeding !== undefined && kv === this.tokens.length + 1) this.tokens.push(feeding);
    return kv === this.tokens.length;
  }

  private async resetAfterFailure(): Promise<void> {
    this.forget(0);
    await this.engine.truncate(0).catch(() => undefined);
  }
}

function checkPrompt(prompt: readonly number[], opts: GenerateOptions): void {
  if (prompt.length === 0) throw new EngineUsageError('generate: the prompt is empty (at least one token is needed)');
  if (!prompt.every((id) => Number.isInteger(id) && id >= 0)) throw new EngineUsageError('generate: the prompt holds an id that is not a token id');
  if (!Number.isInteger(opts.maxNewTokens)) throw new EngineUsageError(`generate: maxNewTokens ${opts.maxNewTokens} is not a whole number`);
  if (opts.pinAt !== undefined && !(Number.isInteger(opts.pinAt) && opts.pinAt >= 0)) throw new EngineUsageError(`generate: pinAt ${opts.pinAt} is not a position`);
}

/** SamplingError by class, or by code once it crossed a worker or a peer. */
function isSamplingError(e: unknown): boolean {
  return e instanceof SamplingError || (e instanceof Error && (e as Error & { code?: unknown }).code === 'sampling');
}
