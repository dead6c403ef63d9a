// The agent's Backend over an OpenAI-compatible server (llama.cpp's server, vLLM, Ollama …), for users
// who outgrow a room of browsers. The same loop, tools, repairs, guards and compaction run on it.
//   - the prompt is the conversation rendered with the model's own chat template (as for our engine) and
//     goes to /v1/completions as text, so the turns are exactly ours; tokens are counted with the model's
//     tokenizer here, and the server's own usage is kept beside (serverUsage);
//   - a server without /v1/completions (404/405, or an error naming chat completions) gets the same
//     conversation as messages on /v1/chat/completions (openai/chat.ts): with the OpenAI `tools` where it
//     takes them, else with the tools in the system turn as our template writes them; it is asked once,
//     and remembered;
//   - a server that takes token ids (llama.cpp and vLLM on /v1/completions; Ollama takes text only) gets
//     the prompt as our ids once its count of a text prompt agreed with ours (openai/prompt-count.ts): then
//     it reads exactly our tokens; every answer's usage.prompt_tokens is compared with ours, and a server
//     that counts otherwise is named once and its count sets the budget;
//   - the answer streams as server-sent events (openai/sse.ts); Stop aborts the HTTP request at once; an
//     answer has a deadline and a progress rule (openai/answer-watch.ts); redirects to another origin are
//     refused (openai/server.ts, fetchHere);
//   - the text ends at the first stop string, as a local engine ends at the stop token: what a server
//     sends after it is never read (openai/stop-strings.ts);
//   - the closing answer at the step limit gets the no-call grammar (and tool_choice none on chat tools);
//   - where the server takes a grammar (llama.cpp `grammar`, vLLM structured outputs) the call grammar
//     goes with it (gbnf.ts); a server that refuses it is asked again without, and then the parser and
//     repairs do the work, as for any unconstrained model;
//   - anything the server says wrong (unreachable, 4xx/5xx, model not found, context exceeded, an error
//     event mid-stream, a malformed event, the connection dropped mid-answer, silence, a stream that never
//     ends) ends the answer `error` with a message naming it; the text so far is kept.
import type { SamplingOptions } from '../model/engine-types.ts';
import type { FinishReason, GenerationStats } from '../model/generate-types.ts';
import type { Tokenizer } from '../model/tokenizer.ts';
import type { ChatTemplate } from '../model/chat-template.ts';
import type { Backend, BackendRequest, BackendResult } from './backend.ts';
import type { ChatMessage, ToolSchema } from '../model/chat-types.ts';
import { QWEN3_NON_THINKING } from './engine-backend.ts';
import { callGrammar, noCallGrammar } from './openai/gbnf.ts';
import { causeOf, describeError, fetchHere, readBounded, ServerError, type ServerInfo } from './openai/server.ts';
import { AnswerWatch, DEFAULT_ANSWER_LIMITS, type Timers } from './openai/answer-watch.ts';
import { cutAtStop, heldBack } from './openai/stop-strings.ts';
import { PromptCounts } from './openai/prompt-count.ts';
import { errorText, MalformedEvent, num, parseChunk, type ChatDelta, type CompletionChunk } from './openai/chunk.ts';
import { CHAT_PATH, COMPLETIONS_PATH, nativeMessages, refusesTools, saysNoCompletions, StreamedToolCalls, textMessages, wireTools } from './openai/chat.ts';
import { TurnRenderer } from './turns.ts';
import { SseError, SseParser } from './openai/sse.ts';

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
  /** The progress rule: give up when no new token came for this long (default 120 s: a big prompt can take a while). */
  progressMs?: number;
  /** The deadline of one whole answer (default 20 min). */
  deadlineMs?: number;
  /** The clocks of both (tests). */
  timers?: Timers;
  fetch?: typeof fetch;
  name?: string;
}

export class OpenAIBackend implements Backend {
  readonly name: string;
  readonly devices = 1;
  /** The context as the server counts it. */
  readonly serverContext: number;
  /** Our count against the server's (the budget follows the server's once they disagree). */
  readonly counts = new PromptCounts();
  /** Whether prompts go as token ids (the server takes them and its count agreed with ours). */
  promptIds = false;
  /** Set once the server refused a prompt of ids: later prompts go as text. */
  idsRefused: string | null = null;
  /** Set once the server refused the grammar: later requests go without it. */
  grammarRefused: string | null = null;
  /** Set once the server turned down /v1/completions (its words): later requests go to chat completions. */
  completionsMissing: string | null = null;
  /** Set once the chat server refused `tools`: later requests carry them in the text. */
  toolsRefused: string | null = null;
  private readonly grammar: string | null;
  private readonly noCallsGrammar: string | null;
  private readonly fetchFn: typeof fetch;
  private turns: TurnRenderer | null = null;

