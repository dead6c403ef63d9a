// One request's running state for the loop (loop.ts): its counters, the streaks stuck detection keeps,
// the answer shown so far, and the typed end every step may raise. The loop's header lists the end rules.
import type { BackendResult } from './backend.ts';
import type { ToolFormat } from '../model/tool-format.ts';
import type { CallMemory } from './call-runner.ts';
import type { CallConstraint } from './call-codec.ts';
import type { SkipReason } from './events.ts';
import { HintBudget } from './hints.ts';
import { CallStreaks, PageErrorStreak } from './stuck.ts';
import type { EndReason, RequestStats } from './summary.ts';

/** What an end note may need beyond its reason (summary.ts, endNote); `note` replaces the note whole. */
export interface EndDetail {
  error?: string; stuck?: string; left?: string; note?: string;
  /** Stop between calls: the calls that ran and those that did not, in a few words each. */
  ran?: string[]; notRun?: string[];
}

/**
 * A request ends: thrown anywhere inside a step and caught in ONE place (Agent.runRequest), which writes
 * the end note and the summary. Anything else thrown is a bug and passes through.
 */
export class RequestEnded extends Error {
  override name = 'RequestEnded';
  constructor(readonly reason: EndReason, readonly detail: EndDetail = {}) {
    super(`request ended: ${reason}`);
  }
}

/** Why streamed call cards close without running (the card's "not run: …"). */
export type NotRunReason = Exclude<SkipReason, 'repeat'>;

/** One answer as the step sees it: the backend's result and the call cards its stream opened. */
export interface Answer {
  step: number;
  result: BackendResult;
  constraint: CallConstraint | undefined;
  /** Cards streamed for this answer took the ids firstCallId … firstCallId + streamed - 1, in order. */
  firstCallId: number;
  streamed: number;
}

export interface RequestLimits { maxSteps: number; cap: number; budget: number; target: number }

export class RequestRun {
  readonly started = performance.now();
  readonly stats: RequestStats;
  readonly hints: HintBudget;
  readonly streaks = new CallStreaks();
  readonly pageErrors = new PageErrorStreak();
  /** The empty-answer nudge was sent (a second empty answer after it ends the request). */
  nudged = false;
  /** The step whose serve loaded the page clean with nothing changed after it, or -1. */
  cleanServeAt = -1;
  /** What the summary event and the outcome carry as the request's answer (the last prose kept). */
  answer = '';
  /** Answers run again after the room lost a device (at most MAX_RERUNS). */
  reruns = 0;
  /** Why the room could not run again, when it said (the end note uses it instead of the generic advice). */
  notRecovered?: string;

  constructor(
    readonly request: number,
    readonly limits: RequestLimits,
    readonly memory: CallMemory,
    format: ToolFormat,
    where: Pick<RequestStats, 'devices' | 'runsOn'>,
    readonly signal?: AbortSignal,
  ) {
    this.stats = {
      steps: 0, toolCalls: 0, generated: 0, generateSeconds: 0, devices: where.devices, seconds: 0,
      ...(where.runsOn ? { runsOn: where.runsOn } : {}),
    };
    this.hints = new HintBudget(format);
  }

  get stopped(): boolean {
    return this.signal?.aborted === true;
  }

  /** Adds one answer's tokens, time, server count and speculation figures to the request's stats. */
  addAnswerStats(result: BackendResult): void {
    const stats = this.stats;
    stats.generated += result.stats.generated;
    stats.generateSeconds += result.stats.seconds;
    if (result.serverUsage) stats.serverTokens = (stats.serverTokens ?? 0) + result.serverUsage.completionTokens;
    if (result.stats.passes === undefined) return;
    stats.drafted = (stats.drafted ?? 0) + (result.stats.drafted ?? 0);
    stats.accepted = (stats.accepted ?? 0) + (result.stats.accepted ?? 0);
    stats.passes = (stats.passes ?? 0) + result.stats.passes;
    const d = result.stats.drafter;
    if (d && !(stats.drafter ?? '').split(', ').includes(d)) stats.drafter = stats.drafter ? `${stats.drafter}, ${d}` : d;
  }
}
