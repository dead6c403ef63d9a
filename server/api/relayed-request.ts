// One client request while the host tab answers it: writes the host's chunks to the client as SSE (or
// its whole response as JSON), and makes sure the request always ends: on the host's `done` or `error`,
// on a deadline, when the host goes away, or when the client goes away. Whatever ends it first wins;
// later frames for it are ignored.
//   status before the first byte: the host's error status (or 503/504/502 of ours) with OpenAI's error body;
//   after a stream began: one `data: {"error": …}` event, then the end, never a hang.
import type { Response } from 'express';
import { errorBody, errorTypeFor } from './errors.ts';
import type { ApiLimits } from './limits.ts';
import { endEventStream, startEventStream, writeEvent } from './sse.ts';
import type { JsonObject } from '../../src/api/relay-wire.ts';

/** How a request ended; `cancelHost` when the host may still be working on it and must stop. */
export type EndRequest = (request: RelayedRequest, cancelHost: boolean) => void;

export class RelayedRequest {
  private began = false;
  private ended = false;
  private readonly totalTimer: NodeJS.Timeout;
  private gapTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly id: string,
    readonly stream: boolean,
    private readonly res: Response,
    private readonly limits: Pick<ApiLimits, 'requestTotalMs' | 'chunkGapMs'>,
    private readonly onEnd: EndRequest,
  ) {
    this.totalTimer = setTimeout(() => this.fail(504, `no answer within ${limits.requestTotalMs} ms`, 'timeout', true), limits.requestTotalMs);
    // The client went away (closed the socket, aborted): the host must stop generating for it.
    res.on('close', () => this.finish(true));
  }

  get isOpen(): boolean { return !this.ended; }

  chunk(data: JsonObject): void {
    if (this.ended) return;
    if (!this.stream) { this.fail(502, 'the host sent stream chunks for a request that is not streamed', 'server_error', true); return; }
    if (!this.began) { startEventStream(this.res); this.began = true; }
    writeEvent(this.res, data);
    clearTimeout(this.gapTimer);
    this.gapTimer = setTimeout(() => this.fail(504, `no chunk for ${this.limits.chunkGapMs} ms`, 'timeout', true), this.limits.chunkGapMs);
  }

  done(response: JsonObject | undefined): void {
    if (this.ended) return;
    if (this.stream) {
      if (!this.began) startEventStream(this.res);
      this.began = true;
      endEventStream(this.res);
    } else if (response) {
      this.res.status(200).json(response);
    } else {
      this.fail(502, 'the host ended a request that is not streamed without a response', 'server_error', false);
      return;
    }
    this.finish(false);
  }

  /** The host's error, or ours; `cancelHost` when the host may still be generating. */
  fail(status: number, message: string, type = errorTypeFor(status), cancelHost = false): void {
    if (this.ended) return;
    const body = errorBody(message, type, type === 'timeout' ? 'timeout' : null);
    if (this.began) {
      writeEvent(this.res, body);
      this.res.end();
    } else if (!this.res.headersSent) {
      this.res.status(status).json(body);
    }
    this.finish(cancelHost);
  }

  private finish(cancelHost: boolean): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.totalTimer);
    clearTimeout(this.gapTimer);
    this.onEnd(this, cancelHost);
  }
}
