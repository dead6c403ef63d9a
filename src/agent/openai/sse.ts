// Server-sent events as OpenAI-compatible servers stream them: "data: {json}" lines, events split by a
// blank line, "data: [DONE]" at the end, ":" comments (pings) ignored. Bytes in, events out; a single
// event larger than maxEventBytes is an error (a server that floods one line never ends otherwise).

export class SseError extends Error {
  override name = 'SseError';
}

export class SseParser {
  private buffer = '';
  private readonly decoder = new TextDecoder('utf-8');

  constructor(private readonly maxEventBytes = 1 << 20) {}

  /** Feeds bytes; returns the data payloads of the events completed by them, in order. */
  push(chunk: Uint8Array): string[] {
    this.buffer += this.decoder.decode(chunk, { stream: true });
    const events: string[] = [];
    for (;;) {
      const end = this.buffer.search(/\r?\n\r?\n/);
      if (end < 0) break;
      const raw = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + (this.buffer[end] === '\r' ? 4 : 2));
      const data = dataOf(raw);
      if (data !== null) events.push(data);
    }
    if (this.buffer.length > this.maxEventBytes) throw new SseError(`the server sent an event over ${this.maxEventBytes} bytes`);
    return events;
  }

  /** What is left when the stream ends (a last event without its blank line). */
  end(): string[] {
    const data = dataOf(this.buffer + this.decoder.decode());
    this.buffer = '';
    return data === null ? [] : [data];
  }
}

/** The joined "data:" lines of one event, or null for an event without data (a comment or ping). */
function dataOf(raw: string): string | null {
  const lines = raw.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, ''));
  return lines.length === 0 ? null : lines.join('\n');
}
