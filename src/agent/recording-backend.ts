// A Backend that remembers every request and result of the Backend it wraps, in order: what tests of the
// loop and the compaction bench inspect (prompts as sent, exact token counts as returned).
import type { Backend, BackendRequest, BackendResult } from './backend.ts';
import type { RecoverOutcome } from '../model/generate-types.ts';
import type { ChatMessage, ToolSchema } from '../model/chat-types.ts';

export class RecordingBackend implements Backend {
  readonly requests: BackendRequest[] = [];
  readonly results: BackendResult[] = [];

  readonly recover?: (signal?: AbortSignal) => Promise<RecoverOutcome>;

  constructor(private readonly inner: Backend) {
    if (inner.recover) this.recover = (signal) => inner.recover!(signal);
  }

  get name(): string { return this.inner.name; }
  get contextSize(): number { return this.inner.contextSize; }
  get devices(): number { return this.inner.devices; }
  encode(text: string): number[] { return this.inner.encode(text); }
  decode(ids: number[]): string { return this.inner.decode(ids); }
  render(messages: ChatMessage[], tools: ToolSchema[]): string { return this.inner.render(messages, tools); }

  async generate(req: BackendRequest): Promise<BackendResult> {
    this.requests.push(req);
    const result = await this.inner.generate(req);
    this.results.push(result);
    return result;
  }
}
