// The agent's Backend over a real model: the model layer's Generator (one device, or the room's host,
// whose generate() has the same shape) + the model's own Tokenizer + its chat template.
//   - token counts are exact: usage comes from the Generator (prompt reused / computed, generated);
//   - thinking is off (the template appends "<think>\n\n</think>\n\n");
//   - the pinned checkpoint (end of system prompt + tools) is passed through as pinAt;
//   - the agent's grammar (TokenMaskSource, created once the model opens a call) becomes the
//     Generator's per-token TokenConstraint, and is told every token that was sampled under it.
import type { GenerateOptions, GenerationResult } from '../model/generator.ts';
import type { SamplingOptions, TokenConstraint } from '../model/engine-types.ts';
import type { Tokenizer } from '../model/tokenizer.ts';
import type { ChatTemplate } from '../model/chat-template.ts';
import type { Backend, ChatMessage, GenerateRequest, GenerateResult, TokenMaskSource } from './backend.ts';
import type { ToolSchema } from './tool-types.ts';

/** What EngineBackend drives: a Generator, or a RoomHost (adds a `note` when a device left mid-run). */
export interface TokenGenerator {
  generate(prompt: readonly number[], opts: GenerateOptions): Promise<GenerationResult & { note?: string }>;
}

export interface EngineBackendOptions {
  generator: TokenGenerator;
  tokenizer: Tokenizer;
  template: ChatTemplate;
  /** Context the generator was built for (prompt + answer), e.g. 8192. */
  contextSize: number;
  /** Devices the model is spread over (a number, or asked each time: a room changes). Default 1. */
  devices?: number | (() => number);
  name?: string;
  /** Default: Qwen3's non-thinking settings (temperature 0.7, top-p 0.8, top-k 20). Calls are greedy via the grammar. */
  sampling?: SamplingOptions;
}

export const QWEN3_NON_THINKING: SamplingOptions = { temperature: 0.7, topP: 0.8, topK: 20 };

export class EngineBackend implements Backend {
  readonly name: string;
  readonly contextSize: number;
  private readonly opts: EngineBackendOptions;

  constructor(opts: EngineBackendOptions) {
    if (!(Number.isInteger(opts.contextSize) && opts.contextSize > 0)) {
      throw new RangeError(`EngineBackend: contextSize ${opts.contextSize} must be a positive integer`);
    }
    this.opts = opts;
    this.name = opts.name ?? 'engine';
    this.contextSize = opts.contextSize;
  }

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

  async generate(req: GenerateRequest): Promise<GenerateResult> {
    const { tokenizer } = this.opts;
    const stream = new TokenTextStream(tokenizer);
    const options: GenerateOptions = {
      maxNewTokens: req.maxNewTokens,
      stopTokens: req.stopTokens,
      sampling: this.opts.sampling ?? QWEN3_NON_THINKING,
      constraint: req.mask ? maskAdapter(req.mask) : undefined,
      onToken: (id) => {
        const text = stream.push(id);
        req.onToken?.(id, text);
      },
    };
    if (req.pinAt !== undefined) options.pinAt = req.pinAt;
    if (req.signal) options.signal = req.signal;
    const r = await this.opts.generator.generate(req.prompt, options);
    const result: GenerateResult = {
      tokens: r.ids,
      text: tokenizer.decode(r.ids),
      finish: r.finish,
      usage: {
        promptTokens: r.stats.promptTokens,
        promptComputed: r.stats.promptComputed,
        promptReused: r.stats.promptReused,
        generated: r.stats.generated,
      },
      seconds: r.stats.seconds,
    };
    const why = r.error?.message ?? r.note;
    if (why !== undefined) result.error = why;
    return result;
  }
}

/**
 * The Generator asks a constraint before every token with the ids sampled so far. Until the grammar
 * factory returns a source (the model has not opened a call), it is asked again each token; after that
 * the source is told each newly sampled id in order, then asked for the next constraint.
 */
export function maskAdapter(factory: (generatedSoFar: number[]) => TokenMaskSource | null): (ids: readonly number[]) => TokenConstraint | null {
  let source: TokenMaskSource | null = null;
  let told = 0;
  return (ids) => {
    if (source) {
      while (told < ids.length) source.accept(ids[told++]!);
    } else {
      source = factory([...ids]);
      told = ids.length;
    }
    return source ? source.next() : null;
  };
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
