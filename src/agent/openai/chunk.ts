// One completion chunk as OpenAI-compatible servers stream it (or send whole): the fields we read, and the
// named error for an event that is not one (`data: null`, an array, text that is not JSON).
import { ServerError } from './server.ts';

/** An event that is not a completion chunk (not JSON, not an object, fields of the wrong shape). */
export class MalformedEvent extends ServerError {
  override name = 'MalformedEvent';
}

export interface ChatDelta { content?: unknown; tool_calls?: unknown }

export interface CompletionChunk {
  choices?: { text?: unknown; delta?: ChatDelta; message?: ChatDelta; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } };
  timings?: { prompt_n?: number; cache_n?: number };
  error?: unknown;
}

/** One event's data as a chunk; refuses what is not a JSON object, by name. */
export function parseChunk(data: string): CompletionChunk {
  let event: unknown;
  try {
    event = JSON.parse(data);
  } catch {
    throw new MalformedEvent(`the server sent a malformed event (not JSON): ${data.slice(0, 200)}`);
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    throw new MalformedEvent(`the server sent a malformed event (not a JSON object): ${data.slice(0, 200)}`);
  }
  return event as CompletionChunk;
}

export const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The words of an error event: a string, or {message}, else its JSON. */
export function errorText(e: unknown): string {
  if (typeof e === 'string') return e;
  if (e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') return (e as { message: string }).message;
  return JSON.stringify(e);
}
