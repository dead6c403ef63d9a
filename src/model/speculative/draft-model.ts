// A small draft model on the host (Qwen3-0.6B for a split Qwen3-8B or 30B-A3B): a second LayerEngine
// holding the whole small model, with its own KV cache, guesses the next k tokens one by one; the room
// then checks them in one pass. The draft must share the target's tokenizer (vocabulary.ts).
//
// Its cache follows the target's context incrementally: each draft feeds only the tokens it has not seen
// (usually the tokens the last pass kept, one to k + 1 of them). When the context is not an extension of
// what it holds (a rejected draft, a rewritten conversation) it truncates to the common prefix first, as
// the Generator does when it restores a checkpoint; a dense model can be cut back anywhere, so there are
// no checkpoints to keep. It keeps the KV of the tokens it drafted but the last: when the pass keeps
// them, the next draft starts from there.
//
// Greedy target: each drafted token is the draft's argmax (deterministic, no q). Sampling target: each is
// sampled from the draft's own distribution under the target's sampling options (temperature, top-k,
// top-p) and the grammar's mask, with a random number of its own, and q records that distribution, so the
// pass's standard rule min(1, p/q) keeps the output distribution the target's.
//
// How many it drafts (draftLength): by default 'auto', chosen per call from what the drafter measures —
// how often its drafts were kept and how long a drafted token takes against the pass it waits for
// (draft-length.ts); or a fixed number. Either way at most the request's max: the length changes only
// how many tokens are proposed, never which tokens the answer has (greedy), nor its distribution (sampled).
// A seed pins a sampled answer only for a fixed length: which positions are checked rows and which a
// pass's own pick moves with k, and auto's k follows measured time.
import { rowOf, runTokens, type LayerEngine, type RowCandidates, type RowSampling, type SamplingOptions } from '../engine-types.ts';
import { EngineUsageError, SamplingError } from '../engine-errors.ts';
import { isGreedy, pickFromSorted, pickRow, Prng, tokenSeed } from '../sampler.ts';
import { rowDistribution } from './accept.ts';
import { DraftLengthChooser, type DraftEstimate } from './draft-length.ts';
import type { Draft, DraftDistribution, Drafter, DraftRequest } from './types.ts';
import { checkSameVocabulary, type Vocabulary } from './vocabulary.ts';

export interface DraftModelOptions {
  /** The draft engine's KV capacity in tokens (what it was created with): longer contexts draft fewer tokens, or none. */
  ctx: number;
  /** Both models' vocabularies: a draft whose vocabulary differs is refused with DraftVocabularyError. */
  vocabulary: { target: Vocabulary; draft: Vocabulary };
  /** What stats and logs show after "draft:" (default "model"). */
  label?: string;
  /** Tokens per forward call while the draft catches up with a new context (default 512). */
  prefillChunk?: number;
  /** Tokens drafted per call: 'auto' (default) chooses from measured agreement and time; a number fixes it. Capped by the request's max. */
  draftLength?: number | 'auto';
  /** The clock the drafter times itself and the passes with, in ms (default performance.now; the bench's modelled devices bring a virtual one). */
  now?: () => number;
}

const GREEDY: SamplingOptions = { temperature: 0 };
/** Salt of the draft's random stream: apart from plain sampling's (tokenSeed) and the accept rule's (accept.ts). */
const DRAFT_STREAM = 0x27d4eb2f;

/** The uniform number the draft samples its token at `position` with. */
export function draftUniform(seed: number, position: number): number {
  return new Prng((tokenSeed(seed, position) ^ DRAFT_STREAM) >>> 0).nextFloat();
}

export class DraftModelDrafter implements Drafter {
  readonly name: string;
  readonly ctx: number;
  /** Set when the draft engine failed: the drafter then drafts nothing (the answer goes on without it). */
  failure: Error | undefined;
  /** Times the cache was cut back because the context left what it held (tests, logs). */
  rewinds = 0;
  /** Tokens fed through the draft model so far (context catch-up and drafted tokens). */
  fed = 0;
  /** 'auto' or the fixed number of tokens drafted per call. */
  readonly draftLength: number | 'auto';
  private readonly prefillChunk: number;
  private readonly lengths: DraftLengthChooser;
  private held: number[] = [];            // ids whose K/V the draft engine holds, positions 0..length-1

  constructor(readonly engine: LayerEngine, opts: DraftModelOptions) {
    if (!engine.hasEmbedding || !engine.hasHead || engine.range[0] !== 0) {
      throw new EngineUsageError(`draft model: the engine must hold the embedding, every layer and the head; it holds layers [${engine.range}]`);
    }
    if (engine.recurrent) throw new EngineUsageError('draft model: its layers must be attention only (a recurrent state cannot be cut back after a rejected draft)');
    if (!(Number.isInteger(opts.ctx) && opts.ctx > 0)) throw new EngineUsageError(`draft model: ctx ${opts.ctx} must be a positive integer`);
    const chunk = opts.prefillChunk ?? 512;
    if (!(Number.isInteger(chunk) && chunk > 0)) throw new EngineUsageError(`draft model: prefillChunk ${chunk} must be a positive integer`);
    const length = opts.draftLength ?? 'auto';
    if (length !== 'auto' && !(Number.isInteger(length) && length > 0)) throw new EngineUsageError(`draft model: draftLength ${length} must be 'auto' or a positive integer`);
    if (opts.now !== undefined && typeof opts.now !== 'function') throw new EngineUsageError('draft model: now must be a function returning ms');
    checkSameVocabulary(opts.vocabulary.target, opts.vocabulary.draft, `draft model ${opts.label ?? ''}`.trim());
    this.name = `draft:${opts.label ?? 'model'}`;
    this.ctx = opts.ctx;
    this.prefillChunk = chunk;
    this.draftLength = length;
    this.lengths = new DraftLengthChooser(opts.now);
  }

