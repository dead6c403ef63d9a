// <pooled-call-card>, in the timeline: one tool call, live while it is written, then its result (and its diff when it asks first).
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { TimelineItem } from '../agent/timeline.ts';
import type { PendingApproval } from '../app/workspace.ts';
import { theme } from './theme.ts';
import './diff-view.ts';

type CallItem = Extract<TimelineItem, { kind: 'call' }>;

const STATE_LABEL: Record<CallItem['state'], string> = {
  writing: 'writing…', waiting: 'waiting for you', running: 'running…', done: 'done', failed: 'failed', rejected: 'rejected', 'not-run': 'not run',
};

/** "write_file index.html", "search \"score\"" */
function headline(item: CallItem): string {
  const a = item.arguments;
  const detail = typeof a.path === 'string' ? a.path : typeof a.pattern === 'string' ? JSON.stringify(a.pattern) : '';
  return `${item.name || 'tool call'}${detail ? ` ${detail}` : ''}`;
}

/**
 * One tool call in the timeline: fills in live while the model writes it (raw arguments), then shows its
 * state and result. An "ask first" edit shows its diff with Approve / Reject (fires `decide`). A call
 * whose text had to be mended or repaired says so ("mended" in the header, what was mended below it).
 */
@customElement('pooled-call-card')
export class CallCard extends LitElement {
  @property({ attribute: false }) item?: CallItem;
  @property({ attribute: false }) approval?: PendingApproval;
  /** The project history point taken before this call's change: "Restore to before this" (fires `restore-point`). */
  @property({ attribute: false }) restorePoint?: number;
  @property({ type: Boolean }) restoreDisabled = false;

  static override styles = [theme, css`
    :host { display: block; }
    article { border: 1px solid var(--line); border-radius: 8px; background: var(--panel); overflow: hidden; }
    header { display: flex; align-items: center; gap: .5rem; padding: .35rem .6rem; background: var(--panel-2); }
    header .name { font-weight: 600; flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    .state { font-size: 12px; }
    .state.done { color: var(--accent-2); } .state.failed, .state.rejected { color: var(--bad); }
    .state.waiting { color: var(--warn); } .state.not-run { color: var(--muted); } .state.running, .state.writing { color: var(--accent); }
    .body { padding: .45rem .6rem; display: grid; gap: .4rem; }
    pre { margin: 0; white-space: pre-wrap; word-break: break-word; max-height: 14rem; overflow: auto; background: var(--bg); border-radius: 6px; padding: .35rem .5rem; }
    details summary { cursor: pointer; color: var(--muted); font-size: 12px; }
    .actions { display: flex; gap: .5rem; }
    .badge.mended { color: var(--warn); font-weight: 500; }
    .repairs { margin: 0; font-size: 12px; color: var(--muted); }
    .repairs b { color: var(--warn); font-weight: 600; }
    button.restore { padding: .05rem .5rem; font-size: 12px; white-space: nowrap; }
  `];

  override render() {
    const item = this.item;
    if (!item) return nothing;
    const result = item.result === undefined ? '' : item.result;
    return html`<article data-testid="call-card" data-state=${item.state} data-name=${item.name} aria-label=${`Tool call ${headline(item)}`}>
      <header>
        <span class="name mono">${headline(item)}</span>
        ${item.repairs?.length ? html`<span class="badge mended" title="The model's call was not written cleanly: see below">mended</span>` : nothing}
        ${this.restorePoint !== undefined ? html`<button class="restore" data-testid="call-restore" ?disabled=${this.restoreDisabled}
            aria-label=${`Restore to before this: ${headline(item)} (step ${item.step})`}
            title="Put the files back as they were before this call (every later change undone; the restore can be undone from History)"
            @click=${this.restore}>Restore to before this</button>` : nothing}
        <span class="state ${item.state}" data-testid="call-state">${STATE_LABEL[item.state]}</span>
      </header>
      <div class="body">
        ${item.repairs?.length ? html`<p class="repairs" data-testid="call-repairs"><b>Mended:</b> ${item.repairs.join(' · ')}</p>` : nothing}
        ${item.state === 'writing' && item.raw ? html`<pre class="mono" aria-live="off">${item.raw}</pre>` : nothing}
        ${this.approval ? html`
          <pooled-diff-view .edit=${this.approval.edit}></pooled-diff-view>
          <div class="actions" role="group" aria-label="Approve this edit?">
            <button class="primary" data-testid="approve" @click=${() => this.decide(true)}>Approve</button>
            <button class="danger" data-testid="reject" @click=${() => this.decide(false)}>Reject</button>
          </div>` : nothing}
        ${result ? html`<details ?open=${item.state === 'failed' || result.length < 400}>
            <summary>Result (${result.length.toLocaleString('en-US')} chars)</summary>
            <pre class="mono" data-testid="call-result">${result}</pre>
          </details>` : nothing}
      </div>
    </article>`;
  }

  private restore(): void {
    if (this.restorePoint === undefined) return;
    this.dispatchEvent(new CustomEvent('restore-point', { detail: this.restorePoint, bubbles: true, composed: true }));
  }

  private decide(approved: boolean): void {
    if (!this.approval) return;
    this.dispatchEvent(new CustomEvent('decide', { detail: { call: this.approval.call, approved }, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-call-card': CallCard }
}
