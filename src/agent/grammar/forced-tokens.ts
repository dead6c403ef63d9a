// Garbage detection (docs/agent.md, "Stuck in a room with several devices"). A model that works picks a
// token the call format allows almost every time; the grammar overrules it only now and then (a wrong
// parameter name, a name it misspells). An engine producing garbage — a split model whose hidden states
// are corrupted, say — wants something the format forbids nearly every token, and the grammar then
// writes the call on its own. So the tokens the grammar overruled are counted per answer, inside calls:
// FORCED_RUN_STOP in a row, or more than FORCED_SHARE of one call once it has FORCED_MIN_CALL_TOKENS,
// stops the answer, which ends the request with reason `error` and a note saying the engine produces
// garbage. The model's own choice is reported by whoever samples (see TokenMaskSource.overruled).
import { FORCED_MIN_CALL_TOKENS, FORCED_RUN_STOP, FORCED_SHARE } from '../limits.ts';

export class ForcedTokenWatch {
  private run = 0;             // overruled tokens in a row (inside calls)
  private callTokens = 0;      // tokens of the current call
  private callForced = 0;      // of which overruled
  /** Why the answer was stopped, once it was. */
  tripped: string | null = null;

  /** One token sampled inside a call; overruled: the format did not allow the model's own top choice. */
  record(overruled: boolean): void {
    if (this.tripped) return;
    this.callTokens++;
    if (overruled) {
      this.run++;
      this.callForced++;
    } else {
      this.run = 0;
    }
    if (this.run >= FORCED_RUN_STOP) {
      this.tripped = `the call format overruled the model's own choice ${this.run} tokens in a row`;
    } else if (this.callTokens >= FORCED_MIN_CALL_TOKENS && this.callForced > FORCED_SHARE * this.callTokens) {
      this.tripped = `the call format overruled the model's own choice on ${this.callForced} of the call's ${this.callTokens} tokens`;
    }
  }

  /** Take another watch's counts (a cursor's copy). */
  copyFrom(other: ForcedTokenWatch): void {
    this.run = other.run;
    this.callTokens = other.callTokens;
    this.callForced = other.callForced;
    this.tripped = other.tripped;
  }

  /** A call closed: the share starts again with the next one (the run does too). */
  endCall(): void {
    this.callTokens = 0;
    this.callForced = 0;
    this.run = 0;
  }
}

/** The note a garbage stop leaves: what happened and what to do. */
export function garbageNote(tripped: string): string {
  return `too many tokens were forced by the call format (${tripped}): the room's engine is producing garbage. Try again, or reload the model`;
}
