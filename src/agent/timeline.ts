// The timeline: the agent's events folded into the items the UI shows and the session keeps (last 200).
import type { AgentEvent, NoteKind, SkipReason } from './events.ts';
import type { EndReason } from './summary.ts';
import { TIMELINE_LIMIT } from './limits.ts';

export { TIMELINE_LIMIT };

export type TimelineItem =
  | { kind: 'request'; request: number; text: string }
  | { kind: 'text'; step: number; text: string }
  | {
      kind: 'call'; step: number; call: number; name: string; arguments: Record<string, unknown>; raw: string;
      state: CallState;
      result?: string;
      /** What was mended between the model's text and the call that ran (absent for a clean call). */
      repairs?: string[];
    }
  | { kind: 'note'; step: number; note: NoteKind; text: string }
  | { kind: 'summary'; request: number; reason: EndReason; line: string; tip?: string };

/**
 * A call card's states, the one list the card, the timeline and the session reader share (a state the app
 * writes that its reader did not know once cost a user the whole conversation). Every card ends in a final
 * one: done, failed, rejected or not-run.
 */
export const CALL_STATES = ['writing', 'waiting', 'running', 'done', 'failed', 'rejected', 'not-run'] as const;
export type CallState = (typeof CALL_STATES)[number];
const FINAL: ReadonlySet<CallState> = new Set(['done', 'failed', 'rejected', 'not-run']);

export class Timeline {
  readonly items: TimelineItem[];

  /** A restored timeline saved mid-request (the page was closed) has its open cards closed as not run. */
  constructor(restored: TimelineItem[] = []) {
    this.items = restored.slice(-TIMELINE_LIMIT);
    this.closeOpenCards();
  }

  apply(event: AgentEvent): void {
    const last = this.items[this.items.length - 1];
    switch (event.type) {
      case 'request':
        this.push({ kind: 'request', request: event.request, text: event.text });
        break;
      case 'text':
        if (last?.kind === 'text' && last.step === event.step) last.text += event.delta;
        else this.push({ kind: 'text', step: event.step, text: event.delta });
        break;
      case 'call-start':
        this.push({ kind: 'call', step: event.step, call: event.call, name: '', arguments: {}, raw: '', state: 'writing' });
        break;
      case 'call-args': {
        const item = this.call(event.call);
        if (item) item.raw = event.raw;
        break;
      }
      case 'call': {
        const item = this.call(event.call);
        const repairs = event.repairs?.length ? { repairs: [...event.repairs] } : {};
        if (item) Object.assign(item, { name: event.name, arguments: event.arguments, state: 'running' }, repairs);
        else this.push({ kind: 'call', step: event.step, call: event.call, name: event.name, arguments: event.arguments, raw: '', state: 'running', ...repairs });
        break;
      }
      case 'approval': {
        const item = this.call(event.call);
        if (item) item.state = event.state === 'waiting' ? 'waiting' : event.state === 'approved' ? 'running' : 'rejected';
        break;
      }
      case 'result': {
        const item = this.call(event.call);
        if (item) {
          item.result = event.text;
          if (item.state !== 'rejected') item.state = event.ok ? 'done' : isNotRun(event.skipped) ? 'not-run' : 'failed';
        }
        break;
      }
      case 'note':
        this.push({ kind: 'note', step: event.step, note: event.kind, text: event.text });
        break;
      case 'summary':
        this.closeOpenCards();
        this.push({ kind: 'summary', request: event.request, reason: event.reason, line: event.line, ...(event.tip ? { tip: event.tip } : {}) });
        break;
      case 'step':
        break;
    }
  }

  /** Cards still writing, waiting or running when a request ends never ran to a result: not run. */
  private closeOpenCards(): void {
    for (const item of this.items) {
      if (item.kind === 'call' && !FINAL.has(item.state)) {
        item.state = 'not-run';
        item.result ??= 'not run: the request ended first';
      }
    }
  }

  private call(id: number): Extract<TimelineItem, { kind: 'call' }> | undefined {
    for (let i = this.items.length - 1; i >= 0; i--) {
      const item = this.items[i]!;
      if (item.kind === 'call' && item.call === id) return item;
    }
    return undefined;
  }

  private push(item: TimelineItem): void {
    this.items.push(item);
    if (this.items.length > TIMELINE_LIMIT) this.items.splice(0, this.items.length - TIMELINE_LIMIT);
  }
}

function isNotRun(skipped: SkipReason | undefined): boolean {
  return skipped !== undefined && skipped !== 'repeat';
}
