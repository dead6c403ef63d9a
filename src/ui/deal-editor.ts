// <pooled-deal-editor>, in the room panel: the expert's manual deal of layers to devices.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { countsFromDeal, manualDeal, rangesFromCounts, shareBytes, type DealDeviceRef } from '../app/manual-deal.ts';
import type { DealCost, DealEntry } from '../room/deal.ts';
import { describeRange, formatBytes, theme } from './theme.ts';
import './layer-bar.ts';

/**
 * The expert's manual deal: how many layers each device holds, in pipeline order (host first), with
 * each device's resulting range and its bytes (weights + KV, beside the memory it offers) shown live. Apply validates (the room's validateDeal) and shows a bad
 * deal inline; fires `apply-deal` (detail: DealEntry[]), `auto-deal` (back to automatic) or `close`.
 */
@customElement('pooled-deal-editor')
export class DealEditor extends LitElement {
  @property({ attribute: false }) devices: DealDeviceRef[] = [];
  @property({ attribute: false }) deal: DealEntry[] = [];
  @property({ type: Number }) totalLayers = 0;
  @property({ type: Boolean }) manual = false;
  /** The room's per-layer bytes; absent = the editor shows layers only. */
  @property({ attribute: false }) cost?: DealCost;
  @state() private counts: number[] = [];
  @state() private problem?: string;

  static override styles = [theme, css`
    :host { display: block; border: 1px solid var(--line); border-radius: 10px; padding: .7rem .8rem; background: var(--panel-2); }
    .bad { color: var(--bad); }
    form { display: grid; gap: .55rem; }
    fieldset { border: 0; padding: 0; margin: 0; display: grid; gap: .5rem; }
    legend { padding: 0; margin-bottom: .3rem; }
    .dev { display: grid; grid-template-columns: 1fr 4.5rem; gap: .2rem .5rem; align-items: center; }
    .dev label { min-width: 0; overflow-wrap: anywhere; }
    .dev input { width: 100%; }
    .dev pooled-layer-bar { grid-column: 1 / -1; }
    .actions { display: flex; gap: .4rem; flex-wrap: wrap; }
  `];

  private shownFor = '';

  /** Start from the deal in effect, and again whenever the room's devices change under the editor. */
  override willUpdate(): void {
    const key = this.devices.map((d) => d.id).join(',');
    if (key !== this.shownFor) {
      this.shownFor = key;
      this.counts = countsFromDeal(this.devices, this.deal);
      this.problem = undefined;
    }
  }

  override render() {
    const ranges = rangesFromCounts(this.devices, this.counts);
    const sum = this.counts.reduce((a, n) => a + (Number.isFinite(n) ? n : 0), 0);
    const bytes = this.cost ? shareBytes(ranges, this.cost) : null;
    return html`<form @submit=${this.apply} aria-labelledby="deal-title" data-testid="deal-editor">
      <fieldset>
        <legend id="deal-title"><strong>Manual deal</strong> <span class="muted">· layers per device, in pipeline order;
          <span class=${sum === this.totalLayers ? '' : 'bad'} data-testid="deal-sum">${sum} of ${this.totalLayers} dealt</span></span></legend>
        ${this.devices.map((d, i) => html`<div class="dev">
          <label for=${`n-${i}`}>${d.name} <span class="muted">· ${this.rangeText(ranges[i]!.range)}</span>${bytes ? this.bytesText(bytes[i]!, d) : nothing}</label>
          <input id=${`n-${i}`} type="number" min="0" max=${this.totalLayers} step="1" .value=${String(this.counts[i] ?? 0)}
            data-testid="deal-count" data-device-id=${d.id} aria-describedby=${this.problem ? 'deal-problem' : nothing}
            aria-invalid=${this.problem ? 'true' : 'false'} @input=${(e: Event) => this.setCount(i, (e.target as HTMLInputElement).value)} />
          <pooled-layer-bar bare .range=${ranges[i]!.range} .total=${this.totalLayers}></pooled-layer-bar>
        </div>`)}
      </fieldset>
      ${this.problem ? html`<div class="error" id="deal-problem" role="alert" data-testid="deal-error">${this.problem}</div>` : nothing}
      <div class="actions">
        <button class="primary" type="submit" data-testid="deal-apply">Apply deal</button>
        ${this.manual ? html`<button type="button" data-testid="deal-auto-editor" @click=${this.auto}>Back to automatic</button>` : nothing}
        <button type="button" data-testid="deal-cancel" @click=${() => this.fire('close')}>Cancel</button>
      </div>
    </form>`;
  }

  /** " · 1.2 GiB of 4.0 GiB", marked when the share does not fit what the device offers. */
  private bytesText(bytes: number, d: DealDeviceRef) {
    const budget = d.memoryBudgetBytes ?? 0;
    const over = budget > 0 && bytes > budget;
    return html` <span class=${over ? 'bad' : 'muted'} data-testid="deal-bytes" data-bytes=${bytes}
      title=${over ? 'More than this device offers: it may fail to load' : 'Weights and KV cache of these layers'}>· ${formatBytes(bytes)}${budget > 0 ? ` of ${formatBytes(budget)}` : ''}${over ? ' (too much)' : ''}</span>`;
  }

  /** "layers 2–3", or "layer 3 + 1 too many" for a range that runs past the model's last layer. */
  private rangeText([a, b]: [number, number]): string {
    const L = this.totalLayers;
    if (b <= L) return describeRange([a, b]);
    const inside = a < L ? `${describeRange([a, L])} + ` : '';
    return `${inside}${b - Math.max(a, L)} too many`;
  }

  private setCount(i: number, text: string): void {
    const counts = [...this.counts];
    counts[i] = text.trim() === '' ? Number.NaN : Number(text);
    this.counts = counts;
    this.problem = undefined;
  }

  private apply(e: Event): void {
    e.preventDefault();
    try {
      const entries = manualDeal(this.devices, this.counts, this.totalLayers);
      this.problem = undefined;
      this.dispatchEvent(new CustomEvent<DealEntry[]>('apply-deal', { detail: entries, bubbles: true, composed: true }));
    } catch (err) {
      this.problem = `${(err as Error).name}: ${(err as Error).message}`;
    }
  }

  private auto(): void {
    this.fire('auto-deal');
  }

  private fire(type: string): void {
    this.dispatchEvent(new CustomEvent(type, { bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-deal-editor': DealEditor }
}
