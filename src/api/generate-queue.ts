// One stream through the room at a time: the agent's answers and the API's requests take turns on the
// same Backend, in the order they asked (FIFO). QueuedBackend is the Backend both are given; its generate
// waits for its turn, then runs. A request aborted while it waits leaves the line at once and comes back
// `stopped` with nothing generated (as an answer stopped before its first token); one aborted while it
// runs is stopped by the generator itself within one token (GenerateOptions.signal).
import type { Backend, BackendRequest, BackendResult } from '../agent/backend.ts';
import type { ChatMessage, ToolSchema } from '../model/chat-types.ts';
import type { RecoverOutcome } from '../model/generate-types.ts';

export class GenerateQueue {
  private tail: Promise<void> = Promise.resolve();
  private waiting = 0;

  /** Requests waiting for their turn (the running one not counted). */
  get queued(): number { return this.waiting; }

  /**
   * Runs `job` once every earlier job has finished. With `signal` aborted while waiting, resolves to
   * `onAbort()` without running `job` (and without holding up the jobs behind it).
   */
  run<T>(job: () => Promise<T>, signal: AbortSignal | undefined, onAbort: () => T): Promise<T> {
    const before = this.tail;
    let release!: () => void;
    const mine = new Promise<void>((resolve) => { release = resolve; });
    // The next job waits for this one's end, or for its leaving the line: whichever comes first.
    this.tail = before.then(() => mine);
    if (signal?.aborted) { release(); return Promise.resolve(onAbort()); }
    this.waiting++;
    return new Promise<T>((resolve, reject) => {
      let left = false;
      const leave = () => {
        left = true;
        this.waiting--;
        // Out of the line now; the chain still passes through `mine` once `before` is done, at no cost.
        release();
        resolve(onAbort());
      };
      signal?.addEventListener('abort', leave, { once: true });
      void before.then(async () => {
        signal?.removeEventListener('abort', leave);
        if (left) return;
        this.waiting--;
        try {
          resolve(await job());
        } catch (e) {
          reject(e);
        } finally {
          release();
        }
      });
    });
  }
}

/** A Backend whose answers take turns on `queue` (the agent's and the API's share one queue). */
export class QueuedBackend implements Backend {
  readonly recover?: (signal?: AbortSignal) => Promise<RecoverOutcome>;

  constructor(private readonly inner: Backend, readonly queue: GenerateQueue = new GenerateQueue()) {
    if (inner.recover) this.recover = (signal) => inner.recover!(signal);
  }

  get name(): string { return this.inner.name; }
  get contextSize(): number { return this.inner.contextSize; }
  get devices(): number { return this.inner.devices; }
  get runsOn(): Backend['runsOn'] { return this.inner.runsOn; }
  encode(text: string): number[] { return this.inner.encode(text); }
  decode(ids: number[]): string { return this.inner.decode(ids); }
  render(messages: ChatMessage[], tools: ToolSchema[]): string { return this.inner.render(messages, tools); }

  generate(req: BackendRequest): Promise<BackendResult> {
    return this.queue.run(() => this.inner.generate(req), req.signal, () => stoppedBeforeStart(req.prompt.length));
  }
}

/** The result of an answer stopped before it began: nothing generated, nothing computed. */
export function stoppedBeforeStart(promptTokens: number): BackendResult {
  return {
    ids: [], text: '', finish: 'stopped',
    stats: {
      promptTokens, promptComputed: 0, promptReused: 0, generated: 0, prefillSeconds: 0, decodeSeconds: 0,
      prefillTokensPerSecond: 0, decodeTokensPerSecond: 0, seconds: 0, seed: 0,
    },
  };
}