  /** What the drafter has measured: agreement, passes observed, the cycle's fixed time and a drafted token's (ms). */
  get estimate(): DraftEstimate {
    return this.lengths.estimate;
  }

  /** Token ids whose K/V the draft engine holds. */
  get cachedTokens(): readonly number[] {
    return this.held;
  }

  /** Forget the cache (the next draft feeds its whole context). */
  async reset(): Promise<void> {
    this.held = [];
    await this.engine.truncate(0);
  }

  async draft(r: DraftRequest): Promise<Draft> {
    const context = r.context;
    this.lengths.begin(context);
    // After drafting k tokens the cache holds the context and k − 1 of them.
    const cap = Math.min(Math.floor(r.max), this.ctx - context.length + 1);
    if (this.failure || !(cap > 0) || context.length === 0 || r.signal?.aborted) {
      this.lengths.abandon();
      return { tokens: [] };
    }
    const max = this.draftLength === 'auto' ? this.lengths.choose(cap) : Math.min(this.draftLength, cap);
    const sampled = !isGreedy(r.sampling);
    const tokens: number[] = [];
    const q: DraftDistribution[] = [];
    let firstAt: number | undefined;
    const result = (): Draft => {
      this.lengths.end(context, tokens, firstAt);
      return sampled ? { tokens, q } : { tokens };
    };
    try {
      let hidden: Float32Array | undefined = await this.catchUp(context, r.signal);   // [H], the context's last row
      if (!hidden) {
        this.lengths.abandon();
        return { tokens: [] };
      }
      for (;;) {
        const position = context.length + tokens.length;
        const mask = r.constraint?.(tokens) ?? undefined;
        let token: number;
        if (isGreedy(r.sampling, mask)) {
          token = pickRow(await this.decode(hidden, tokens, rowOf(GREEDY, mask), true), GREEDY, mask);
          if (sampled) q.push({ ids: [token], probs: [1] });   // a greedy row of a sampled answer (the pass ignores its q)
        } else {
          const opts = { ...r.sampling, seed: tokenSeed(r.seed, position) };
          const row = await this.decode(hidden, tokens, rowOf(opts, mask), false);
          token = pickFromSorted(row.ids, row.logits, opts, draftUniform(r.seed, position));
          q.push(rowDistribution(row, opts, mask));
        }
        hidden = undefined;
        tokens.push(token);
        if (tokens.length === 1) firstAt = this.lengths.now();
        if (tokens.length >= max || r.stopTokens?.has(token) || r.signal?.aborted) return result();
      }
    } catch (e) {
      // A mask the draft model cannot sample under ends this draft (the cache stays consistent: the next
      // catch-up trusts the engine's length). Any other failure turns the draft model off: a draft is
      // only a guess, the answer goes on without it.
      if (isSamplingError(e)) return result();
      this.failure = e instanceof Error ? e : new Error(String(e));
      this.lengths.abandon();
      this.held = [];
      await this.engine.truncate(0).catch(() => undefined);
      return sampled ? { tokens, q } : { tokens };
    }
  }

  /**
   * Make the cache hold context[0, L − 1) plus the last token fed: cut back to the longest common prefix
   * (keeping at least the last token to feed, whose row gives the next token's logits), then feed the rest.
   * Returns that last row [H], or undefined when aborted on the way.
   */
  private async catchUp(context: readonly number[], signal: AbortSignal | undefined): Promise<Float32Array | undefined> {
    if (this.engine.kvLength() !== this.held.length) this.held.length = Math.min(this.held.length, this.engine.kvLength());
    const limit = Math.min(this.held.length, context.length - 1);
    let common = 0;
    while (common < limit && this.held[common] === context[common]) common++;
    if (common < this.held.length) {
      this.rewinds++;
      this.held.length = common;
    }
    if (this.engine.kvLength() !== common) await this.engine.truncate(common);
    let hidden: Float32Array | undefined;
    for (let at = common; at < context.length; at += this.prefillChunk) {
      if (signal?.aborted) return undefined;
      hidden = await this.feed(context.slice(at, Math.min(context.length, at + this.prefillChunk)));
    }
    return hidden;
  }

  /** Feed ids at the end of the cache; returns the last row [H]. */
  private async feed(ids: number[]): Promise<Float32Array> {
    const hidden = await runTokens(this.engine, ids, this.engine.range, this.held.length);
    this.held.push(...ids);
    this.fed += ids.length;
    return hidden.subarray(hidden.length - hidden.length / ids.length);
  }

  /**
   * The candidates of the next draft token: after the context's last row (`hidden`, the first token of a
   * draft) or after feeding the last drafted token (one decode call: the WebGPU engine fuses it). Ahead
   * for greedy picks: the next call feeds the pick (a split draft room starts on it).
   */
  private async decode(hidden: Float32Array | undefined, drafted: readonly number[], row: RowSampling, ahead: boolean): Promise<RowCandidates> {
    const last = drafted[drafted.length - 1]!;
    const [candidates] = await this.engine.decode({ ...(hidden ? { hidden } : { tokens: [last] }), rows: [row], ...(ahead ? { ahead } : {}) });
    if (!hidden) {
      this.held.push(last);
      this.fed++;
    }
    return candidates!;
  }
}

/** SamplingError by class, or by code once it crossed a worker. */
function isSamplingError(e: unknown): boolean {
  return e instanceof SamplingError || (e instanceof Error && (e as Error & { code?: unknown }).code === 'sampling');
}
