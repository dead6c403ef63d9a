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
// Speculative decoding (opts.speculate, docs/room-speed.md): a decode step may instead feed the last
// token and a drafter's guesses in one pass and emit every token the model agrees with, plus its own next
// one; the tokens are those plain decoding gives (same seed), and the cache ends as plain decoding's.

import { runTokens, scoreRows, type LayerEngine, type SamplingOptions } from './engine-types.ts';
import type { FinishReason, GenerateOptions, GenerationResult, GenerationStats, TokenGenerator } from './generate-types.ts';
import { EngineUsageError, SamplingError } from './engine-errors.ts';
import { tokenSeed } from './sampler.ts';
import { pickRow } from './speculative/accept.ts';
import { sameConstraint, speculationOff } from './speculative/checks.ts';
import { speculativePass, type PassResult } from './speculative/pass.ts';
import { DEFAULT_MAX_DRAFT } from './speculative/types.ts';

export interface GeneratorOptions {
  ctx: number;                 // context capacity in tokens (prompt + answer); ≤ the engine's KV capacity
  ckpt?: number;               // answer checkpoints kept (default 4); 0 = no checkpoints, pinned included
  prefillChunk?: number;       // tokens per prefill call into the engine (default 512)
}

const DEFAULT_CKPT = 4;
const DEFAULT_PREFILL_CHUNK = 512;
/** A CPU engine computes on the caller's thread: the loop lets the page run (paint, Stop) this often. */
const YIELD_EVERY_MS = 50;

