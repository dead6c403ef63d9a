// The agent's Backend over an OpenAI-compatible server (llama.cpp's server, vLLM, Ollama …), for users
// who outgrow a room of browsers. The same loop, tools, repairs, guards and compaction run on it.
//   - the prompt is the conversation rendered with the model's own chat template (as for our engine) and
//     goes to /v1/completions as text, so the turns are exactly ours; tokens are counted with the model's
//     tokenizer here, and the server's own usage is kept beside (serverUsage);
//   - the answer streams as server-sent events; Stop aborts the HTTP request at once;
//   - where the server takes a grammar (llama.cpp `grammar`, vLLM structured outputs) the call grammar
//     goes with it (gbnf.ts); a server that refuses it is asked again without, and then the parser and
//     repairs do the work, as for any unconstrained model;
//   - anything the server says wrong (unreachable, 4xx/5xx, model not found, context exceeded, an error
//     event mid-stream, silence) ends the answer `error` with a message quoting it.
import type { SamplingOptions } from '../model/engine-types.ts';
import type { FinishReason, GenerationStats } from '../model/generate-types.ts';
import type { Tokenizer } from '../model/tokenizer.ts';
import type { ChatTemplate } from '../model/chat-template.ts';
import type { Backend, BackendRequest, BackendResult } from './backend.ts';
import type { ChatMessage, ToolSchema } from '../model/chat-types.ts';
import { QWEN3_NON_THINKING } from './engine-backend.ts';
import { callGrammar } from './openai/gbnf.ts';
import { causeOf, describeError, ServerError, type ServerInfo } from './openai/server.ts';
import { SseParser } from './openai/sse.ts';

export interface OpenAIBackendOptions {
  server: ServerInfo;          // from probeServer()
  model: string;               // the model name the server knows
  tokenizer: Tokenizer;        // the model's own (for exact counts)
  template: ChatTemplate;      // the model's own chat template
  /** Default: what the server says, else 8192. */
  contextSize?: number;
  /** The tools whose calls the grammar allows (the agent's registry schemas); none = no grammar sent. */
  tools?: readonly ToolSchema[];
  /** Default: Qwen3's non-thinking settings. */
  sampling?: SamplingOptions;
  /** Give up when the server sends nothing for this long (default 120 s: a big prompt can take a while). */
  idleMs?: number;
  fetch?: typeof fetch;
  name?: string;
}

export class OpenAIBackend implements Backend {
  readonly name: string;
  readonly contextSize: number;
  readonly devices = 1;
  /** Set once the server refused the grammar: later requests go without it. */
  grammarRefused: string | null = null;
  private readonly grammar: string | null;
  private readonly fetchFn: typeof fetch;

