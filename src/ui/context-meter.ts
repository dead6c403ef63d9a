// <pooled-context-meter>, in the workspace header: how much of the context the conversation uses.
import { LitElement, css, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { theme } from './theme.ts';

/** How much of the context the conversation uses: "1,234 / 6,080 tok", with a bar that warns past 80%. */
@customElement('pooled-context-meter')
export class ContextMeter extends LitElement {
  @property({ type: Number }) used = 0;
  @property({ type: Number }) budget = 0;
  @property({ type: Number }) contextSize = 0;
  /** The room's words on its context ("context 24,576 — what this room holds; add a device for 32,768"), shown beside the count. */
  @property() note = '';

  static override styles = [theme, css`
    :host { display: inline-flex; align-items: center; gap: .45rem; font-size: 12px; color: var(--muted); }
    .bar { width: 6.5rem; height: .5rem; border-radius: 4px; background: var(--panel-2); border: 1px solid var(--line); overflow: hidden; }
    .fill { height: 100%; background: var(--accent-2); }
    .fill.high { background: var(--warn); }
    .fill.full { background: var(--bad); }
  `];

  override render() {
    const ratio = this.budget > 0 ? Math.min(1, this.used / this.budget) : 0;
    const level = ratio >= 1 ? 'full' : ratio >= 0.8 ? 'high' : '';
    const fmt = (n: number) => n.toLocaleString('en-US');
    const title = `The conversation uses ${fmt(this.used)} of the ${fmt(this.budget)} tokens it may use (${this.note || `context ${fmt(this.contextSize)}`}, less room for the answer). Past the budget, older steps are shortened.`;
    return html`<div class="bar" role="meter" aria-label="Context used" aria-valuemin="0" aria-valuemax=${this.budget} aria-valuenow=${this.used} title=${title}>
        <div class="fill ${level}" style="width:${(ratio * 100).toFixed(1)}%"></div>
      </div>
      <span data-testid="context-meter" title=${title}>${fmt(this.used)} / ${fmt(this.budget)} tok</span>${this.note
        ? html`<span data-testid="context-note" title=${title}>${this.note}</span>` : ''}`;
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-context-meter': ContextMeter }
}
