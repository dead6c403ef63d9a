// <pooled-api-panel>: "Serve this room's model" (off by default). On: the API key (Copy), the base URL and
// model id an editor needs, the relay's state, requests served and tokens in/out, and one line per request
// with the client's name (its User-Agent).
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { ApiServe, ApiServeState } from '../app/api-serve.ts';
import type { RelayStatus } from '../api/relay-client.ts';
import type { ServedLine } from '../api/serve-requests.ts';
import { StoreController } from '../app/store.ts';
import { theme } from './theme.ts';

function statusText(s: RelayStatus): string {
  switch (s.kind) {
    case 'off': return 'off';
    case 'connecting': return 'connecting to the server…';
    case 'serving': return 'serving';
    case 'refused': return `refused by the server: ${s.why}`;
    case 'retrying': return `${s.why}; trying again in ${Math.ceil(s.inMs / 1000)} s`;
  }
}

function lineText(l: ServedLine): string {
  const what = l.kind === 'chat' ? 'chat' : 'completion';
  if (l.outcome === 'ok') return `${what} · ${l.promptTokens} in, ${l.completionTokens} out`;
  if (l.outcome === 'cancelled') return `${what} · cancelled by the client after ${l.completionTokens} tokens`;
  return `${what} · error ${l.outcome}: ${l.message ?? ''}`;
}

@customElement('pooled-api-panel')
export class ApiPanel extends LitElement {
  @property({ attribute: false }) serve?: ApiServe;
  @state() private copied = '';
  private watch?: StoreController<ApiServeState>;

  static override styles = [theme, css`
    :host { display: block; }
    section { display: grid; gap: .5rem; }
    .switch { display: flex; align-items: center; gap: .5rem; cursor: pointer; font-weight: 600; }
    .switch input { margin: 0; }
    .field { display: grid; gap: .2rem; font-size: 12.5px; }
    .row { display: flex; gap: .4rem; }
    .row input { flex: 1; min-width: 0; font-family: var(--mono, monospace); }
    .counts { margin: 0; font-size: 12.5px; display: flex; gap: .8rem; flex-wrap: wrap; }
    ol.lines { margin: 0; padding-left: 1.1rem; font-size: 12px; color: var(--muted); max-height: 8rem; overflow: auto; }
    .client { color: var(--text, inherit); }
  `];

  override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('serve') && this.serve && !this.watch) this.watch = new StoreController(this, this.serve.store);
  }

  override render() {
    const s = this.serve?.state;
    if (!s) return nothing;
    return html`<section class="card" aria-labelledby="api-title">
      <h2 id="api-title" class="sr-only">OpenAI-compatible endpoint</h2>
      <label class="switch">
        <input type="checkbox" data-testid="api-serve" .checked=${s.on} @change=${(e: Event) => this.serve?.setOn((e.target as HTMLInputElement).checked)} />
        <span>Serve this room's model</span>
      </label>
      <p class="muted">An OpenAI-compatible endpoint for editors and scripts (Continue, Cline, Aider, the openai client): requests take turns with the agent's.</p>
      ${s.on ? this.details(s) : nothing}
    </section>`;
  }

  private details(s: ApiServeState) {
    return html`
      <p class="muted" data-testid="api-status" data-status=${s.status.kind} aria-live="polite">Endpoint: ${statusText(s.status)}</p>
      ${this.copyField('api-base', 'Base URL', s.baseUrl)}
      ${this.copyField('api-key', 'API key', s.key)}
      <p class="muted newkey">A key that got out: <button data-testid="api-new-key" @click=${this.newKey}>New key</button> (the old one stops working).</p>
      ${this.copyField('api-model', 'Model', s.modelId)}
      <p class="counts" data-testid="api-counts"><span>${s.served} ${s.served === 1 ? 'request' : 'requests'} served</span>
        <span>${s.tokensIn.toLocaleString('en-US')} tokens in</span><span>${s.tokensOut.toLocaleString('en-US')} tokens out</span></p>
      ${s.lines.length ? html`<ol class="lines" data-testid="api-lines" aria-label="API requests" aria-live="polite">
        ${s.lines.map((l) => html`<li><span class="client">${l.client}</span> · ${lineText(l)}</li>`)}</ol>` : nothing}`;
  }

  private copyField(id: string, label: string, value: string) {
    return html`<div class="field"><label for=${id}>${label}</label><div class="row">
      <input id=${id} type="text" readonly .value=${value} data-testid=${id} @focus=${(e: Event) => (e.target as HTMLInputElement).select()} />
      <button data-testid=${`copy-${id}`} aria-label=${`Copy the ${label.toLowerCase()}`} @click=${() => this.copy(id, value)}>${this.copied === id ? 'Copied' : 'Copy'}</button>
    </div></div>`;
  }

  private readonly newKey = (): void => {
    if (!confirm('Make a new API key? Every editor using the current one stops working until it gets the new one.')) return;
    this.serve?.newKey();
  };

  private async copy(id: string, value: string): Promise<void> {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      const input = this.renderRoot.querySelector<HTMLInputElement>(`#${id}`);
      input?.select();
      document.execCommand?.('copy');
    }
    this.copied = id;
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-api-panel': ApiPanel }
}
