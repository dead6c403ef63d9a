// The agent's Backend over a real model: a TokenGenerator (the model layer's Generator on one device, the
// room's host, or the Generator over a replay script) + the model's own Tokenizer + its chat template.
//   - the request IS the Generator's options (pinned checkpoint, call grammar as `constraint`, abort)
//     and the result IS its GenerationResult (exact token counts in stats, the room's `note`), plus text;
//   - thinking is off (the template appends "<think>\n\n</think>\n\n");
//   - the text streams from exact token bytes (TokenTextStream), never by re-decoding.
import type { SamplingOptions } from '../model/engine-types.ts';
import type { RecoverOutcome, TokenGenerator } from '../model/generate-types.ts';
import type { Tokenizer } from '../model/tokenizer.ts';
import type { ChatTemplate } from '../model/chat-template.ts';
import type { Backend, BackendRequest, BackendResult } from './backend.ts';
import type { ChatMessage, ToolSchema } from '../model/chat-types.ts';

export interface EngineBackendOptions {
  generator: TokenGenerator;
  tokenizer: Tokenizer;
  template: ChatTemplate;
  /** Context the generator was built for (prompt + answer), e.g. 8192; a function when it changes (a room's deal picks it). */
  contextSize: number | (() => number);
  /** Devices the model is spread over (a number, or asked each time: a room changes). Default 1. */
  devices?: number | (() => number);
  name?: string;
  /** The replay model: answers from a script (the summary says "scripted model", no speed or devices). */
  runsOn?: 'scripted';
  /** When a request gives none. Default: Qwen3's non-thinking settings (temperature 0.7, top-p 0.8, top-k 20). Calls are greedy via the grammar. */
  sampling?: SamplingOptions;
}

export const QWEN3_NON_THINKING: SamplingOptions = { temperature: 0.7, topP: 0.8, topK: 20 };

export class EngineBackend implements Backend {
  readonly name: string;
  private readonly opts: EngineBackendOptions;

  /** Present when the generator can recover from a stopped run (a room): the loop re-runs the answer then. */
  readonly recover?: (signal?: AbortSignal) => Promise<RecoverOutcome>;

  constructor(opts: EngineBackendOptions) {
    this.opts = opts;
    this.name = opts.name ?? 'engine';
    const { generator } = opts;
    if (generator.recover) this.recover = (signal) => generator.recover!(signal);
    void this.contextSize;     // a bad size is refused now, not at the first request
  }

  /** The context in effect now (each request reads it: a room that re-deals changes it). */
  get contextSize(): number {
    const c = typeof this.opts.contextSize === 'function' ? this.opts.contextSize() : this.opts.contextSize;
    if (!(Number.isInteger(c) && c > 0)) throw new RangeError(`EngineBackend: contextSize ${c} must be a positive integer`);
    return c;
  }

  get runsOn(): 'scripted' | undefined { return this.opts.runsOn; }

  get devices(): number {
    const d = this.opts.devices ?? 1;
    return typeof d === 'function' ? d() : d;
  }

  encode(text: string): number[] {
    return this.opts.tokenizer.encode(text);
  }

  decode(ids: number[]): string {
    return this.opts.tokenizer.decode(ids);
  }

  render(messages: ChatMessage[], tools: ToolSchema[]): string {
    return this.opts.template.render(messages, tools, { enableThinking: false, addGenerationPrompt: true });
  }

  async generate(req: BackendRequest): Promise<BackendResult> {
    const { tokenizer } = this.opts;
    const { prompt, onText, onToken, ...rest } = req;
    const stream = new TokenTextStream(tokenizer);
    const r = await this.opts.generator.generate(prompt, {
      ...rest,
      sampling: req.sampling ?? this.opts.sampling ?? QWEN3_NON_THINKING,
      onToken: (id, soFar) => {
        const text = stream.push(id);
        onToken?.(id, soFar);
        onText?.(text);
      },
    });
    return { ...r, text: tokenizer.decode(r.ids) };
  }
}

/** Sampled ids → text so far, by exact token bytes through a streaming UTF-8 decoder (no re-decoding). */
export class TokenTextStream {
  private readonly decoder = new TextDecoder('utf-8', { fatal: false });
  private text = '';
  constructor(private readonly tokenizer: Tokenizer) {}

  push(id: number): string {
    this.text += this.decoder.decode(this.tokenizer.tokenBytes(id), { stream: true });
    return this.text;
  }
}
