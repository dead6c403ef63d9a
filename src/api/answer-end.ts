// How one answer of the room ended, in the API's words: a finish_reason for an answer that is whole, an
// ApiError for one that is not (a device left: 503; the generator failed: 500), or `cancelled` when the
// client went away (nothing is sent then).
import type { BackendResult } from '../agent/backend.ts';
import { ApiError } from './api-error.ts';
import type { FinishReason } from './openai-objects.ts';

export type AnswerEnd = { kind: 'finished'; finish: FinishReason } | { kind: 'cancelled' };

/** `stoppedByUs`: the run was ended on purpose (a stop string was sampled): a whole answer. */
export function answerEnd(r: BackendResult, clientGone: boolean, stoppedByUs: boolean, calls: number): AnswerEnd {
  if (clientGone) return { kind: 'cancelled' };
  if (r.finish === 'stopped' && !stoppedByUs) {
    throw new ApiError(503, `a device left the room mid-answer${r.note ? ` (${r.note})` : ''}; the room deals its layers again, try again shortly`, 'service_unavailable');
  }
  if (r.finish === 'error') throw new ApiError(500, `the room's model failed: ${r.error?.message ?? 'unknown error'}`);
  if (calls > 0) return { kind: 'finished', finish: 'tool_calls' };
  return { kind: 'finished', finish: r.finish === 'cap' || r.finish === 'context' ? 'length' : 'stop' };
}
