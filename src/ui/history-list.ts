// <pooled-history-list>, in the workspace's files part (its History switch): the project's history points,
// newest first, each with "Restore" (fires `restore-point` with the point's id). The points come from
// src/app/project-history.ts.
import { LitElement, css, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { HistoryEntry } from '../app/workspace.ts';
import { theme } from './theme.ts';

/** "request 1, step 2 · 15:20" for an agent call; "15:20 · app.js, style.css" (the files it changed) for a hand edit or a restore. */
function when(entry: HistoryEntry): string {
  const time = new Date(entry.at).toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });
  // Requests count from 0 inside the agent; people count from 1.
  return entry.step !== undefined ? `request ${(entry.request ?? 0) + 1}, step ${entry.step} · ${time}` : `${time} · ${entry.paths.join(', ')}`;
}

/** The points as a list, a Restore button on each. */
@customElement('pooled-history-list')
export class HistoryList extends LitElement {
  @property({ attribute: false }) entries: HistoryEntry[] = [];
  @property({ type: Boolean }) disabled = false;

  static override styles = [theme, css`
    :host { display: block; overflow: auto; min-height: 0; }
    ol { list-style: none; margin: 0; padding: .3rem .5rem; display: grid; gap: .3rem; }
    .empty { color: var(--muted); padding: .6rem; font-size: 13px; }
    li { display: flex; align-items: center; gap: .5rem; font-size: 12.5px; }
    .what { flex: 1; min-width: 0; display: grid; }
    .label { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    .meta { color: var(--muted); font-size: 11.5px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    button { padding: .1rem .5rem; font-size: 12px; white-space: nowrap; }
  `];

  override render() {
    if (this.entries.length === 0) return html`<div class="empty">No changes yet: each write, edit and restore is kept here, and can be undone.</div>`;
    const newestFirst = [...this.entries].reverse();
    return html`
      <ol aria-label="Project history, newest first" data-testid="history">
        ${newestFirst.map((e) => html`<li data-testid="history-point" data-id=${e.id}>
          <span class="what"><span class="label mono" title=${`${e.label}: ${e.paths.join(', ')}`}>${e.label}</span><span class="meta">${when(e)}</span></span>
          <button data-testid="history-restore" ?disabled=${this.disabled} @click=${() => this.restore(e.id)}
            aria-label=${`Restore the project to before ${e.label}${e.step !== undefined ? ` (step ${e.step})` : ''}`}
            title="Put the files back as they were before this change (the restore can be undone from here too)">Restore</button>
        </li>`)}
      </ol>`;
  }

  private restore(id: number): void {
    this.dispatchEvent(new CustomEvent('restore-point', { detail: id, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-history-list': HistoryList }
}
