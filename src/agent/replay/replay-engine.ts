// The replay model: a scripted LayerEngine under the real Generator and EngineBackend, for tests, the
// headless CLI and `?agent=replay`. It holds no weights: its hidden state is one number per token and its
// "sampling" is the script (script.ts), so prefix reuse, checkpoints, streaming, the grammar, stop tokens
// and every finish reason are the real ones. decode() on the prompt's row begins the next scripted reply
// (the Generator asks once per answer, for the first token); decode() of a fed token continues the reply.
import type { ChatTemplate } from '../../model/chat-template.ts';
import { ContextFullError, EngineUsageError, PositionError, SamplingError } from '../../model/engine-errors.ts';
import { checkDecode, type DecodeRequest, type LayerEngine, type LayerRange, type RowCandidates, type TokenConstraint } from '../../model/engine-types.ts';
import { Generator } from '../../model/generator.ts';
import type { Tokenizer } from '../../model/tokenizer.ts';
import { EngineBackend } from '../engine-backend.ts';
import { ReplayScriptError, ScriptCursor } from './script.ts';

export interface ReplayOptions {
  tokenizer: Tokenizer;
  template: ChatTemplate;
  replies: string[];
  contextSize?: number;          // default 8192
  name?: string;                 // default "replay"
  devices?: number;              // default 1
  ckpt?: number;                 // answer checkpoints the Generator keeps (its default when absent)
  /** Say "scripted model" in the request summary instead of a speed and devices (the app's demo). */
  scripted?: boolean;
  /** Wait this long per token (lets UI tests watch a reply stream in). Default 0. */
  tokenDelayMs?: number;
}

export class ReplayEngine implements LayerEngine {
  readonly range: LayerRange = [0, 1];        // one pretend layer
  readonly hasEmbedding = true;
  readonly hasHead = true;
  readonly recurrent = false;
  private kv = 0;
  private nextReply = 0;
  private reply: ScriptCursor | null = null;
  private fed = 0;

  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly replies: readonly string[],
    readonly ctx: number,
    private readonly tokenDelayMs = 0,
  ) {}

  /**
   * From the script's first reply again (the app's demo calls this at each request, so every request
   * replays the whole script, also after a Stop cut one short). The cache is untouched: it is the
   * conversation's, not the script's.
   */
  restart(): void {
    this.nextReply = 0;
    this.reply = null;
  }

  /** Scripted replies not yet begun. */
  get repliesLeft(): number { return this.replies.length - this.nextReply; }

  kvLength(): number { return this.kv; }
  async truncate(length: number): Promise<void> { this.kv = Math.min(this.kv, length); }
  async snapshot(): Promise<void> { /* no recurrent state */ }
  async releaseSnapshot(): Promise<void> { /* no recurrent state */ }
  async embed(ids: number[]): Promise<Float32Array> { return new Float32Array(ids.length); }   // [n, 1]

  async runLayers(_range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array> {
    if (start !== this.kv) throw new PositionError(`replay: position ${start} does not continue the cache of ${this.kv}`);
    if (start + hidden.length > this.ctx) throw new ContextFullError(`replay: ${start} + ${hidden.length} tokens exceed the context of ${this.ctx}`);
    this.kv += hidden.length;
    return hidden.slice();
  }

  /**
   * The prompt's row (`hidden`) begins the next scripted reply (the Generator asks once per answer, for
   * the first token); a fed token continues it. The one candidate is the script's token.
   */
  async decode(request: DecodeRequest): Promise<RowCandidates[]> {
    if (checkDecode(request, 1, { range: this.range, hasEmbedding: true, hasHead: true, numLayers: 1 }).n !== 1) throw new EngineUsageError('replay: one row at a time (a script cannot be checked in passes)');
    const constraint = request.rows[0]!.constraint;
    if (request.hidden) return [this.candidate(this.begin(constraint))];
    await this.runLayers(this.range, this.kv, new Float32Array(1));
    if (this.tokenDelayMs > 0) await sleep(this.tokenDelayMs);
    else if (++this.fed % 32 === 0) await sleep(0);  // let timers (Stop buttons, aborts) run
    return [this.candidate(this.pick(constraint))];
  }

  private begin(constraint: TokenConstraint | undefined): number {
    if (this.nextReply >= this.replies.length) {
      throw new ReplayScriptError(`replay script exhausted: all ${this.replies.length} replies were used`);
    }
    this.reply = new ScriptCursor(this.replies[this.nextReply++]!, this.tokenizer, this.tokenizer.special.imEnd);
    this.fed = 0;
    return this.pick(constraint);
  }

  private candidate(id: number): RowCandidates {
    return { ids: [id], logits: [0] };
  }

  async dispose(): Promise<void> { this.kv = 0; }

  private pick(constraint: TokenConstraint | undefined): number {
    if (!this.reply) throw new EngineUsageError('replay: a token fed before the prompt\'s row began a reply');
    const id = this.reply.pick(constraint);
    if (id === null) throw new SamplingError('the grammar allows no token at this point');
    return id;
  }
}

/** The agent's Backend over the replay model: EngineBackend + Generator + ReplayEngine. */
export function replayBackend(opts: ReplayOptions): { backend: EngineBackend; engine: ReplayEngine } {
  const contextSize = opts.contextSize ?? 8192;
  const engine = new ReplayEngine(opts.tokenizer, opts.replies, contextSize, opts.tokenDelayMs ?? 0);
  const backend = new EngineBackend({
    generator: new Generator(engine, { ctx: contextSize, ...(opts.ckpt === undefined ? {} : { ckpt: opts.ckpt }) }), tokenizer: opts.tokenizer, template: opts.template,
    contextSize, name: opts.name ?? 'replay', devices: opts.devices ?? 1, ...(opts.scripted ? { runsOn: 'scripted' as const } : {}),
  });
  return { backend, engine };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
