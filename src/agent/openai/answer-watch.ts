// The two clocks on one answer from a server, so that no stream can keep a request open for ever:
//   - the deadline: the whole answer (connect, prefill, every token) must be over within deadlineMs;
//   - the progress rule: a new token (new text, or a tool call's next piece) must come within progressMs
//     of the last one (or of the start). Bytes that bring nothing new — pings, comments, empty events,
//     an event dribbled in one byte at a time — do not count as progress, so they cannot keep it open.
// Either one aborts the HTTP request; the answer then ends `error` with an AnswerTimeout that names the
// rule, the limit and what came meanwhile. The timers are injectable so tests run on short limits or a
// fake clock.
import { ServerError } from './server.ts';

/** The answer ran past one of its limits (`rule` says which). */
export class AnswerTimeout extends ServerError {
  override name = 'AnswerTimeout';
  constructor(message: string, readonly rule: 'deadline' | 'progress') {
    super(message);
  }
}

export interface AnswerLimits {
  /** The whole answer must be over within this long (default 20 min: 4,096 tokens at a slow CPU's 4 tok/s is 17 min). */
  deadlineMs: number;
  /** A new token must come within this long of the last one or of the start (default 120 s: a big prompt's prefill can take a while). */
  progressMs: number;
}

export const DEFAULT_ANSWER_LIMITS: AnswerLimits = { deadlineMs: 20 * 60_000, progressMs: 120_000 };

export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export class AnswerWatch {
  /** Which limit ended the answer, if one did. */
  tripped: 'deadline' | 'progress' | null = null;
  private deadline: unknown;
  private progressTimer: unknown;
  /** Reads (chunks of bytes) since the last progress, for the message. */
  private readsSinceProgress = 0;
  private tokens = 0;
  private over = false;

  constructor(private readonly limits: AnswerLimits, private readonly onTrip: () => void, private readonly timers: Timers = realTimers) {
    this.deadline = timers.set(() => this.trip('deadline'), limits.deadlineMs);
    this.restartProgress();
  }

  /** Bytes came (whatever they hold). */
  read(): void {
    this.readsSinceProgress++;
  }

  /** A new token came: the progress clock starts again. */
  progress(): void {
    if (this.over) return;
    this.tokens++;
    this.readsSinceProgress = 0;
    this.restartProgress();
  }

  /** The answer is over: no limit applies any more. */
  done(): void {
    this.over = true;
    this.timers.clear(this.deadline);
    this.timers.clear(this.progressTimer);
  }

  /** The named error for the limit that tripped. */
  error(base: string): AnswerTimeout {
    const s = (ms: number) => `${ms / 1000} s`;
    if (this.tripped === 'deadline') {
      return new AnswerTimeout(`the server at ${base} was still answering after ${s(this.limits.deadlineMs)}, the deadline for one answer (${this.tokens} pieces of text came)`, 'deadline');
    }
    const what = this.readsSinceProgress === 0
      ? `sent nothing for ${s(this.limits.progressMs)}`
      : `sent ${this.readsSinceProgress} reads but no new text for ${s(this.limits.progressMs)} (pings, empty events or a stream dribbled byte by byte)`;
    return new AnswerTimeout(`the server at ${base} ${what}`, 'progress');
  }

  private restartProgress(): void {
    this.timers.clear(this.progressTimer);
    this.progressTimer = this.timers.set(() => this.trip('progress'), this.limits.progressMs);
  }

  private trip(rule: 'deadline' | 'progress'): void {
    if (this.tripped) return;
    this.tripped = rule;
    this.done();
    this.onTrip();
  }
}
