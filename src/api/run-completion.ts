// One /v1/completions request: the prompt string encoded as it is (no template), sampled freely, cut at
// stop strings; a text_completion object, or the same object streamed one piece of text per chunk. The
// prompt may also be token ids (OpenAI's array of integers): taken as they are, exactly.
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
  const { backend, tokenizer } = model;
  const prompt = promptIds(body.prompt, model);
  if (body.echo === true || (body.best_of !== undefined && body.best_of !== 1)) throw badRequest('echo/best_of', 'are not served');
  const { stream: streaming, includeUsage } = readStream(body);
  const stops = readStop(body);
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

/** The prompt's ids: one string encoded, or one list of token ids of this model's vocabulary taken as given. */
function promptIds(prompt: unknown, model: ApiModel): number[] {
  const one = Array.isArray(prompt) && prompt.length === 1 && (typeof prompt[0] === 'string' || Array.isArray(prompt[0])) ? prompt[0] : prompt;
  if (typeof one === 'string' && one !== '') return model.backend.encode(one);
  const vocab = model.tokenizer.vocabSize;
  if (Array.isArray(one) && one.length > 0 && one.every((id) => Number.isInteger(id) && id >= 0 && id < vocab)) return one as number[];
  throw badRequest('prompt', `must be one non-empty string or one list of token ids below ${vocab}`);
}
