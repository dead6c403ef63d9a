// Splits a streaming answer into what the timeline shows: plain text (as deltas) and tool calls as
// they fill in. Text that could be the start of "<tool_call>" is held back until it is clear, so half
// a marker never shows.
import type { AgentEvent } from './events.ts';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

export class AnswerStream {
  private shownText = 0;       // characters of visible text already emitted
  private callsStarted = 0;
  private lastRaw: string[] = [];

  constructor(private readonly step: number, private readonly firstCallId: number, private readonly emit: (e: AgentEvent) => void) {}

  /** Feed the whole decoded answer so far. */
  update(textSoFar: string): void {
    const firstOpen = textSoFar.indexOf(OPEN);
    const visibleEnd = firstOpen >= 0 ? firstOpen : textSoFar.length - heldBack(textSoFar);
    if (visibleEnd > this.shownText) {
      this.emit({ type: 'text', step: this.step, delta: textSoFar.slice(this.shownText, visibleEnd) });
      this.shownText = visibleEnd;
    }
    if (firstOpen < 0) return;
    const bodies = textSoFar.slice(firstOpen).split(OPEN).slice(1);
    bodies.forEach((body, i) => {
      const call = this.firstCallId + i;
      if (i >= this.callsStarted) {
        this.emit({ type: 'call-start', step: this.step, call });
        this.callsStarted = i + 1;
      }
      const end = body.indexOf(CLOSE);
      const raw = (end >= 0 ? body.slice(0, end) : body).trim();
      if (raw !== (this.lastRaw[i] ?? '')) {
        this.lastRaw[i] = raw;
        this.emit({ type: 'call-args', step: this.step, call, raw });
      }
    });
  }

  /** Calls whose start was shown while streaming. */
  get startedCalls(): number {
    return this.callsStarted;
  }
}

/** How many trailing characters might begin "<tool_call>". */
function heldBack(text: string): number {
  for (let n = Math.min(OPEN.length - 1, text.length); n > 0; n--) {
    if (OPEN.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}