  constructor(private readonly opts: OpenAIBackendOptions) {
    this.name = opts.name ?? `${opts.model} on ${opts.server.base}`;
    this.serverContext = opts.contextSize ?? opts.server.contextSize ?? 8192;
    const takesGrammar = opts.server.kind === 'llama.cpp' || opts.server.kind === 'vllm';
    this.grammar = takesGrammar && opts.tools?.length ? callGrammar(opts.template.format, opts.tools) : null;
    this.noCallsGrammar = this.grammar ? noCallGrammar() : null;
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init)); // unbound: a browser's fetch refuses another `this`
  }

  /** The window in our tokens: the server's context, scaled by its count once it disagrees with ours. */
  get contextSize(): number {
    return this.counts.window(this.serverContext);
  }

  /** Where answers go now, and how the tools travel there. */
  get route(): 'completions' | 'chat (tools)' | 'chat (tools in the text)' {
    if (!this.completionsMissing) return 'completions';
    return this.toolsRefused || !this.opts.tools?.length ? 'chat (tools in the text)' : 'chat (tools)';
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

  /** The request body for one answer on /v1/completions (exposed for tests and for a user who wants to see it). */
  body(req: BackendRequest, withGrammar: boolean, asIds = false): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: this.opts.model,
      prompt: asIds ? [...req.prompt] : this.opts.tokenizer.decode(req.prompt),
      ...this.common(req),
      stop: this.stops(req),
    };
    if (withGrammar) this.addGrammar(body, req);
    return body;
  }

  /** The stop tokens as the strings a server takes (and the text is cut at). */
  private stops(req: BackendRequest): string[] {
    return (req.stopTokens ?? []).map((id) => this.opts.tokenizer.decode([id])).filter((s) => s !== '');
  }

  /** Whether this server reads a prompt of token ids on /v1/completions (llama.cpp, vLLM; not Ollama). */
  get takesIds(): boolean {
    return this.opts.server.kind === 'llama.cpp' || this.opts.server.kind === 'vllm';
  }

  /** The request body for one answer on /v1/chat/completions: the messages, with native tools or tools in the text. */
  chatBody(req: BackendRequest, nativeTools: boolean, withGrammar: boolean): Record<string, unknown> {
    const messages = req.messages ?? [];
    const body: Record<string, unknown> = { model: this.opts.model, ...this.common(req) };
    const tools = this.opts.tools ?? [];
    if (nativeTools) {
      body.messages = nativeMessages(messages);
      body.tools = wireTools(tools);
      if (req.noCalls) body.tool_choice = 'none';
    } else {
      body.messages = textMessages(messages, this.turnsFor(messages[0]?.role === 'system' ? messages[0].content : ''));
      if (withGrammar) this.addGrammar(body, req);
    }
    // Qwen3's templates think unless told not to; the servers that render templates pass this through.
    if (this.opts.server.kind === 'llama.cpp' || this.opts.server.kind === 'vllm') body.chat_template_kwargs = { enable_thinking: false };
    return body;
  }

  /** Sampling and streaming fields both routes share; top_k and cache_prompt only where the server is known to take them. */
  private common(req: BackendRequest): Record<string, unknown> {
    const s = req.sampling ?? this.opts.sampling ?? QWEN3_NON_THINKING;
    // The server's window holds its own count of the prompt: the answer fits beside that.
    const room = this.serverContext - this.counts.theirs(req.prompt.length);
    const body: Record<string, unknown> = { max_tokens: Math.max(1, Math.min(req.maxNewTokens, room)), stream: true, stream_options: { include_usage: true }, temperature: s.temperature };
    if (s.topP !== undefined) body.top_p = s.topP;
    if (s.topK !== undefined && this.opts.server.kind !== 'openai') body.top_k = s.topK;
    if (s.seed !== undefined) body.seed = s.seed;
    if (this.opts.server.kind === 'llama.cpp') body.cache_prompt = true;
    return body;
  }

  /** The call grammar, or for the closing answer (noCalls) the grammar of prose alone. */
  private addGrammar(body: Record<string, unknown>, req: BackendRequest): void {
    const grammar = req.noCalls ? this.noCallsGrammar : this.grammar;
    if (!grammar) return;
    if (this.opts.server.kind === 'llama.cpp') body.grammar = grammar;
    else body.structured_outputs = { grammar };
  }

  private turnsFor(system: string): TurnRenderer {
    if (this.turns?.system !== system) this.turns = new TurnRenderer(this, system, [...(this.opts.tools ?? [])]);
    return this.turns;
  }

  async generate(req: BackendRequest): Promise<BackendResult> {
    // Each refusal flips one setting for good (route, tools, grammar, ids), so this asks at most five times.
    for (;;) {
      const chat = this.completionsMissing !== null;
      const nativeTools = chat && !this.toolsRefused && Boolean(this.opts.tools?.length);
      const withGrammar = Boolean(this.grammar && (req.constraint || req.noCalls) && !this.grammarRefused && !nativeTools);
      const asIds = !chat && this.promptIds && !this.idsRefused;
      const attempt = await this.once(req, chat ? CHAT_PATH : COMPLETIONS_PATH, nativeTools, withGrammar, asIds);
      if (!attempt.refused) return this.counted(req, attempt.result, chat || asIds);
      const { what, why } = attempt.refused;
      if (what === 'completions') this.completionsMissing = why;
      else if (what === 'tools') this.toolsRefused = why;
      else if (what === 'ids') this.idsRefused = why;
      else this.grammarRefused = why;
    }
  }

  /**
   * The server's prompt count against ours: the first disagreement is the answer's notice. A text prompt
   * the server counted as we do means it reads our tokens: a server that takes ids gets them from now on.
   */
  private counted(req: BackendRequest, result: BackendResult, chatOrIds: boolean): BackendResult {
    const theirs = result.serverUsage?.promptTokens ?? 0;
    const notice = this.counts.compare(req.prompt.length, theirs);
    if (notice) result.notice = notice;
    if (!chatOrIds && this.takesIds && theirs > 0 && PromptCounts.agree(req.prompt.length, theirs)) this.promptIds = true;
    return result;
  }

  private async once(req: BackendRequest, path: string, nativeTools: boolean, withGrammar: boolean, asIds: boolean): Promise<Attempt> {
    const t0 = performance.now();
    const chat = path === CHAT_PATH;
    let tFirst: number | undefined;
    let content = '';
    let text = '';
    const calls = new StreamedToolCalls(this.opts.template.format);
    const stops = this.stops(req);
    let serverUsage: BackendResult['serverUsage'];
    let computed: number | undefined;
    let reused: number | undefined;
    // A server that floods (far more text than the answer cap allows) is cut off before the tokenizer sees it.
    const maxChars = Math.max(4096, req.maxNewTokens * MAX_CHARS_PER_TOKEN);
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
    let body: Record<string, unknown>;
    try {
      body = chat ? this.chatBody(req, nativeTools, withGrammar) : this.body(req, withGrammar, asIds);
    } catch (e) {
      return { result: finish('error', e as Error) };
    }
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    const watch = new AnswerWatch({
      deadlineMs: this.opts.deadlineMs ?? DEFAULT_ANSWER_LIMITS.deadlineMs,
      progressMs: this.opts.progressMs ?? DEFAULT_ANSWER_LIMITS.progressMs,
    }, () => abort.abort(), this.opts.timers);
    /** Headers came: a failure from here on is the connection dropping during the answer, not an unreachable server. */
    let answering = false;
    const failed = (e: unknown): BackendResult => {
      if (req.signal?.aborted) return finish('stopped');
      if (watch.tripped) return finish('error', watch.error(base));
      if (e instanceof ServerError) return finish('error', e);
      if (e instanceof SseError) return finish('error', new ServerError(e.message));
      const cause = causeOf(e as Error);
      if (answering) return finish('error', new ServerError(`the connection to the server at ${base} dropped during the answer (after ${text.length} characters): ${cause}`));
      return finish('error', new ServerError(`the server at ${base} cannot be reached: ${cause}`));
    };
    let reason: FinishReason | null = null;
    /** A stop string came: the answer is over, and nothing after it is read. */
    let stopped = false;
    /** The answer's text from what came so far (calls written out); the text stays the last good one past the limit. */
    const settle = (streaming: boolean) => {
      // While streaming, a tail that may be the start of a stop string is not shown yet.
      const shown = streaming && calls.count === 0 ? content.slice(0, content.length - heldBack(content, stops)) : content;
      const next = calls.text(shown, streaming);
      if (next.length > maxChars) throw new ServerError(`the server sent over ${maxChars} characters for an answer of at most ${req.maxNewTokens} tokens`);
      text = next;
    };
    const take = (event: CompletionChunk) => {
      if (event.error !== undefined) throw new ServerError(`the server reported an error mid-answer: ${errorText(event.error)}`);
      const choice = event.choices?.[0];
      const piece = chat ? (choice?.delta ?? choice?.message) : choice;
      const before = text;
      const grown = content.length + calls.chars;
      const said = chat ? (piece as ChatDelta | undefined)?.content : (piece as { text?: unknown } | undefined)?.text;
      const searchFrom = content.length;
      if (typeof said === 'string') content += said;
      const cut = cutAtStop(content, stops, searchFrom);
      if (cut.stopped) {
        content = cut.text;
        stopped = true;
        reason = 'stop';
      } else {
        const toolCalls = chat ? (piece as ChatDelta | undefined)?.tool_calls : undefined;
        if (toolCalls !== undefined && toolCalls !== null) calls.push(toolCalls);
      }
      if (content.length + calls.chars > grown) watch.progress();
      settle(!stopped);
      if (text !== before) {
        tFirst ??= performance.now();
        req.onText?.(text);
      }
      if (choice?.finish_reason && !stopped) reason = choice.finish_reason === 'length' ? 'cap' : 'stop';
      if (event.usage) serverUsage = { promptTokens: num(event.usage.prompt_tokens), completionTokens: num(event.usage.completion_tokens) };
      const cached = event.usage?.prompt_tokens_details?.cached_tokens;
      if (typeof cached === 'number') { reused = cached; computed = num(event.usage?.prompt_tokens) - cached; }
      if (event.timings) { computed = num(event.timings.prompt_n); reused = num(event.timings.cache_n); }
    };
    /** One event: what is not a JSON object, or has fields of the wrong shape, is named as malformed. */
    const takeData = (data: string) => {
      const event = parseChunk(data);
      try {
        take(event);
      } catch (e) {
        if (e instanceof ServerError) throw e;
        throw new MalformedEvent(`the server sent a malformed event (${(e as Error).message}): ${data.slice(0, 200)}`);
      }
    };
    try {
      const res = await fetchHere(this.fetchFn, `${base}${path}`, {
        method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(body), signal: abort.signal,
      });
      answering = true;
      if (!res.ok) {
        const why = await describeError(res);
        if (watch.tripped) throw new Error('timed out');
        const client = res.status >= 400 && res.status < 500;
        if (!chat && req.messages && saysNoCompletions(res.status, why)) return { result: finish('error'), refused: { what: 'completions', why } };
        if (nativeTools && refusesTools(res.status, why)) return { result: finish('error'), refused: { what: 'tools', why } };
        if (withGrammar && client && /grammar|structured|guided/i.test(why)) return { result: finish('error'), refused: { what: 'grammar', why } };
        if (asIds && client && /prompt/i.test(why) && !/context|exceed|too long/i.test(why)) return { result: finish('error'), refused: { what: 'ids', why } };
        const earlier = chat && saysNoCompletions(res.status, why) ? `POST ${COMPLETIONS_PATH} with ${this.completionsMissing} and ` : '';
        return { result: finish('error', new ServerError(`the server answered ${earlier}POST ${path} with ${why}`, res.status)) };
      }
      if (/json/i.test(res.headers.get('content-type') ?? '')) {
        // A server that does not stream answers with the whole completion as one JSON document.
        const whole = await readBounded(res, MAX_WHOLE_BODY);
        try {
          takeData(whole);
        } catch (e) {
          if (!(e instanceof MalformedEvent)) throw e;
          throw new MalformedEvent(`the server answered with JSON that is not a completion: ${whole.slice(0, 200)}`);
        }
        settle(false);
        return { result: finish(this.endReason(reason, req, text)) };
      }
      const reader = res.body?.getReader();
      if (!reader) return { result: finish('error', new ServerError('the server answered with no body')) };
      const sse = new SseParser();
      while (!stopped) {
        const { done, value } = await reader.read();
        watch.read();
        const events = done ? sse.end() : sse.push(value);
        for (const data of events) {
          if (data.trim() === '[DONE]') { reason ??= 'stop'; continue; }
          takeData(data);
          if (stopped) break;
        }
        if (done) break;
      }
      if (stopped) await reader.cancel().catch(() => undefined);
      const streamed = text;
      settle(false);
      if (text !== streamed) req.onText?.(text);  // the calls as the parser will read them
      return { result: finish(this.endReason(reason, req, text)) };
    } catch (e) {
      return { result: failed(e) };
    } finally {
      watch.done();
      req.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** A cap that reached the end of the context is a context end. */
  private endReason(reason: FinishReason | null, req: BackendRequest, text: string): FinishReason {
    if (reason === 'cap' && req.prompt.length + this.opts.tokenizer.encode(text).length >= this.contextSize) return 'context';
    return reason ?? 'stop';
  }
}

/** One try at an answer; `refused` names what the server turned down, to ask again without it. */
interface Attempt { result: BackendResult; refused?: { what: 'completions' | 'tools' | 'grammar' | 'ids'; why: string } }

const MAX_WHOLE_BODY = 8 << 20;
/** Real tokens average about 4 characters; 16 leaves room for the longest (runs of spaces, dashes). */
const MAX_CHARS_PER_TOKEN = 16;
