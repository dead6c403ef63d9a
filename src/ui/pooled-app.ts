import { LitElement, css, html } from 'lit';
import { customElement, state } from 'lit/decorators.js';
import { adapterLabel, requestAdapter, summarizeAdapter, type AdapterInfoSummary } from '../gpu/adapter.ts';

/** Top-level shell. For now: says which WebGPU adapter this device offers the room. */
@customElement('pooled-app')
export class PooledApp extends LitElement {
  @state() private adapter?: AdapterInfoSummary;
  @state() private error?: string;

  static override styles = css`
    :host { display: block; font: 15px/1.5 system-ui, sans-serif; color: #e8eef4; background: #0f1419; min-height: 100vh; }
    main { max-width: 44rem; margin: 0 auto; padding: 2rem 1.25rem; }
    h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
    .tag { color: #9fb3c8; margin: 0 0 1.5rem; }
    .card { border: 1px solid #2a3947; border-radius: 10px; padding: 1rem 1.25rem; background: #151d25; }
    .ok { color: #66d9a8; } .bad { color: #ff8a80; }
  `;

  override connectedCallback(): void {
    super.connectedCallback();
    requestAdapter()
      .then((a) => (this.adapter = summarizeAdapter(a)))
      .catch((e: Error) => (this.error = e.message));
  }

  override render() {
    return html`<main>
      <h1>pooled</h1>
      <p class="tag">One language model, pooled from the devices in a room.</p>
      <section class="card" aria-live="polite">
        <h2>This device</h2>
        ${this.adapter
          ? html`<p class="ok" data-testid="adapter">WebGPU adapter: ${adapterLabel(this.adapter)}</p>`
          : this.error
            ? html`<p class="bad" data-testid="adapter-error">${this.error}</p>`
            : html`<p>Looking for a WebGPU adapter…</p>`}
      </section>
    </main>`;
  }
}
