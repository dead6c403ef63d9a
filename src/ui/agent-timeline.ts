// <pooled-agent-timeline>, in the agent workspace: the requests, streamed answers, call cards, notes and summaries.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { TimelineItem } from '../agent/timeline.ts';
import type { NoteKind } from '../agent/events.ts';
import type { HistoryEntry, PendingApproval } from '../app/workspace.ts';
import { theme } from './theme.ts';
import './call-card.ts';

const NOTE_LABEL: Record<NoteKind, string> = {
  compaction: 'Context', 'cut-off': 'Cut off', nudge: 'Nudge', 'stuck-warning': 'Stuck?', end: 'Ended', format: 'Call format', limit: 'Last step', server: 'Server',
  rerun: 'Again',
};

/**
 * The agent's timeline: each request, the answer as it streams, a card per tool call, notes (compaction,
 * hints, stuck warnings) and the summary line that closes each request. Follows the bottom while the
 * reader is there.
 */
@customElement('pooled-agent-timeline')
export class AgentTimeline extends LitElement {
  @property({ attribute: false }) items: TimelineItem[] = [];
  @property({ attribute: false }) approvals: PendingApproval[] = [];
  @property({ type: Boolean }) running = false;
  /** The project's history points: a call card that changed a file gets "Restore to before this". */
  @property({ attribute: false }) history: HistoryEntry[] = [];
  /** What an empty timeline says (default: an invitation to ask for an app). */
  @property() emptyText?: string;
  private stick = true;

  static override styles = [theme, css`
    :host { display: block; overflow: auto; min-height: 0; }
    ol { list-style: none; margin: 0; padding: .75rem; display: grid; gap: .6rem; }
    .request { justify-self: end; max-width: 85%; background: #1d3b5a; border: 1px solid #2d5680; border-radius: 12px 12px 2px 12px; padding: .45rem .75rem; white-space: pre-wrap; }
    .text { white-space: pre-wrap; word-break: break-word; line-height: 1.55; }
    .note { font-size: 13px; border-left: 3px solid var(--warn); padding: .25rem .6rem; background: #221f14; color: #ffe9b8; border-radius: 4px; white-space: pre-wrap; }
    .note.end { border-left-color: var(--bad); background: #2a1a1a; color: #ffd9d5; }
    .note.compaction { border-left-color: var(--accent); background: #152433; color: #cfe6ff; }
    .note b { margin-right: .35rem; }
    .summary { font-size: 12.5px; color: var(--muted); border-top: 1px dashed var(--line); padding-top: .35rem; text-align: center; }
    .summary.done { color: var(--accent-2); }
    .empty { color: var(--muted); padding: 2rem 1rem; text-align: center; }
    .typing::after { content: '▍'; animation: blink 1s steps(1) infinite; color: var(--accent); }
    @keyframes blink { 50% { opacity: 0; } }
  `];

  override render() {
    if (this.items.length === 0) {
      return html`<div class="empty" data-testid="timeline-empty">${this.emptyText ?? html`Ask for a static web app — “a snake game”, “a todo list with local storage” —
        and the agent writes the files, serves them in the preview and fixes what the page reports.`}</div>`;
    }
    const last = this.items.length - 1;
    // A point names the call it was taken before by request and call id (call ids restart with each page
    // load, request numbers do not); the newest point wins should an old one share them.
    const pointOf = new Map<string, number>();
    for (const p of this.history) if (p.call !== undefined) pointOf.set(`${p.request}:${p.call}`, p.id);
    let request = 0;
    return html`<ol aria-label="Agent timeline" data-testid="timeline">
      ${this.items.map((item, i) => {
        if (item.kind === 'request') request = item.request;
        return this.renderItem(item, i === last, item.kind === 'call' ? pointOf.get(`${request}:${item.call}`) : undefined);
      })}
    </ol>`;
  }

  private renderItem(item: TimelineItem, isLast: boolean, restorePoint?: number) {
    switch (item.kind) {
      case 'request':
        return html`<li class="request" data-testid="tl-request">${item.text}</li>`;
      case 'text':
        return html`<li class="text ${isLast && this.running ? 'typing' : ''}" data-testid="tl-text">${item.text}</li>`;
      case 'call':
        return html`<li><pooled-call-card .item=${item} .approval=${this.approvals.find((a) => a.call === item.call)}
            .restorePoint=${restorePoint} .restoreDisabled=${this.running}></pooled-call-card></li>`;
      case 'note':
        return html`<li class="note ${item.note}" data-testid="tl-note" data-kind=${item.note}><b>${NOTE_LABEL[item.note] ?? item.note}</b>${item.text}</li>`;
      case 'summary':
        return html`<li class="summary ${item.reason}" data-testid="tl-summary" data-reason=${item.reason} title=${item.tip ?? nothing}>${item.line}</li>`;
      default:
        return nothing;
    }
  }

  override connectedCallback(): void {
    super.connectedCallback();
    // It scrolls: keyboard users reach it (and scroll it with the arrows) even before it holds a button.
    if (!this.hasAttribute('tabindex')) this.tabIndex = 0;
    if (!this.hasAttribute('role')) this.setAttribute('role', 'region');
    if (!this.hasAttribute('aria-label')) this.setAttribute('aria-label', 'Conversation');
  }

    override willUpdate(): void {
    this.stick = this.scrollHeight - this.scrollTop - this.clientHeight < 48;
  }

  override updated(): void {
    if (this.stick) this.scrollTop = this.scrollHeight;
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-agent-timeline': AgentTimeline }
}
