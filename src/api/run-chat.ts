// One /v1/chat/completions request on the room, through the agent's own path: the model's chat template
// renders the messages and tools (EngineBackend.render: thinking off, generation prompt), the prompt is
// encoded with the model's tokenizer, the answer is sampled under the call grammar tool_choice picks,
// and its calls are read with the near-miss parser and repairs. The opening (system prompt + tools) is
// the pinned checkpoint, so an editor's next request reuses it like the agent's next step does.
import type { ChatMessage, ToolSchema } from '../model/chat-types.ts';
import type { BackendResult } from '../agent/backend.ts';
import type { ApiModel } from './api-model.ts';
import { ApiError } from './api-error.ts';
import { readChatBody } from './chat-body.ts';
import { answerCap } from './sampling.ts';
import { AnswerText } from './answer-text.ts';
import { readCalls } from './answer-calls.ts';
import { answerEnd, type AnswerEnd } from './answer-end.ts';
import { answerFrame, chatChunk, chatCompletion, chatUsageChunk, toolCallDeltas, usageOf, type Usage } from './openai-objects.ts';

export interface RunOptions {
  /** Aborted when the client went away: the answer stops within one token (or leaves the queue). */
  signal?: AbortSignal;
  /** Each streaming chunk (stream: true), in order. */
  onChunk?: (chunk: Record<string, unknown>) => void;
}

/** What the relay sends when the answer is over: the whole response (non-stream) and the counts. */
export interface RunOutcome {
  end: AnswerEnd;
  response?: Record<string, unknown>;
  usage: Usage;
}

export async function runChat(model: ApiModel, rawBody: unknown, opts: RunOptions = {}): Promise<RunOutcome> {
  const body = readChatBody(rawBody);
  if (body.model !== model.id) throw new ApiError(404, `model ${JSON.stringify(body.model)} is not served here; this room serves ${JSON.stringify(model.id)}`);
  const { backend, tokenizer } = model;
  const prompt = backend.encode(backend.render(body.messages, body.tools));
  const maxNewTokens = answerCap(prompt.length, backend.contextSize, body.maxTokens);
  const mayCall = body.tools.length > 0 && body.toolChoice.kind !== 'none';
  const constraint = model.grammars.constraintFor(body.tools, body.toolChoice);
  const frame = answerFrame('chatcmpl-', model.id);
  const stream = body.stream ? opts.onChunk : undefined;

  // Stop strings end the run on our side (the generator knows only stop tokens).
  const ours = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, ours.signal]) : ours.signal;
  const shown = new AnswerText(body.stop, mayCall);
  stream?.(chatChunk(frame, { role: 'assistant', content: '' }));
  const result: BackendResult = await backend.generate({
    prompt, maxNewTokens, stopTokens: tokenizer.stopTokenIds(), sampling: body.sampling, signal,
    pinAt: pinnedOpening(model, body.messages, body.tools, prompt),
    ...(constraint ? { constraint } : {}),
    onText: (soFar) => {
      const delta = shown.update(soFar);
      if (delta && stream) stream(chatChunk(frame, { content: delta }));
      if (shown.stopped) ours.abort();
    },
  });
  shown.update(result.text);
  const answer = shown.text;
  const { calls, text } = mayCall ? readCalls(answer, model.format, body.tools) : { calls: [], text: answer };
  const end = answerEnd(result, opts.signal?.aborted === true, shown.stopped, calls.length);
  const usage = usageOf(prompt.length, result.ids.length);
  if (end.kind === 'cancelled') return { end, usage };
  if (!stream) return { end, usage, response: chatCompletion(frame, text, calls, end.finish, usage) };
  const tail = shown.flush();
  if (tail) stream(chatChunk(frame, { content: tail }));
  if (calls.length > 0) stream(chatChunk(frame, { tool_calls: toolCallDeltas(calls) }));
  stream(chatChunk(frame, {}, end.finish));
  if (body.includeUsage) stream(chatUsageChunk(frame, usage));
  return { end, usage };
}

/**
 * Where the pinned checkpoint goes: after the opening (system messages + tools) when the prompt starts
 * with its tokens — the agent pins the same place (src/agent/conversation.ts). Undefined otherwise.
 */
function pinnedOpening(model: ApiModel, messages: ChatMessage[], tools: ToolSchema[], prompt: number[]): number | undefined {
  const MARK = '\u0000opening-ends\u0000';
  const firstOther = messages.findIndex((m) => m.role !== 'system');
  const system = firstOther < 0 ? messages : messages.slice(0, firstOther);
  let rendered: string;
  try {
    rendered = model.backend.render([...system, { role: 'user', content: MARK }], tools);
  } catch {
    return undefined;   // a template that wants another shape of conversation: no pin
  }
  // The opening ends where the marker's turn begins ("<|im_start|>user\n" is the turn's, not the opening's).
  const mark = rendered.indexOf(MARK);
  const at = mark < 0 ? -1 : rendered.lastIndexOf('<|im_start|>', mark);
  if (at <= 0) return undefined;
  const opening = model.backend.encode(rendered.slice(0, at));
  return opening.length < prompt.length && opening.every((id, i) => prompt[i] === id) ? opening.length : undefined;
}

