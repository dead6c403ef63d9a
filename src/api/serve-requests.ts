// The relay's requests run on the room's model: `chat` through runChat, `completion` through runCompletion
// (a table row each), ApiErrors sent as the error frame they describe, and one ServedLine per request for
// the host screen's counters and timeline.
import type { ApiModel } from './api-model.ts';
import { ApiError } from './api-error.ts';
import type { RequestHandler, RequestEnd } from './relay-client.ts';
import type { RequestKind } from './relay-wire.ts';
import { runChat, type RunOptions, type RunOutcome } from './run-chat.ts';
import { runCompletion } from './run-completion.ts';

const RUNNERS: Record<RequestKind, (model: ApiModel, body: unknown, opts: RunOptions) => Promise<RunOutcome>> = {
  chat: runChat,
  completion: runCompletion,
};

/** One request as the host screen lists it. */
export interface ServedLine {
  client: string;
  kind: RequestKind;
  /** ok, cancelled (the client left), or the error status sent. */
  outcome: 'ok' | 'cancelled' | number;
  promptTokens: number;
  completionTokens: number;
  /** The error's words, when it failed. */
  message?: string;
}

/**
 * After a device left mid-answer (a 503), the next request first waits, bounded, until the room can run
 * again (Backend.recover: the room deals its layers again without that device), as the agent's loop does.
 */
export function requestHandler(model: () => ApiModel, onServed?: (line: ServedLine) => void): RequestHandler {
  let recoverFirst = false;
  return async (request, chunk, signal): Promise<RequestEnd> => {
    const client = request.client.trim() || 'unnamed client';
    const line = (l: Omit<ServedLine, 'client' | 'kind'>) => onServed?.({ client, kind: request.kind, ...l });
    try {
      const { backend } = model();
      if (recoverFirst && backend.recover) {
        const outcome = await backend.recover(signal);
        if (!outcome.ok) throw new ApiError(503, `the room cannot run yet: ${outcome.text}`, 'service_unavailable');
      }
      recoverFirst = false;
      const out = await RUNNERS[request.kind](model(), request.body, { signal, onChunk: chunk });
      line({ outcome: out.end.kind === 'cancelled' ? 'cancelled' : 'ok', promptTokens: out.usage.prompt_tokens, completionTokens: out.usage.completion_tokens });
      if (out.end.kind === 'cancelled') return { kind: 'cancelled' };
      return out.response ? { kind: 'done', response: out.response } : { kind: 'done' };
    } catch (e) {
      const err = e instanceof ApiError ? e : new ApiError(500, `the host failed: ${(e as Error)?.message ?? String(e)}`);
      if (err.status === 503) recoverFirst = true;
      line({ outcome: err.status, promptTokens: 0, completionTokens: 0, message: err.message });
      return { kind: 'error', status: err.status, message: err.message, type: err.type };
    }
  };
}
