// <pooled-layer-bar>, in device cards, the deal editor and the guest screen: a layer range over the whole model.
import { LitElement, css, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { describeRange, theme } from './theme.ts';

/** A device's dealt layers [start, end) drawn as a segment over all of the model's layers. */
@customElement('pooled-layer-bar')
export class LayerBar extends LitElement {
  @property({ attribute: false }) range: [number, number] = [0, 0];
  @property({ type: Number }) total = 0;
  /** Hide the text under the bar (when the page says it already). */
  @property({ type: Boolean }) bare = false;

  static override styles = [theme, css`
    :host { display: block; }
    .track { position: relative; height: .8rem; border-radius: 4px; background: var(--panel-2); border: 1px solid var(--line); overflow: hidden; }
    .seg { position: absolute; top: 0; bottom: 0; background: linear-gradient(90deg, #2f7fd0, #4aa3ff); }
    .ticks { position: absolute; inset: 0; display: flex; }
    .ticks span { flex: 1; border-right: 1px solid rgba(15, 20, 25, .55); }
    .ticks span:last-child { border-right: 0; }
    .label { font-size: 12px; color: var(--muted); }
  `];

  override render() {
    const total = Math.max(0, this.total);
    const [a, b] = this.range;
    const left = total > 0 ? (a / total) * 100 : 0;
    const width = total > 0 ? (Math.max(0, b - a) / total) * 100 : 0;
    const label = describeRange(this.range, total || undefined);
    return html`
      <div class="track" role="img" aria-label=${label} data-testid="layer-bar" data-start=${a} data-end=${b} data-total=${total}>
        <div class="seg" style="left:${left}%;width:${width}%"></div>
        ${total > 0 && total <= 64 ? html`<div class="ticks">${Array.from({ length: total }, () => html`<span></span>`)}</div>` : ''}
      </div>
      ${this.bare ? '' : html`<div class="label">${label}</div>`}`;
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-layer-bar': LayerBar }
}
