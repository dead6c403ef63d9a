import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { HostSession } from '../app/host-session.ts';
import { StoreController, Store } from '../app/store.ts';
import type { HostState } from '../app/host-session.ts';
import { computesTokens } from './device-card.ts';
import './qr-code.ts';
import { theme } from './theme.ts';

/** The host's room: invite link (copy + QR), warnings, every device with its share, re-deal. */
@customElement('pooled-room-panel')
export class RoomPanel extends LitElement {
  @property({ attribute: false }) session?: HostSession;
  @state() private copied = false;
  private watch?: StoreController<HostState>;

  static override styles = [theme, css`
    :host { display: flex; flex-direction: column; gap: .75rem; }
    .invite { display: grid; gap: .5rem; }
    .link { display: flex; gap: .4rem; }
    .link input { flex: 1; min-width: 0; }
    .devices { display: grid; gap: .6rem; }
    .head { display: flex; align-items: center; justify-content: space-between; gap: .5rem; }
    ol.events { margin: 0; padding-left: 1.1rem; font-size: 12px; color: var(--muted); max-height: 7rem; overflow: auto; }
  `];

  override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('session') && this.session && !this.watch) this.watch = new StoreController(this, this.session.store as Store<HostState>);
  }

  override render() {
    const s = this.session?.state;
    if (!s) return nothing;
    const total = s.config?.numLayers ?? 0;
    return html`
      <section class="card invite" aria-labelledby="invite-title">
        <h2 id="invite-title">Invite devices</h2>
        <p class="muted">Open this link on a phone or laptop to add its memory and GPU to the room.</p>
        <div class="link">
          <label class="sr-only" for="invite">Invite link</label>
          <input id="invite" type="text" readonly .value=${s.link ?? ''} data-testid="invite-link" @focus=${(e: Event) => (e.target as HTMLInputElement).select()} />
          <button @click=${this.copy} data-testid="copy-link">${this.copied ? 'Copied' : 'Copy'}</button>
        </div>
        ${s.link ? html`<pooled-qr-code .text=${s.link}></pooled-qr-code>` : nothing}
      </section>
      ${s.warnings.map((w) => html`<div class="warning" role="note">${w}</div>`)}
      ${s.error ? html`<div class="error" role="alert">${s.error}</div>` : nothing}
      <section aria-labelledby="devices-title">
        <div class="head">
          <h2 id="devices-title">Devices <span class="muted">(${s.devices.length})</span></h2>
          <button @click=${() => this.session?.redeal()} data-testid="redeal" title="Deal the model's layers to the devices again">Re-deal</button>
        </div>
        <p class="muted" data-testid="room-model">${s.modelName} · ${total} layers · context ${s.ctx.toLocaleString('en-US')} tokens · ${s.ckpt === 0 ? 'checkpoints off' : `${s.ckpt} answer checkpoints`}</p>
        <div class="devices" @remove=${(e: CustomEvent<string>) => this.session?.remove(e.detail)}>
          ${s.devices.map((d) => html`<pooled-device-card .device=${d} .totalLayers=${total} .generating=${s.generating}
              .tokensPerSecond=${computesTokens(d) ? s.tokensPerSecond : 0}></pooled-device-card>`)}
        </div>
      </section>
      ${s.events.length ? html`<section aria-labelledby="events-title"><h3 id="events-title">Room events</h3>
        <ol class="events" aria-live="polite">${s.events.map((e) => html`<li>${e}</li>`)}</ol></section>` : nothing}`;
  }

  private async copy(): Promise<void> {
    const link = this.session?.state.link;
    if (!link) return;
    try {
      await navigator.clipboard.writeText(link);
    } catch {
      const input = this.renderRoot.querySelector('input');
      input?.select();
      document.execCommand?.('copy');
    }
    this.copied = true;
    setTimeout(() => (this.copied = false), 1500);
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-room-panel': RoomPanel }
}