  constructor(private readonly opts: OpenAIBackendOptions) {
    this.name = opts.name ?? `${opts.model} on ${opts.server.base}`;
    this.contextSize = opts.contextSize ?? opts.server.contextSize ?? 8192;
    const takesGrammar = opts.server.kind === 'llama.cpp' || opts.server.kind === 'vllm';
    this.grammar = takesGrammar && opts.tools?.length ? callGrammar(opts.template.format, opts.tools) : null;
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init)); // unbound: a browser's fetch refuses another `this`
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

  /** The request body for one answer (exposed for tests and for a user who wants to see it). */
  body(req: BackendRequest, withGrammar: boolean): Record<string, unknown> {
    const s = req.sampling ?? this.opts.sampling ?? QWEN3_NON_THINKING;
    const body: Record<string, unknown> = {
      model: this.opts.model,
      prompt: this.opts.tokenizer.decode(req.prompt),
      max_tokens: req.maxNewTokens,
      stream: true,
      stream_options: { include_usage: true },
      temperature: s.temperature,
      stop: (req.stopTokens ?? []).map((id) => this.opts.tokenizer.decode([id])),
    };
    if (s.topP !== undefined) body.top_p = s.topP;
    if (s.topK !== undefined) body.top_k = s.topK;
    if (s.seed !== undefined) body.seed = s.seed;
    if (this.opts.server.kind === 'llama.cpp') body.cache_prompt = true;
    if (withGrammar && this.grammar) {
      if (this.opts.server.kind === 'llama.cpp') body.grammar = this.grammar;
      else body.structured_outputs = { grammar: this.grammar };
    }
    return body;
  }

  async generate(req: BackendRequest): Promise<BackendResult> {
    const withGrammar = Boolean(this.grammar && req.constraint && !this.grammarRefused);
    const first = await this.once(req, withGrammar);
    if (first.refusedGrammar) {
      // The server does not take this grammar: say why once, and carry on with the parser and repairs.
      this.grammarRefused = first.refusedGrammar;
      return (await this.once(req, false)).result;
    }
    return first.result;
  }

  private async once(req: BackendRequest, withGrammar: boolean): Promise<{ result: BackendResult; refusedGrammar?: string }> {
    const t0 = performance.now();
    let tFirst: number | undefined;
    let text = '';
    let serverUsage: BackendResult['serverUsage'];
    let computed: number | undefined;
    let reused: number | undefined;
    const finish = (finish: FinishReason, error?: Error): BackendResult => {
      const ids = text === '' ? [] : this.opts.tokenizer.encode(text);
      const now = performance.now();
      const prefillSeconds = ((tFirst ?? now) - t0) / 1000;
      const decodeSeconds = tFirst === undefined ? 0 : (now - tFirst) / 1000;
      const stats: GenerationStats = {
        promptTokens: req.prompt.length, promptComputed: computed ?? req.prompt.length - (reused ?? 0), promptReused: reused ?? 0,
        generated: ids.length, prefillSeconds, decodeSeconds,
        prefillTokensPerSecond: prefillSeconds > 0 ? (computed ?? req.prompt.length) / prefillSeconds : 0,
        decodeTokensPerSecond: decodeSeconds > 0 ? Math.max(0, ids.length - 1) / decodeSeconds : 0,
        seconds: (now - t0) / 1000, seed: req.sampling?.seed ?? 0,
      };
      const result: BackendResult = { ids, text, finish, stats };
      if (error) result.error = error;
      if (serverUsage) result.serverUsage = serverUsage;
      return result;
    };

    if (req.signal?.aborted) return { result: finish('stopped') };
    if (req.prompt.length >= this.contextSize) return { result: finish('context') };
    const { base } = this.opts.server;
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    let silent = false;
    const idleMs = this.opts.idleMs ?? 120_000;
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => { silent = true; abort.abort(); }, idleMs);
    };
    const failed = (e: unknown): BackendResult => {
      if (req.signal?.aborted) return finish('stopped');
      if (silent) return finish('error', new ServerError(`the server at ${base} sent nothing for ${idleMs / 1000} s`));
      if (e instanceof ServerError) return finish('error', e);
      return finish('error', new ServerError(`the server at ${base} cannot be reached: ${causeOf(e as Error)}`));
    };
    try {
      touch();
      const res = await this.fetchFn(`${base}/v1/completions`, {
        method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(this.body(req, withGrammar)), signal: abort.signal,
      });
      if (!res.ok) {
        const why = await describeError(res);
        if (withGrammar && res.status >= 400 && res.status < 500 && /grammar|structured|guided/i.test(why)) {
          return { result: finish('error'), refusedGrammar: why };
        }
        return { result: finish('error', new ServerError(`the server answered POST /v1/completions with ${why}`, res.status)) };
      }
      const reader = res.body?.getReader();
      if (!reader) return { result: finish('error', new ServerError('the server answered with no body')) };
      const sse = new SseParser();
      let reason: FinishReason | null = null;
      for (;;) {
        const { done, value } = await reader.read();
        touch();
        const events = done ? sse.end() : sse.push(value);
        for (const data of events) {
          if (data.trim() === '[DONE]') { reason ??= 'stop'; continue; }
          let event: CompletionChunk;
          try {
            event = JSON.parse(data) as CompletionChunk;
          } catch {
            throw new ServerError(`the server sent an event that is not JSON: ${data.slice(0, 200)}`);
          }
          if (event.error !== undefined) throw new ServerError(`the server reported an error mid-answer: ${errorText(event.error)}`);
          const choice = event.choices?.[0];
          if (typeof choice?.text === 'string' && choice.text !== '') {
            tFirst ??= performance.now();
            text += choice.text;
            req.onText?.(text);
          }
          if (choice?.finish_reason) reason = choice.finish_reason === 'length' ? 'cap' : 'stop';
          if (event.usage) serverUsage = { promptTokens: num(event.usage.prompt_tokens), completionTokens: num(event.usage.completion_tokens) };
          const cached = event.usage?.prompt_tokens_details?.cached_tokens;
          if (typeof cached === 'number') { reused = cached; computed = num(event.usage?.prompt_tokens) - cached; }
          if (event.timings) { computed = num(event.timings.prompt_n); reused = num(event.timings.cache_n); }
        }
        if (done) break;
      }
      if (reason === 'cap' && req.prompt.length + this.opts.tokenizer.encode(text).length >= this.contextSize) reason = 'context';
      return { result: finish(reason ?? 'stop') };
    } catch (e) {
      return { result: failed(e) };
    } finally {
      clearTimeout(idle);
      req.signal?.removeEventListener('abort', onAbort);
    }
  }
}

interface CompletionChunk {
  choices?: { text?: string; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } };
  timings?: { prompt_n?: number; cache_n?: number };
  error?: unknown;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

function errorText(e: unknown): string {
  if (typeof e === 'string') return e;
  if (e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') return (e as { message: string }).message;
  return JSON.stringify(e);
}
