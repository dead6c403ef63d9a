// The timeline: the agent's events folded into the items the UI shows and the session keeps (last 200).
import type { AgentEvent, NoteKind } from './events.ts';
import type { EndReason } from './summary.ts';
import { TIMELINE_LIMIT } from './limits.ts';

export { TIMELINE_LIMIT };

export type TimelineItem =
  | { kind: 'request'; request: number; text: string }
  | { kind: 'text'; step: number; text: string }
  | {
      kind: 'call'; step: number; call: number; name: string; arguments: Record<string, unknown>; raw: string;
      state: 'writing' | 'waiting' | 'running' | 'done' | 'failed' | 'rejected';
      result?: string;
    }
  | { kind: 'note'; step: number; note: NoteKind; text: string }
  | { kind: 'summary'; request: number; reason: EndReason; line: string };

export class Timeline {
  readonly items: TimelineItem[];

  constructor(restored: TimelineItem[] = []) {
    this.items = restored.slice(-TIMELINE_LIMIT);
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
        if (item) Object.assign(item, { name: event.name, arguments: event.arguments, state: 'running' });
        else this.push({ kind: 'call', step: event.step, call: event.call, name: event.name, arguments: event.arguments, raw: '', state: 'running' });
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
          if (item.state !== 'rejected') item.state = event.ok ? 'done' : 'failed';
        }
        break;
      }
      case 'note':
        this.push({ kind: 'note', step: event.step, note: event.kind, text: event.text });
        break;
      case 'summary':
        this.push({ kind: 'summary', request: event.request, reason: event.reason, line: event.line });
        break;
      case 'step':
        break;
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