/**
 * One turn of the event loop: a message to ourselves is a task of its own, so input, timers and
 * painting get their turn before it (setTimeout would add its 4 ms clamp; scheduler.yield() runs
 * ahead of them and starves them).
 */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(null);
  });
}

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

  async generate(prompt: readonly number[], opts: GenerateOptions): Promise<GenerationResult> {
    const t0 = performance.now();
    const sampling: SamplingOptions = opts.sampling ?? { temperature: 0 };
    const seed = sampling.seed ?? (sampling.temperature > 0 ? (Math.random() * 2 ** 32) >>> 0 : 0);
    const ids: number[] = [];
    const stats: GenerationStats = {
      promptTokens: prompt.length, promptComputed: 0, promptReused: 0, generated: 0, prefillSeconds: 0,
      decodeSeconds: 0, prefillTokensPerSecond: 0, decodeTokensPerSecond: 0, seconds: 0, seed,
    };
    const spec = opts.speculate;
    const off = spec ? speculationOff(this.engine, opts) : null;
    if (spec) Object.assign(stats, { drafted: 0, accepted: 0, passes: 0, drafter: spec.drafter.name }, off ? { speculationOff: off } : {});
    const maxDraft = spec && !off ? Math.max(0, Math.floor(spec.maxDraft ?? DEFAULT_MAX_DRAFT)) : 0;
    let tFirst: number | undefined;
    let decodeSteps = 0;
    // An engine that samples ahead (a split room) speculates in passes from the first token on: a plain
    // step would start the host's share of the next token, which the pass after it drops.
    let inPasses = false;
    let feeding: number | undefined;                // the token decodeToken is feeding, while it runs
    let yieldedAt = t0;
    const letThePageRun = async () => {
      if (performance.now() - yieldedAt < YIELD_EVERY_MS) return;
      await yieldToEventLoop();
      yieldedAt = performance.now();
    };
    const finish = (reason: FinishReason, extra: Partial<GenerationResult> = {}): GenerationResult => {
      const now = performance.now();
      stats.generated = ids.length;
      stats.seconds = (now - t0) / 1000;
      stats.prefillSeconds = ((tFirst ?? now) - t0) / 1000;
      stats.decodeSeconds = tFirst === undefined ? 0 : (now - tFirst) / 1000;
      stats.prefillTokensPerSecond = stats.prefillSeconds > 0 ? stats.promptComputed / stats.prefillSeconds : 0;
      stats.decodeTokensPerSecond = stats.decodeSeconds > 0 ? decodeSteps / stats.decodeSeconds : 0;
      return { ids, finish: reason, stats, ...extra };
    };

    if (this.busy) return finish('error', { error: new EngineUsageError('generate is already running on this Generator') });
    try {
      checkPrompt(prompt, opts);
    } catch (e) {
      return finish('error', { error: e as Error });              // bad arguments: the cache is untouched
    }
    this.busy = true;
    let inEngine = false;                           // true while the engine may be changing its cache
    const engineCall = async <T>(work: () => Promise<T>): Promise<T> => {
      inEngine = true;
      const result = await work();
      inEngine = false;
      return result;
    };
    try {
      if (prompt.length >= this.ctx) return finish('context');
      const stopTokens = new Set(opts.stopTokens ?? []);

      // 1. Reuse: truncate to the best reusable prefix, then compute the rest in chunks.
      const reuse = await engineCall(() => this.restorePrefix(prompt));
      stats.promptReused = reuse;
      if (opts.pinAt !== undefined) this.pinRequest = opts.pinAt;
      const pinAt = this.pinRequest;
      if (pinAt !== undefined && this.ckpt > 0 && pinAt === reuse) await engineCall(() => this.keep(pinAt));
      if (pinAt !== undefined && this.ckpt > 0 && pinAt <= reuse && this.restorable(pinAt)) this.pinned = pinAt;
      let hidden = reuse === prompt.length ? this.answerHidden.get(reuse) : undefined;
      for (let at = reuse; at < prompt.length;) {
        opts.onPrefill?.(at, prompt.length);
        if (opts.signal?.aborted) return finish('stopped');
        const end = this.chunkEnd(at, prompt.length, pinAt);
        hidden = await engineCall(() => this.forward(prompt.slice(at, end), at));
        stats.promptComputed += end - at;
        if (pinAt === end && this.ckpt > 0) {
          await engineCall(() => this.keep(end));
          this.pinned = end;
        }
        at = end;
        await letThePageRun();
      }
      opts.onPrefill?.(prompt.length, prompt.length);
      if (!hidden) throw new EngineUsageError('internal: the prompt produced no hidden state');
      await engineCall(async () => {
        await this.addAnswerCheckpoint(prompt.length, hidden!);
        await this.releaseUnused();
      });
      if (opts.maxNewTokens <= 0) return finish('cap');

      // 2. Decode: the first token is sampled from the prompt's last hidden row; each later step comes from
      //    decodeToken, which feeds the previous token and samples the next (how is the engine's choice),
      //    or from a speculative pass, which feeds it with drafted tokens and may give several.
      for (;;) {
        if (opts.signal?.aborted) {
          if (this.engine.kvLength() > this.tokens.length || !this.engine.recurrent) await engineCall(() => this.engine.truncate(this.tokens.length));
          return finish('stopped');
        }
        const position = prompt.length + ids.length;   // where the next token will sit
        const constraint = opts.constraint?.(ids) ?? undefined;
        const tokenOpts = { ...sampling, seed: tokenSeed(seed, position) };
        const previous = ids[ids.length - 1];
        let picks: number[];
        let pass: PassResult | null = null;
        if (previous === undefined && maxDraft > 0 && this.engine.samplesAhead === true) {
          // A split room about to speculate: pick the first token as a pass's row 0 (the head alone),
          // not with sample(), whose share of the next token run ahead the first pass would drop.
          const [row] = await scoreRows(this.engine, hidden, [constraint ? { opts: tokenOpts, constraint } : { opts: tokenOpts }]);
          picks = [pickRow(row!, tokenOpts, constraint)];
          inPasses = true;
        } else if (previous === undefined) {
          picks = [await this.engine.sample(hidden, tokenOpts, constraint)];
        } else {
          const room = Math.min(maxDraft, opts.maxNewTokens - ids.length - 1, this.ctx - position - 1);
          if (room > 0 || inPasses) {
            pass = await engineCall(() => speculativePass({
              engine: this.engine, drafter: spec!.drafter, context: [...prompt, ...ids], answer: ids, maxDraft: Math.max(0, room), sampling, seed,
              stopTokens, constraint: opts.constraint, first: constraint, signal: opts.signal, whenEmpty: inPasses,
            }));
            inPasses ||= pass !== null && this.engine.samplesAhead === true;
          }
          if (pass) {
            stats.drafted! += pass.drafted;
            stats.accepted! += pass.kept;
            picks = pass.picks;
          } else {
            feeding = previous;
            picks = [await engineCall(() => this.engine.decodeToken(previous, tokenOpts, constraint))];
            feeding = undefined;
          }
          if (spec) stats.passes!++;
        }
        tFirst ??= performance.now();
        // Emit the picks in order. Pick j was made after row j's token (the one fed, then the kept drafted
        // ones): those rows of the picks used stay cached, as plain decoding would have cached them.
        let used = 0;
        let end: FinishReason | null = null;
        let stopToken: number | undefined;
        try {
          for (const [j, id] of picks.entries()) {
            if (j > 0) {
              const real = opts.constraint?.(ids) ?? undefined;
              if (!sameConstraint(real, pass!.constraints[j])) break;  // the grammar moved otherwise: pick again next step
              if (pass!.overruled[j]) real?.overruled?.();
            }
            used++;
            if (stopTokens.has(id)) { end = 'stop'; stopToken = id; break; }
            ids.push(id);
            opts.onToken?.(id, ids);
            if (ids.length >= opts.maxNewTokens) { end = 'cap'; break; }
            if (prompt.length + ids.length >= this.ctx) { end = 'context'; break; }
          }
        } finally {
          if (previous !== undefined) {
            this.tokens.push(previous, ...picks.slice(0, Math.max(0, used - 1)));
            decodeSteps += used;
          }
        }
        // Past what the cache should hold: rejected drafts, or work an engine did ahead (a split room's
        // host runs its layers on each token it picks); an answer that ends leaves the cache exact.
        if (this.engine.kvLength() > this.tokens.length || (end && !this.engine.recurrent)) await engineCall(() => this.engine.truncate(this.tokens.length));
        if (end === 'stop') return finish('stop', { stopToken: stopToken! });
        if (end) return finish(end);
        await letThePageRun();
      }
    } catch (e) {
      // The engine failed part-way: which K/V it holds is unknown, so start from an empty cache. Failures
      // between engine calls (the caller's callbacks) and sampling failures (a constraint allowing no
      // token: the layers ran, only the pick failed) leave the cache consistent and kept.
      if (inEngine && !(isSamplingError(e) && this.consistentAfterSampling(feeding))) await this.resetAfterFailure();
      return finish('error', { error: e instanceof Error ? e : new Error(String(e)) });
    } finally {
      this.busy = false;
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
   * After decodeToken failed in sampling, the engine holds the cache with or without the token it was
   * feeding (engines count it before or after the pick): adopt whichever its length says. False when the
   * length fits neither (then the caller resets).
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
