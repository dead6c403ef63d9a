// <pooled-guest-screen>: what a guest device shows while it works for the room.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { ENGINES } from '../engines/table.ts';
import { memoryBudgetFromGiB, memoryOfferText, gibText } from '../app/memory-budget.ts';
import './memory-field.ts';
import { shareNeeds, type GuestSession, type GuestState } from '../app/guest-session.ts';
import { StoreController } from '../app/store.ts';
import { describeRange, formatBytes, theme } from './theme.ts';
import './layer-bar.ts';
import { LoadRate, loadProgressText } from './load-rate.ts';
import './error-box.ts';

const STATUS_TEXT: Record<GuestState['status'], string> = {
  connecting: 'Connecting to the host…',
  waiting: 'Joined. Waiting for the host to deal layers…',
  loading: 'Loading its layers of the model…',
  ready: 'Ready: holding its layers, waiting for work.',
  computing: 'Computing: running its layers for the room.',
  reconnecting: 'Host reconnecting… Its page went away without closing the room (a reload, usually). This device keeps its layers and rejoins by itself.',
  gone: 'Not in the room.',
};

const WAKE_TEXT: Record<GuestState['wakeLock'], string> = {
  held: 'kept awake while computing',
  off: 'will be kept awake while computing',
  refused: 'the browser refused to keep it awake: keep this tab in front',
  unsupported: 'this browser cannot keep it awake: keep the screen on',
};

/** A guest device (phone-sized first): what it does for the room, and a Leave button. */
@customElement('pooled-guest-screen')
export class GuestScreen extends LitElement {
  @property({ attribute: false }) session?: GuestSession;
  private watch?: StoreController<GuestState>;
  private readonly loadRate = new LoadRate();
  @state() private changingMemory = false;
  @state() private memText = '';
  @state() private memProblem?: string;
  /** The offer question's figure as typed (filled with the suggestion). */
  @state() private offerText?: string;
  @state() private offerProblem?: string;

  static override styles = [theme, css`
    :host { display: block; }
    main { max-width: 30rem; margin: 0 auto; padding: 1.25rem 1rem 2rem; display: grid; gap: .9rem; }
    .status { display: flex; align-items: center; gap: .5rem; }
    .big { font-size: 1.05rem; }
    h2 + dl { margin-top: .5rem; }
    dl { display: grid; grid-template-columns: auto 1fr; gap: .3rem .8rem; margin: 0; }
    dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
    .row { display: flex; gap: .5rem; align-items: center; font-size: 12.5px; color: var(--muted); margin-top: .45rem; }
    .row progress { flex: 1; }
    form.mem { display: grid; gap: .5rem; margin-top: .6rem; }
    .actions { display: flex; gap: .4rem; }
    button.danger { width: 100%; justify-content: center; padding: .6rem; }
    .gone-actions { display: flex; gap: .5rem; flex-wrap: wrap; }
  `];

