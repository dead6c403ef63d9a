// <pooled-device-card>, in the room panel: one device, its layers, memory, load progress, status and speed;
// for a hybrid model, what its checkpoint snapshots of recurrent state cost.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { DeviceInfo } from '../room/host.ts';
import { ENGINES } from '../engines/table.ts';
import { engineBudgetBytes } from '../room/engine-choice.ts';
import { formatBytes, theme } from './theme.ts';
import { memoryOfferText } from '../app/memory-budget.ts';
import './layer-bar.ts';
import { LoadRate, loadProgressText } from './load-rate.ts';

export type ShownStatus = 'loading' | 'ready' | 'computing' | 'gone' | 'failed' | 'joining';

/** Whether a device works on every token: it holds layers, or it is the host (embedding, head, sampling). */
export function computesTokens(d: DeviceInfo): boolean {
  return d.isHost || d.range[1] > d.range[0];
}

/** The engine as the card names it: the device's own words from its hello, else its row's name for it (else the kind). */
export function engineName(caps: DeviceInfo['caps']): string {
  return caps.engineLabel || (ENGINES[caps.engine]?.fallbackLabel({ adapter: caps.adapter }) ?? caps.engine);
}

/** What the room screen calls a device's state: the room's own, plus "computing" while a request runs. */
export function shownStatus(d: DeviceInfo, generating: boolean): ShownStatus {
  if (d.status === 'left') return 'gone';
  if (d.status === 'ready' && generating && computesTokens(d)) return 'computing';
  return d.status;
}

/**
 * One device of the room: name, adapter, memory, its dealt layers over the model's layers, load
 * progress, status and tok/s ("—" until measured; the host's card shows the room's speed, since every
 * token passes through it); guests get a Remove button (fires `remove` with the device id).
 */
@customElement('pooled-device-card')
export class DeviceCard extends LitElement {
  /** This device's load rate, from the progress figures the card is given (src/ui/load-rate.ts: the guest's page uses the same). */
  private readonly loadRate = new LoadRate();

  private progressText(d: DeviceInfo): string {
    this.loadRate.push(d.bytesDone);
    return loadProgressText(d.bytesDone, d.bytesTotal, this.loadRate);
  }

  @property({ attribute: false }) device?: DeviceInfo;
  @property({ type: Number }) totalLayers = 0;
  @property({ type: Boolean }) generating = false;
  /** tok/s to show; 0 = no measurement yet. */
  @property({ type: Number }) tokensPerSecond = 0;
  /** While the room reads a prompt: this device's layers have read `done` of its `total` tokens. */
  @property({ attribute: false }) prefill?: { done: number; total: number };

  static override styles = [theme, css`
    :host { display: block; }
    .card { display: grid; gap: .35rem; }
    header { display: flex; align-items: center; gap: .5rem; flex-wrap: wrap; }
    header h3 { flex: 1 1 auto; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    dl { display: grid; grid-template-columns: auto 1fr; gap: .1rem .7rem; margin: 0; font-size: 13px; }
    dt { color: var(--muted); } dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
    .row { display: flex; align-items: center; gap: .5rem; font-size: 12px; color: var(--muted); }
    .row progress { flex: 1; }
  `];

  override render() {
    const d = this.device;
    if (!d) return nothing;
    const status = shownStatus(d, this.generating);
    const pct = d.bytesTotal > 0 ? Math.round((d.bytesDone / d.bytesTotal) * 100) : d.status === 'ready' ? 100 : 0;
    const row = ENGINES[d.caps.engine];
    const memory = memoryOfferText(engineBudgetBytes(ENGINES, d.caps.engine, d.caps.memoryBudgetBytes), d.caps.deviceMemoryGiB, formatBytes)
      + (row?.capNote(d.caps.memoryBudgetBytes) ?? '');
    return html`<article class="card" data-testid="device" data-device-id=${d.id} data-status=${status} aria-label=${`Device ${d.name}`}>
      <header>
        <h3>${d.name}${d.isHost ? html` <span class="muted">(this device)</span>` : nothing}</h3>
        <span class="badge ${status}" data-testid="device-status">${status}</span>
        ${d.isHost ? nothing : html`<button class="danger" @click=${this.removeDevice} aria-label=${`Remove ${d.name} from the room`} ?disabled=${status === 'gone'}>Remove</button>`}
      </header>
      <dl>
        <dt>Engine</dt><dd data-testid="device-engine" data-engine=${d.caps.engine}>${engineName(d.caps)}</dd>
        ${row?.labelNamesAdapter ? nothing : html`<dt>Adapter</dt><dd>${d.caps.adapter}</dd>`}
        <dt>Memory</dt><dd data-testid="device-memory">${memory}</dd>
        ${d.isHost ? nothing : html`<dt>Link</dt><dd>${d.rttMs > 0 ? `${d.rttMs.toFixed(1)} ms round trip` : '—'}</dd>`}
        ${d.snapshotBytes > 0 ? html`<dt>Checkpoints</dt><dd data-testid="device-snapshots"
            title="Gated DeltaNet layers cannot cut their state back like a KV cache: each checkpoint keeps a copy of it on this device">
            ${formatBytes(d.snapshotBytes)} of recurrent state a snapshot · ${d.snapshots} kept (${formatBytes(d.snapshots * d.snapshotBytes)})</dd>` : nothing}
        <dt>${d.isHost ? 'Room speed' : 'Speed'}</dt><dd data-testid="device-toks">${this.tokensPerSecond > 0 ? `${this.tokensPerSecond.toFixed(1)} tok/s` : '—'}</dd>
      </dl>
      <pooled-layer-bar .range=${d.range} .total=${this.totalLayers}></pooled-layer-bar>
      <div class="row">
        <progress max="100" .value=${pct} aria-label=${`Load progress of ${d.name}`} data-testid="device-progress" data-pct=${pct}></progress>
        <span data-testid="device-progress-text">${d.bytesTotal > 0 ? this.progressText(d) : `${pct}%`}</span>
      </div>
      ${this.prefill ? html`<div class="row" data-testid="device-prefill" data-done=${this.prefill.done} data-total=${this.prefill.total}>
        <progress max=${this.prefill.total} .value=${this.prefill.done} aria-label=${`Prompt read by ${d.name}`}></progress>
        <span>prompt ${this.prefill.done.toLocaleString('en-US')} / ${this.prefill.total.toLocaleString('en-US')} tok</span>
      </div>` : nothing}
      ${d.error ? html`<div class="error" role="alert">${d.error}</div>` : nothing}
    </article>`;
  }

  private removeDevice(): void {
    if (this.device) this.dispatchEvent(new CustomEvent('remove', { detail: this.device.id, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-device-card': DeviceCard }
}
