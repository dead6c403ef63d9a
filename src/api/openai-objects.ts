// The OpenAI objects the endpoint answers with, built from one answer of ours:
//   chat.completion        (non-stream chat)   choices[0].message {role, content, tool_calls?}
//   chat.completion.chunk  (stream chat)       role delta first, content deltas, tool_calls deltas, finish
//   text_completion        (completions; the same object streamed, one piece of text per chunk)
// Usage is counted from our own token ids: the prompt as rendered and encoded, the answer's sampled ids.

export type FinishReason = 'stop' | 'length' | 'tool_calls';

export interface Usage { prompt_tokens: number; completion_tokens: number; total_tokens: number }

export interface ToolCallOut { id: string; type: 'function'; function: { name: string; arguments: string } }

export function usageOf(promptTokens: number, completionTokens: number): Usage {
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

/** A random id with OpenAI's prefixes ("chatcmpl-", "cmpl-", "call_"). */
export function newId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return prefix + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The frame every object of one answer shares: its id, when it began, the model. */
export interface AnswerFrame { id: string; created: number; model: string }

export function answerFrame(prefix: 'chatcmpl-' | 'cmpl-', model: string): AnswerFrame {
  return { id: newId(prefix), created: Math.floor(Date.now() / 1000), model };
}

export function chatCompletion(f: AnswerFrame, content: string, calls: ToolCallOut[], finish: FinishReason, usage: Usage): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: calls.length > 0 && content === '' ? null : content };
  if (calls.length > 0) message.tool_calls = calls;
  return { ...f, object: 'chat.completion', choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage };
}

export function chatChunk(f: AnswerFrame, delta: Record<string, unknown>, finish: FinishReason | null = null): Record<string, unknown> {
  return { ...f, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
}

/** The closing chunk with usage (stream_options.include_usage): no choices, as OpenAI sends it. */
export function chatUsageChunk(f: AnswerFrame, usage: Usage): Record<string, unknown> {
  return { ...f, object: 'chat.completion.chunk', choices: [], usage };
}

/** tool_calls delta entries: each call whole in one piece (a client appends the pieces of an index). */
export function toolCallDeltas(calls: ToolCallOut[]): Record<string, unknown>[] {
  return calls.map((c, index) => ({ index, ...c }));
}

export function textCompletion(f: AnswerFrame, text: string, finish: FinishReason | null, usage?: Usage): Record<string, unknown> {
  return { ...f, object: 'text_completion', choices: [{ index: 0, text, logprobs: null, finish_reason: finish }], ...(usage ? { usage } : {}) };
}
