// Server-sent events as OpenAI-compatible servers stream them: "data: {json}" lines, events split by a
// blank line, "data: [DONE]" at the end, ":" comments (pings) ignored. Bytes in, events out; a single
// event larger than maxEventBytes is an error (a server that floods one line never ends otherwise).
//
// Incremental, as the SSE spec reads a stream: lines end at CRLF, LF or a lone CR (a CR at the end of one
// chunk and an LF at the start of the next are one line end); only the bytes of each new chunk are
// searched, and a long line is kept as pieces until its end, so one 1 MiB event in 256-byte pieces costs
// one pass over it, not one per piece. `scanned` counts the characters searched, for tests and the bench.

export class SseError extends Error {
  override name = 'SseError';
}

export class SseParser {
  /** The current line's text so far, in pieces (joined once, when the line ends). */
  private line: string[] = [];
  private lineChars = 0;
  /** The current event's data lines. */
  private data: string[] = [];
  private dataChars = 0;
  /** The last chunk ended with CR: an LF that starts the next one belongs to it. */
  private afterCr = false;
  private readonly decoder = new TextDecoder('utf-8');
  /** Characters examined for line ends, over the whole stream. */
  scanned = 0;

  constructor(private readonly maxEventBytes = 1 << 20) {}

  /** Feeds bytes; returns the data payloads of the events completed by them, in order. */
  push(chunk: Uint8Array): string[] {
    return this.feed(this.decoder.decode(chunk, { stream: true }));
  }

  /** What is left when the stream ends (a last event without its blank line). */
  end(): string[] {
    const events = this.feed(this.decoder.decode());
    if (this.lineChars > 0) this.endLine(events);
    if (this.data.length > 0) events.push(this.takeEvent());
    return events;
  }

  private feed(text: string): string[] {
    const events: string[] = [];
    let at = 0;
    if (this.afterCr && text.startsWith('\n')) at = 1;
    if (text.length > 0) this.afterCr = false;
    while (at < text.length) {
      let end = at;
      while (end < text.length && text.charCodeAt(end) !== 10 && text.charCodeAt(end) !== 13) end++;
      this.scanned += end - at + (end < text.length ? 1 : 0);
      if (end > at) {
        this.line.push(text.slice(at, end));
        this.lineChars += end - at;
        this.checkSize();
      }
      if (end === text.length) break;
      this.endLine(events);
      if (text.charCodeAt(end) === 13) {
        if (end + 1 === text.length) { this.afterCr = true; at = end + 1; break; }
        at = text.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
      } else {
        at = end + 1;
      }
    }
    return events;
  }

  /** One whole line: a blank one ends the event, a data line adds to it, anything else is ignored. */
  private endLine(events: string[]): void {
    const line = this.line.length === 1 ? this.line[0]! : this.line.join('');
    this.line = [];
    this.lineChars = 0;
    if (line === '') {
      if (this.data.length > 0) events.push(this.takeEvent());
      return;
    }
    // "data: x", "data:x" and a bare "data" line; comments (":…") and other fields (event, id, retry) are not data.
    if (line === 'data' || line.startsWith('data:')) {
      const value = line.length <= 5 ? '' : line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
      this.data.push(value);
      this.dataChars += value.length + 1;
      this.checkSize();
    }
  }

  private takeEvent(): string {
    const event = this.data.join('\n');
    this.data = [];
    this.dataChars = 0;
    return event;
  }

  private checkSize(): void {
    if (this.dataChars + this.lineChars > this.maxEventBytes) throw new SseError(`the server sent an event over ${this.maxEventBytes} bytes`);
  }
}
