// <pooled-room-panel>, on the host screen: invite, warnings, devices and the deal.
import { LitElement, css, html, nothing } from 'lit';
import { repeat } from 'lit/directives/repeat.js';
import { customElement, property, state } from 'lit/decorators.js';
import type { HostSession } from '../app/host-session.ts';
import { StoreController, Store } from '../app/store.ts';
import type { HostState } from '../app/host-session.ts';
import { computesTokens } from './device-card.ts';
import './qr-code.ts';
import './deal-editor.ts';
import './draft-choice.ts';
import './error-box.ts';
import type { DealEntry } from '../room/deal.ts';
import { factorText, standByNote } from '../app/stand-by.ts';
import { theme } from './theme.ts';

/** The host's room: invite link (copy + QR), warnings, every device with its share, re-deal. */
@customElement('pooled-room-panel')
export class RoomPanel extends LitElement {
  @property({ attribute: false }) session?: HostSession;
  @state() private copied = false;
  @state() private editing = false;
  private watch?: StoreController<HostState>;

  static override styles = [theme, css`
    :host { display: flex; flex-direction: column; gap: .75rem; }
    .invite { display: grid; gap: .5rem; }
    .link { display: flex; gap: .4rem; }
    .link input { flex: 1; min-width: 0; }
    .devices { display: grid; gap: .6rem; }
    .head { display: flex; align-items: center; justify-content: space-between; gap: .5rem; flex-wrap: wrap; }
    .head .tools { display: flex; gap: .4rem; flex-wrap: wrap; }
    .mode { display: flex; align-items: center; gap: .5rem; flex-wrap: wrap; font-size: 12.5px; }
    .badge.manual { color: var(--warn); } .badge.auto { color: var(--muted); }
    .speculation { cursor: pointer; flex-wrap: nowrap; align-items: baseline; } .speculation input { margin: 0; align-self: center; }
    .speculation > span:not(.muted) { white-space: nowrap; } .speculation .muted { min-width: 0; }
    .route { margin: 0; font-size: 12.5px; display: flex; gap: .4rem; flex-wrap: wrap; }
    pooled-deal-editor { margin: .5rem 0; }
    .standby { display: flex; align-items: center; gap: .6rem; flex-wrap: wrap; border-left: 3px solid var(--accent); background: var(--panel-2);
      padding: .5rem .7rem; border-radius: 6px; margin: .5rem 0; }
    .standby p { margin: 0; flex: 1 1 16rem; }
    .restored { margin: 0; font-size: 12.5px; border-left: 3px solid var(--accent); padding: .3rem .6rem; background: var(--panel-2); border-radius: 6px; }
    ol.events { margin: 0; padding-left: 1.1rem; font-size: 12px; color: var(--muted); max-height: 7rem; overflow: auto; }
  `];

