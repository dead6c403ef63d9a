// One /v1/completions request: the prompt string encoded as it is (no template), sampled freely, cut at
// stop strings; a text_completion object, or the same object streamed one piece of text per chunk.
import type { ApiModel } from './api-model.ts';
import { ApiError, badRequest } from './api-error.ts';
import { answerCap, readMaxTokens, readSampling, readStop, readStream, requireOneChoice, type Body } from './sampling.ts';
import { AnswerText } from './answer-text.ts';
import { answerEnd } from './answer-end.ts';
import { answerFrame, textCompletion, usageOf } from './openai-objects.ts';
import { API_LIMITS } from './limits.ts';
import type { RunOptions, RunOutcome } from './run-chat.ts';

export async function runCompletion(model: ApiModel, rawBody: unknown, opts: RunOptions = {}): Promise<RunOutcome> {
  if (rawBody === null || typeof rawBody !== 'object' || Array.isArray(rawBody)) throw badRequest('body', 'must be a JSON object');
  const body = rawBody as Body;
  if (body.model !== model.id) throw new ApiError(404, `model ${JSON.stringify(body.model)} is not served here; this room serves ${JSON.stringify(model.id)}`);
  requireOneChoice(body);
  const promptText = Array.isArray(body.prompt) && body.prompt.length === 1 ? body.prompt[0] : body.prompt;
  if (typeof promptText !== 'string' || promptText === '') throw badRequest('prompt', 'must be one non-empty string');
  if (body.echo === true || (body.best_of !== undefined && body.best_of !== 1)) throw badRequest('echo/best_of', 'are not served');
  const { stream: streaming, includeUsage } = readStream(body);
  const stops = readStop(body);
  const { backend, tokenizer } = model;
  const prompt = backend.encode(promptText);
  const maxNewTokens = answerCap(prompt.length, backend.contextSize, readMaxTokens(body) ?? Math.min(API_LIMITS.completionDefaultTokens, backend.contextSize - prompt.length));
  const frame = answerFrame('cmpl-', model.id);
  const stream = streaming ? opts.onChunk : undefined;

  const ours = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, ours.signal]) : ours.signal;
  const shown = new AnswerText(stops, false);
  const result = await backend.generate({
    prompt, maxNewTokens, stopTokens: tokenizer.stopTokenIds(), sampling: readSampling(body), signal,
    onText: (soFar) => {
      const delta = shown.update(soFar);
      if (delta && stream) stream(textCompletion(frame, delta, null));
      if (shown.stopped) ours.abort();
    },
  });
  shown.update(result.text);
  const end = answerEnd(result, opts.signal?.aborted === true, shown.stopped, 0);
  const usage = usageOf(prompt.length, result.ids.length);
  if (end.kind === 'cancelled') return { end, usage };
  if (!stream) return { end, usage, response: textCompletion(frame, shown.text, end.finish, usage) };
  const tail = shown.flush();
  if (tail) stream(textCompletion(frame, tail, null));
  stream(textCompletion(frame, '', end.finish, includeUsage ? usage : undefined));
  return { end, usage };
}
