// The sampling fields every OpenAI body may carry (chat and completions alike), read and bounded:
// temperature, top_p, top_k (llama.cpp's and vLLM's extension), seed, stop strings, max_tokens, n = 1.
// Absent fields take the agent's defaults (Qwen3's non-thinking settings, src/agent/engine-backend.ts).
import type { SamplingOptions } from '../model/sampling-types.ts';
import { QWEN3_NON_THINKING } from '../agent/engine-backend.ts';
import { badRequest } from './api-error.ts';
import { API_LIMITS } from './limits.ts';

export type Body = Record<string, unknown>;

/** A finite number in [lo, hi] or absent; anything else is a 400 naming the field. */
function numberIn(body: Body, key: string, lo: number, hi: number): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < lo || v > hi) throw badRequest(key, `must be a number from ${lo} to ${hi}`);
  return v;
}

function integerIn(body: Body, key: string, lo: number, hi: number): number | undefined {
  const v = numberIn(body, key, lo, hi);
  if (v !== undefined && !Number.isInteger(v)) throw badRequest(key, 'must be an integer');
  return v;
}

/** temperature / top_p / top_k / seed over the defaults; temperature 0 is greedy (top-p and top-k then do nothing). */
export function readSampling(body: Body, defaults: SamplingOptions = QWEN3_NON_THINKING): SamplingOptions {
  const temperature = numberIn(body, 'temperature', 0, 2);
  const topP = numberIn(body, 'top_p', 0, 1);
  const topK = integerIn(body, 'top_k', 0, 1_000_000);
  const seed = integerIn(body, 'seed', -(2 ** 53), 2 ** 53);
  const out: SamplingOptions = { ...defaults };
  if (temperature !== undefined) out.temperature = temperature;
  if (topP !== undefined) out.topP = topP;
  if (topK !== undefined) out.topK = topK;
  // The sampler takes a 32-bit seed: a client's larger one is folded into it, the same seed giving the same answer.
  if (seed !== undefined) out.seed = Number(BigInt.asUintN(32, BigInt(seed)));
  return out;
}

/** `stop`: a string or up to four strings (empty ones dropped). */
export function readStop(body: Body): string[] {
  const v = body.stop;
  if (v === undefined || v === null) return [];
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.length > API_LIMITS.stopStrings || !list.every((s) => typeof s === 'string' && s.length <= API_LIMITS.stopChars)) {
    throw badRequest('stop', `must be a string or up to ${API_LIMITS.stopStrings} strings of at most ${API_LIMITS.stopChars} characters`);
  }
  return (list as string[]).filter((s) => s !== '');
}

/** max_tokens (or max_completion_tokens), at least 1; undefined when absent. The context bound is checked once the prompt is counted. */
export function readMaxTokens(body: Body): number | undefined {
  const a = integerIn(body, 'max_tokens', 1, 2 ** 31);
  const b = integerIn(body, 'max_completion_tokens', 1, 2 ** 31);
  return a ?? b;
}

/** One answer per request: `n` absent or 1. */
export function requireOneChoice(body: Body): void {
  if (body.n !== undefined && body.n !== null && body.n !== 1) throw badRequest('n', 'only n = 1 is served (the room runs one answer at a time)');
}

export function readStream(body: Body): { stream: boolean; includeUsage: boolean } {
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') throw badRequest('stream', 'must be true or false');
  const opts = body.stream_options;
  const includeUsage = !!opts && typeof opts === 'object' && (opts as Body).include_usage === true;
  return { stream: body.stream === true, includeUsage };
}

/**
 * The answer cap: what the client asked (or the default), refused when prompt + answer cannot fit the
 * context (OpenAI's "maximum context length" 400); without a request it is what the context has left.
 */
export function answerCap(promptTokens: number, contextSize: number, asked: number | undefined): number {
  const room = contextSize - promptTokens;
  if (room < 1) throw badRequest('messages', `the prompt is ${promptTokens} tokens; this model's context is ${contextSize} tokens`);
  if (asked === undefined) return room;
  if (asked > room) throw badRequest('max_tokens', `${asked} + the prompt's ${promptTokens} tokens exceed this model's context of ${contextSize} tokens`);
  return asked;
}