  override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('session') && this.session && !this.watch) this.watch = new StoreController(this, this.session.store);
  }

  override render() {
    const s = this.session?.state;
    if (!s) return nothing;
    const pct = s.bytesTotal > 0 ? Math.round((s.bytesDone / s.bytesTotal) * 100) : s.status === 'ready' || s.status === 'computing' ? 100 : 0;
    const holds = s.range[1] > s.range[0];
    // Loaded, dealt nothing: the deal kept the model on the host because a split would be slower.
    const standing = (s.status === 'ready' || s.status === 'computing') && !holds;
    return html`<main>
      <header>
        <h1>pooled <span class="muted">· guest</span></h1>
        <p class="muted">This device lends its GPU and memory to a room. Keep this tab open${s.wakeLock === 'unsupported' ? ' and the screen on' : ''}.</p>
      </header>
      <section class="card" aria-live="polite" aria-labelledby="what-title">
        <div class="status">
          <h2 id="what-title" style="flex:1">${s.name || 'This device'}</h2>
          <span class="badge ${s.status}" data-testid="guest-status">${s.status}</span>
        </div>
        <p class="big" data-testid="guest-status-text">${standing
          ? 'Standing by: the host needs your memory only for bigger models. The model fits on the host, where it runs faster than split with this device; stay to be dealt layers when the room needs them.'
          : STATUS_TEXT[s.status]}</p>
        ${s.reconnect ? html`<p class="muted" data-testid="guest-reconnect">Try ${s.reconnect.attempt}; gives up ${Math.round(s.reconnect.giveUpMs / 60_000)} minutes after the host went away. Leave to stop now.</p>`
          : s.rejoined > 0 && s.status !== 'gone' ? html`<p class="muted" data-testid="guest-rejoined">Rejoined the room by itself${s.rejoined > 1 ? ` (${s.rejoined} times)` : ''} after the host came back.</p>` : nothing}
        ${this.renderNeeds(s, holds)}
        ${s.why && s.joinFailed ? html`<pooled-error-box data-testid="guest-why" .error=${s.why} @retry=${() => location.reload()}></pooled-error-box>`
          : s.why ? html`<div class="warning" data-testid="guest-why">${s.why}</div>` : nothing}
        ${s.error ? html`<div class="error" role="alert">${s.error}</div>` : nothing}
        ${s.caps && ENGINES[s.caps.engine]?.lastResort ? html`<div class="warning" role="note">${s.caps.adapter === 'no WebGPU'
          ? 'This browser has no WebGPU, so this device runs its layers on the CPU: slowly. A recent Chrome, Edge or Safari 26+ is much faster.'
          : `This device runs its layers on the CPU ${ENGINES[s.caps.engine]!.title} engine (?engine=${s.caps.engine}): slowly. Drop that parameter to use its WebGPU adapter.`}</div>` : nothing}
      </section>
      <section class="card" aria-labelledby="share-title">
        <h2 id="share-title">Its share of the model</h2>
        <p data-testid="guest-layers">${holds ? describeRange(s.range, s.numLayers) : s.status === 'waiting' || s.status === 'connecting' ? 'Not dealt yet.' : standing ? 'No layers in this deal: standing by.' : 'No layers for this device in this deal.'}</p>
        ${holds ? html`<pooled-layer-bar bare .range=${s.range} .total=${s.numLayers ?? 0}></pooled-layer-bar>
        <div class="row">
          <progress max="100" .value=${pct} aria-label="Load progress" data-testid="guest-progress" data-pct=${pct}></progress>
          <span data-testid="guest-progress-text">${s.bytesTotal > 0 ? this.progressText(s) : `${pct}%`}</span>
        </div>` : nothing}
      </section>
      ${s.askOffer && s.status !== 'gone' ? this.renderOffer(s) : nothing}
      <section class="card" aria-labelledby="dev-title">
        <h2 id="dev-title">This device</h2>
        <dl>
          <dt>Adapter</dt><dd>${s.caps?.adapter ?? '…'}${s.caps && ENGINES[s.caps.engine]?.lastResort ? ' · CPU engine' : ''}</dd>
          <dt>Memory</dt><dd data-testid="guest-memory-offered">${s.caps ? memoryOfferText(s.caps.memoryBudgetBytes, s.caps.deviceMemoryGiB, formatBytes) : '…'}</dd>
          <dt>Speed</dt><dd data-testid="guest-toks">${s.tokensPerSecond > 0 ? `${s.tokensPerSecond.toFixed(1)} tok/s` : '—'}</dd>
          <dt>Screen</dt><dd data-testid="guest-wake">${WAKE_TEXT[s.wakeLock]}</dd>
        </dl>
        ${s.status === 'gone' || (s.askOffer && !this.changingMemory) ? nothing : this.changingMemory
          ? html`<form class="mem" @submit=${this.rejoinWithMemory}>
              <pooled-memory-field testid="guest-memory" .value=${this.memText}
                @change=${(e: Event) => { this.memText = (e.target as HTMLInputElement).value; this.memProblem = undefined; }}></pooled-memory-field>
              ${this.memProblem ? html`<div class="error" role="alert">${this.memProblem}</div>` : nothing}
              <div class="actions"><button class="primary" type="submit" data-testid="guest-memory-rejoin">Rejoin offering this</button>
                <button type="button" @click=${() => (this.changingMemory = false)}>Cancel</button></div>
            </form>`
          : html`<p><button data-testid="guest-memory-change" @click=${() => { this.changingMemory = true; this.memText = s.caps ? gibText(s.caps.memoryBudgetBytes) : ''; }}>Offer a different amount of memory…</button></p>`}
      </section>
      ${s.status === 'gone'
        // A join that failed has its error box (Retry, Back to start) above: no second pair here.
        ? s.joinFailed ? nothing : html`<div class="gone-actions"><button class="primary" data-testid="rejoin" @click=${() => location.reload()}
              title="Join the same room again as this device">Rejoin</button><a class="button" href=${location.pathname}>Back to start</a></div>`
        : html`<button class="danger" data-testid="leave" @click=${() => void this.session?.leave()}>Leave the room</button>`}
    </main>`;
  }

  private progressText(s: GuestState): string {
    this.loadRate.push(s.bytesDone);
    return loadProgressText(s.bytesDone, s.bytesTotal, this.loadRate);
  }

  /**
   * Asked once on a device (nothing kept in this browser yet): the memory it offers, the suggestion
   * filled in. It has joined with the suggestion meanwhile, so nothing waits on the answer.
   */
  private renderOffer(s: GuestState) {
    const text = this.offerText ?? gibText(s.suggestion.bytes);
    return html`<section class="card offer" aria-labelledby="offer-title" data-testid="guest-offer">
      <h2 id="offer-title">How much memory may the room use here?</h2>
      <p class="muted">It joined offering the suggestion below; asked once: this browser keeps your answer for next time.</p>
      <form class="mem" @submit=${(e: Event) => this.answerOffer(e, s)}>
        <pooled-memory-field testid="guest-offer-memory" .value=${text}
          @change=${(e: Event) => { this.offerText = (e.target as HTMLInputElement).value; this.offerProblem = undefined; }}></pooled-memory-field>
        ${this.offerProblem ? html`<div class="error" role="alert">${this.offerProblem}</div>` : nothing}
        <div class="actions"><button class="primary" type="submit" data-testid="guest-offer-save">Offer this</button></div>
      </form>
    </section>`;
  }

  private answerOffer(e: Event, s: GuestState): void {
    e.preventDefault();
    try {
      const bytes = memoryBudgetFromGiB(this.offerText ?? gibText(s.suggestion.bytes)) ?? s.suggestion.bytes;
      this.session?.answerOffer(bytes);
      // A figure other than the one it joined with: rejoin offering it (a reload carries ?mem=).
      if (s.caps && bytes !== s.caps.memoryBudgetBytes) {
        const q = new URLSearchParams(location.search);
        q.set('mem', gibText(bytes));
        location.search = `?${q}`;
      }
    } catch (err) {
      this.offerProblem = (err as Error).message;
    }
  }

  /** Once dealt: what the room needs from this device (its layers' weights and cache), of what it offers. */
  private renderNeeds(s: GuestState, holds: boolean) {
    if (!holds) return nothing;
    const need = shareNeeds(s);
    const layers = describeRange(s.range);
    return html`<p data-testid="guest-needs">${need
      ? html`The host needs <b>${formatBytes(need.bytes)}</b> of your memory for ${layers}${s.caps ? html` (of the ${formatBytes(s.caps.memoryBudgetBytes)} offered)` : nothing}:
          ${formatBytes(need.weights)} of weights and ${formatBytes(need.cache)} of cache for ${s.ctx!.toLocaleString('en-US')} tokens of context.`
      : html`The host dealt this device ${layers}; what they need from your memory shows once their size is known.`}</p>`;
  }

  /** A reload rejoins the same room as the same device; ?mem= carries the new budget to it. */
  private rejoinWithMemory(e: Event): void {
    e.preventDefault();
    try {
      const bytes = memoryBudgetFromGiB(this.memText);
      const q = new URLSearchParams(location.search);
      if (bytes) q.set('mem', gibText(bytes)); else q.delete('mem');
      location.search = `?${q}`;
    } catch (err) {
      this.memProblem = (err as Error).message;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-guest-screen': GuestScreen }
}
