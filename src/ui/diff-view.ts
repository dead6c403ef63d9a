// <pooled-diff-view>, in a call card: the lines an edit would change.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { diffLines, type ProposedEdit } from '../app/diff.ts';
import { theme } from './theme.ts';

/** What an edit would change: removed lines red, added green, unchanged runs folded. */
@customElement('pooled-diff-view')
export class DiffView extends LitElement {
  @property({ attribute: false }) edit?: ProposedEdit;

  static override styles = [theme, css`
    :host { display: block; }
    .path { font-size: 12px; color: var(--muted); margin-bottom: .25rem; }
    pre { margin: 0; max-height: 18rem; overflow: auto; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .35rem 0; }
    .l { display: block; padding: 0 .6rem; white-space: pre-wrap; word-break: break-word; }
    .add { background: #12321f; color: #bff5d2; }
    .del { background: #3a1a1c; color: #ffd0cc; }
    .skip { color: var(--muted); font-style: italic; }
  `];

  override render() {
    const e = this.edit;
    if (!e) return nothing;
    const lines = diffLines(e.before, e.after);
    const added = lines.filter((l) => l.op === 'add').length;
    const removed = lines.filter((l) => l.op === 'del').length;
    return html`
      <div class="path"><span class="mono">${e.path}</span> · ${e.isNew ? 'new file' : 'changed'} · +${added} −${removed}</div>
      ${e.note ? html`<div class="warning">${e.note}</div>` : nothing}
      <pre data-testid="diff" aria-label=${`Changes to ${e.path}`}>${lines.map((l) =>
        l.op === 'skip' ? html`<span class="l skip">… ${l.count} unchanged lines</span>`
        : html`<span class="l ${l.op}">${l.op === 'add' ? '+ ' : l.op === 'del' ? '− ' : '  '}${l.text}</span>`)}</pre>`;
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-diff-view': DiffView }
}
