// Splits a streaming answer into what the timeline shows: plain text (as deltas) and tool calls as
// they fill in. Text that could be the start of "<tool_call>" is held back until it is clear, so half
// a marker never shows. A block ends where the parser says it does (parse/blocks.ts): a marker inside
// a JSON string or an XML parameter value is part of the call, and a block whose text so far ends inside
// one stays open until it is clear.
import type { AgentEvent } from './events.ts';
import { CLOSE_TAG, OPEN_TAG, readToolCallBlock } from './parse/blocks.ts';

export class AnswerStream {
  private shownText = 0;       // characters of visible text already emitted
  private callsStarted = 0;
  private lastRaw: string[] = [];

  constructor(private readonly step: number, private readonly firstCallId: number, private readonly emit: (e: AgentEvent) => void) {}

  /** Feed the whole decoded answer so far. */
  update(textSoFar: string): void {
    const firstOpen = textSoFar.indexOf(OPEN_TAG);
    const visibleEnd = firstOpen >= 0 ? firstOpen : textSoFar.length - heldBack(textSoFar, OPEN_TAG);
    if (visibleEnd > this.shownText) {
      this.emit({ type: 'text', step: this.step, delta: textSoFar.slice(this.shownText, visibleEnd) });
      this.shownText = visibleEnd;
    }
    for (let at = firstOpen, i = 0; at >= 0; i++) {
      const block = readToolCallBlock(textSoFar, at, true);
      const call = this.firstCallId + i;
      if (i >= this.callsStarted) {
        this.emit({ type: 'call-start', step: this.step, call });
        this.callsStarted = i + 1;
      }
      let body = textSoFar.slice(block.bodyStart, block.bodyEnd);
      if (block.bodyEnd === textSoFar.length && !block.open) body = body.slice(0, body.length - heldBack(body, CLOSE_TAG));
      const raw = body.trim();
      if (raw !== (this.lastRaw[i] ?? '')) {
        this.lastRaw[i] = raw;
        this.emit({ type: 'call-args', step: this.step, call, raw });
      }
      at = block.next;
    }
  }

  /** Calls whose start was shown while streaming. */
  get startedCalls(): number {
    return this.callsStarted;
  }
}

/** How many trailing characters might begin `marker`. */
function heldBack(text: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
    if (marker.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}
