// The answer's text as the client sees it while it streams: cut at the first stop string (the answer is
// over there), with a tail held back while it could still begin a stop string or, when the answer may
// call, the "<tool_call>" marker. Text from the first marker on is a call's, never content.
import { cutAtStop, heldBack } from '../agent/openai/stop-strings.ts';
import { OPEN_TAG } from '../agent/parse/blocks.ts';

export class AnswerText {
  private shown = 0;
  /** A stop string was seen: the caller ends the generation. */
  stopped = false;
  /** The text up to the first stop string (all of it when none), as of the last update. */
  text = '';

  constructor(private readonly stops: readonly string[], private readonly mayCall: boolean) {}

  /** Feed the whole answer so far; returns the new content to show (maybe ''). */
  update(soFar: string, final = false): string {
    const cut = cutAtStop(soFar, this.stops);
    this.text = cut.text;
    this.stopped ||= cut.stopped;
    let end = this.text.length;
    const open = this.mayCall ? this.text.indexOf(OPEN_TAG) : -1;
    if (open >= 0) end = open;
    else if (!cut.stopped && !final) end -= heldBack(this.text, this.mayCall ? [...this.stops, OPEN_TAG] : this.stops);
    if (end <= this.shown) return '';
    const delta = this.text.slice(this.shown, end);
    this.shown = end;
    return delta;
  }

  /** What is left to show once the answer is over (a held-back tail that turned out to be text). */
  flush(): string {
    return this.update(this.text, true);
  }
}
