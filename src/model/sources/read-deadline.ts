// How long a read of a model file over HTTP may take (http.ts): a grace period plus its bytes at a
// minimum rate. A server that answers each range request with one correctly labelled byte, or that sends
// a body a byte at a time, or that stops mid-body, is stopped at the deadline with an error naming the
// server, instead of keeping a load going for ever (65 one-byte answers a second would take ~3 days for
// a 16 MB file). Documented in README.md (design decisions, "Ranged, lazy loading").
import { ModelSourceError } from '../errors.ts';

export const READ_DEADLINE = {
  /** The slowest server a load waits for: 256 KiB/s (2 Mbit/s) over each read's bytes. */
  minBytesPerSecond: 256 * 1024,
  /** Time every read gets besides its bytes: connection, TLS, a CDN's first byte, retries. */
  graceMs: 30_000,
} as const;

export interface ReadDeadlineOptions {
  minBytesPerSecond?: number | undefined;
  graceMs?: number | undefined;
}

/** The deadline of one read of `bytes` bytes of `file` from `server` (its origin, for the message). */
export class ReadDeadline {
  private readonly started = performance.now();
  readonly ms: number;
  private readonly rate: number;

  constructor(readonly server: string, readonly file: string, readonly url: string, readonly bytes: number, o: ReadDeadlineOptions = {}) {
    this.rate = o.minBytesPerSecond ?? READ_DEADLINE.minBytesPerSecond;
    this.ms = (o.graceMs ?? READ_DEADLINE.graceMs) + (Math.max(0, bytes) / this.rate) * 1000;
  }

  remainingMs(): number { return Math.max(0, this.started + this.ms - performance.now()); }

  /** The error once the deadline is past: how much came, and the rule. */
  error(got: number): ModelSourceError {
    const s = ((performance.now() - this.started) / 1000).toFixed(1);
    return new ModelSourceError(
      `the server ${this.server} is too slow: ${got} of ${this.bytes} bytes in ${s} s; a read must finish within ` +
      `${(this.ms / 1000).toFixed(1)} s (a grace period plus its bytes at ${Math.round(this.rate / 1024)} KiB/s), so the load stops here`,
      { file: this.file, url: this.url });
  }

  /** Throws error(got) once the deadline is past. */
  check(got: number): void { if (this.remainingMs() <= 0) throw this.error(got); }

  /** `p`, or error(got()) when the deadline comes first (the timer is cleared either way). */
  async race<T>(p: Promise<T>, got: () => number): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(this.error(got())), this.remainingMs()); });
    try { return await Promise.race([p, late]); } finally { clearTimeout(timer); }
  }
}

/** The origin of `url` (what a message names as the server), or the URL itself when it does not parse. */
export function serverOf(url: string): string {
  try { return new URL(url).origin; } catch { return url; }
}
