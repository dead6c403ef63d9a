// Stuck detection (docs/agent.md, Stuck detection):
// - the same call made no progress 3 steps in a row (it failed, it was a write not run twice, or a
//   read-only call gave the same result with nothing changed) -> stuck; a note one step before;
// - the page reported the same first error 5 times, each check after a change -> stuck; note at the 3rd.
export type StuckVerdict =
  | { kind: 'ok' }
  | { kind: 'warn'; note: string }
  | { kind: 'stuck'; note: string };

import { CALL_STREAK_STOP, PAGE_ERROR_NOTE, PAGE_ERROR_STOP } from './limits.ts';

export interface StepCall {
  key: string;                 // name + canonical arguments
  label: string;               // "edit_file game.js"
  stalled: boolean;            // failed / not run again / same read-only result
  error: string;               // what went wrong (or "same result")
}

export class CallStreaks {
  private streaks = new Map<string, { count: number; step: number }>();

  /** Feeds one step's calls; returns the verdict for this step. */
  record(step: number, calls: StepCall[]): StuckVerdict {
    const next = new Map<string, { count: number; step: number }>();
    let worst: { count: number; call: StepCall } | null = null;
    for (const call of calls) {
      if (!call.stalled || next.has(call.key)) continue;
      const prev = this.streaks.get(call.key);
      const count = prev && prev.step === step - 1 ? prev.count + 1 : 1;
      next.set(call.key, { count, step });
      if (!worst || count > worst.count) worst = { count, call };
    }
    this.streaks = next;
    if (!worst) return { kind: 'ok' };
    const { count, call } = worst;
    if (count >= CALL_STREAK_STOP) {
      return { kind: 'stuck', note: `stuck: ${call.label} made no progress ${count} steps in a row (${call.error})` };
    }
    if (count === CALL_STREAK_STOP - 1) {
      return {
        kind: 'warn',
        note: `Note: you repeated ${call.label} ${count} steps in a row and it made no progress (${call.error}). ` +
          'Do something different now; one more time stops the request.',
      };
    }
    return { kind: 'ok' };
  }
}

export class PageErrorStreak {
  private error: string | null = null;
  private count = 0;
  private changesAtCheck = -1;

  /**
   * A page check (serve): its first error, or null when it loaded clean. changes: a counter of changes
   * to the project's files (by the agent or by hand), so a check can tell whether anything changed since.
   */
  check(firstError: string | null, changes: number): StuckVerdict {
    const changed = changes !== this.changesAtCheck;
    this.changesAtCheck = changes;
    if (firstError === null) {
      this.error = null;
      this.count = 0;
      return { kind: 'ok' };
    }
    if (firstError !== this.error) {
      this.error = firstError;
      this.count = 1;
      return { kind: 'ok' };
    }
    if (!changed) return { kind: 'ok' }; // the same page checked again without a change: not another try
    this.count++;
    if (this.count >= PAGE_ERROR_STOP) {
      return { kind: 'stuck', note: `stuck: the page reported the same first error ${this.count} times after changes: ${firstError}` };
    }
    if (this.count === PAGE_ERROR_NOTE) {
      return {
        kind: 'warn',
        note: `Note: the page has reported the same first error ${this.count} times after your changes: ${firstError}. ` +
          'Read the code around it and try a different fix.',
      };
    }
    return { kind: 'ok' };
  }
}