  override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('session') && this.session && !this.watch) this.watch = new StoreController(this, this.session.store as Store<HostState>);
  }

  override render() {
    const s = this.session?.state;
    if (!s) return nothing;
    const total = s.config?.numLayers ?? 0;
    const manual = this.session!.manualInEffect;
    const present = s.devices.filter((d) => d.status !== 'left').map((d) => ({ id: d.id, name: d.name, memoryBudgetBytes: d.caps.memoryBudgetBytes }));
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
        ${s.restored ? html`<p class=${s.restored.sameRoom ? 'restored' : 'warning'} role="status" data-testid="room-restored" data-same-room=${s.restored.sameRoom ? 'yes' : 'no'}>${s.restored.text}</p>` : nothing}
      </section>
      ${s.warnings.map((w) => html`<div class="warning" role="note">${w}</div>`)}
      ${s.error ? html`<pooled-error-box .error=${s.error} .back=${false} @retry=${() => this.session?.redeal()}></pooled-error-box>` : nothing}
      <section aria-labelledby="devices-title">
        <div class="head">
          <h2 id="devices-title">Devices <span class="muted">(${s.devices.length})</span></h2>
          <div class="tools">
            <button @click=${() => (this.editing = !this.editing)} data-testid="edit-deal" aria-expanded=${this.editing ? 'true' : 'false'}
              aria-controls="deal-editor" title="Set each device's layers by hand (for tests and experts)">Edit deal</button>
            <button @click=${() => this.session?.redeal()} data-testid="redeal" title="Deal the model's layers to the devices again">Re-deal</button>
          </div>
        </div>
        <div class="mode" data-testid="deal-mode" data-mode=${manual ? 'manual' : 'auto'}>
          ${manual
            ? html`<span class="badge manual">manual deal</span><span class="muted">set by hand; new devices get no layers</span>
                <button data-testid="deal-auto" @click=${this.auto}>Back to automatic</button>`
            : html`<span class="badge auto">automatic deal</span><span class="muted">in proportion to memory and speed</span>`}
        </div>
        ${this.standBy(s, manual)}
        ${this.editing && total > 0 ? html`<pooled-deal-editor id="deal-editor" .devices=${present} .deal=${s.deal} .totalLayers=${total} .cost=${s.dealCost}
            ?manual=${manual} @apply-deal=${this.apply} @auto-deal=${this.auto} @close=${() => (this.editing = false)}></pooled-deal-editor>` : nothing}
        <label class="mode speculation" title="Guess the next tokens (from the conversation, or with a small draft model) and check them all in one pass through the room: the same tokens, fewer round trips when the guesses are right">
          <input type="checkbox" data-testid="speculation" .checked=${s.speculation} @change=${(e: Event) => this.session?.setSpeculation((e.target as HTMLInputElement).checked)} />
          <span>Speculative decoding</span><span class="muted" data-testid="speculation-state">${!s.speculation ? 'off' : s.draft.kind === 'model' ? `on · draft model ${s.draft.name}` : 'on · prompt lookup'}</span>
        </label>
        <pooled-draft-choice .session=${this.session} .state=${s}></pooled-draft-choice>
        <p class="route" data-testid="token-route" data-hops=${s.route.hops}
          title="The way each decode token's activations travel: guests in a chain hand them straight to the next one, then the last hands them back to this device">
          <span class="muted">Path per token</span>
          ${s.route.hops === 0 ? html`<span>this device only</span>` : html`<span>${s.route.stops.join(' → ')}</span>
            <span class="muted">· ${s.route.hops} ${s.route.hops === 1 ? 'hop' : 'hops'}</span>`}
        </p>
        <p class="muted" data-testid="room-model">${s.modelName} · ${total} layers · context ${s.ctx.toLocaleString('en-US')} tokens · ${s.ckpt === 0 ? 'checkpoints off' : `${s.ckpt} answer checkpoints`}</p>
        <div class="devices" @remove=${(e: CustomEvent<string>) => this.session?.remove(e.detail)}>
          ${repeat(s.devices, (d) => d.id, (d) => html`<pooled-device-card .device=${d} .totalLayers=${total} .generating=${s.generating}
              .prefill=${s.prefill && s.prefillDevices?.[d.id] !== undefined ? { done: s.prefillDevices[d.id]!, total: s.prefill.total } : undefined}
              .tokensPerSecond=${d.isHost ? s.tokensPerSecond : d.tokensPerSecond > 0 ? d.tokensPerSecond : computesTokens(d) ? s.tokensPerSecond : 0}></pooled-device-card>`)}
        </div>
      </section>
      ${s.events.length ? html`<section aria-labelledby="events-title"><h3 id="events-title">Room events</h3>
        <ol class="events" aria-live="polite">${s.events.map((e) => html`<li>${e}</li>`)}</ol></section>` : nothing}
      <p><button class="danger" data-testid="close-room" @click=${this.closeRoom}
        title="End the room: every guest is told it closed and stops; a reload of this page no longer brings it back">Close room</button></p>`;
  }

  /**
   * Guests the automatic deal gave no layers (the model fits on this device and a split would be
   * slower): said, with the factor from the measured speeds and link, and one click that splits anyway.
   */
  private standBy(s: HostState, manual: boolean) {
    const note = manual ? null : standByNote(s.config, s.dealCost, s.devices, s.deal);
    if (!note) return nothing;
    const who = note.names.join(', ');
    return html`<div class="standby" data-testid="standby" role="note">
      <p>${note.split
        ? html`<strong>${who}</strong>: standing by — the model fits here and a split would run at
            <span data-testid="standby-factor">${factorText(note.factor)}</span>
            <span class="muted" title="Estimated from each device's measured speed and the link's measured round trip">(measured)</span>`
        : html`<strong>${who}</strong>: standing by — the model fits here, and ${note.names.length === 1 ? 'its' : 'their'} memory would not hold a layer of it`}</p>
      ${note.split ? html`<button data-testid="split-anyway" @click=${() => this.session?.splitAnyway()}
          title="Deal the layers by memory alone, so every device holds some (Back to automatic undoes it)">Split anyway</button>` : nothing}
    </div>`;
  }

  private apply(e: CustomEvent<DealEntry[]>): void {
    try {
      this.session?.setManualDeal(e.detail);
      this.editing = false;
    } catch (err) {
      // The room changed between editing and applying (a device left): say so where the error shows.
      this.session?.store.set({ error: `${(err as Error).name}: ${(err as Error).message}` });
    }
  }

  private auto(): void {
    this.session?.setManualDeal(null);
    this.editing = false;
  }

  /** Close room, after asking: the guests are told goodbye; then back to the start page. */
  private readonly closeRoom = async (): Promise<void> => {
    if (!confirm('Close the room? Every guest is told it closed and stops; the invite link no longer works.')) return;
    try {
      await this.session?.close();
    } finally {
      location.assign(location.pathname);   // back to the start page even when freeing an engine failed
    }
  };

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
