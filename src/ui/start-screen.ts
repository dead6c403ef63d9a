// <pooled-start-screen>, the first screen: host a room or join one.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { adapterLabel, requestAdapter, summarizeAdapter, type AdapterInfoSummary } from '../gpu/adapter.ts';
import { parseInvite } from '../room/signaling.ts';
import { contextWarning } from '../app/url-params.ts';
import type { ModelChoice } from '../app/host-session.ts';
import { savedServerChoice, serverUrlExamples, type ServerChoice } from '../app/server-session.ts';
import type { ModelPicker } from './model-picker.ts';
import { gibText, memoryBudgetFromGiB } from '../app/memory-budget.ts';
import { defaultDeviceName, saveDeviceName } from '../app/device-name.ts';
import { theme } from './theme.ts';
import './model-picker.ts';
import './memory-field.ts';

/** ctx absent: the model's default context (8,192 up to 4B parameters, 16,384 bigger dense, 32,768 MoE). */
export interface HostRequest { choice: ModelChoice; ctx?: number; memoryBudgetBytes?: number }
export interface JoinRequest { roomId: string; memoryBudgetBytes?: number }
export type ServerRequest = ServerChoice;

/** First screen: host a room (model picker, context) or join one from a link; says what this device offers. */
@customElement('pooled-start-screen')
export class StartScreen extends LitElement {
  @property() model = 'tiny';
  /** 0 = by model (the default for its size). */
  @property({ type: Number }) ctx = 0;
  /** ?mem= in bytes: fills both memory fields. */
  @property({ type: Number }) memoryBudgetBytes = 0;
  @state() private hostMem = '';
  @state() private joinMem = '';
  @state() private adapter?: AdapterInfoSummary;
  @state() private adapterError?: string;
  @state() private problem?: string;
  @state() private joinProblem?: string;
  @state() private link = '';
  @state() private deviceName = defaultDeviceName();
  @state() private server: ServerChoice = savedServerChoice();
  @state() private serverProblem?: string;
  @query('pooled-model-picker') private picker?: ModelPicker;

  static override styles = [theme, css`
    :host { display: block; }
    .examples { font-size: 12px; margin: -.25rem 0 .4rem; overflow-wrap: anywhere; }
    main { max-width: 62rem; margin: 0 auto; padding: 1.5rem 1.25rem 3rem; display: grid; gap: 1rem; }
    .hero h1 { font-size: 1.7rem; }
    .hero p { color: var(--muted); max-width: 42rem; }
    .cols { display: grid; grid-template-columns: 1.4fr 1fr; gap: 1rem; align-items: start; }
    .stack { display: grid; gap: 1rem; }
    form { display: grid; gap: .7rem; }
    .ctx { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
    .ctx input { width: 7rem; }
    .ok { color: var(--accent-2); } .bad { color: var(--bad); }
    label.field { display: grid; gap: .25rem; font-size: 13px; color: var(--muted); }
    /* The main action stays in view while the model list scrolls past (21 rows on a phone). */
    .submit { position: sticky; bottom: 0; z-index: 1; margin: 0 -1rem -.9rem; padding: .6rem 1rem; background: var(--panel);
      border-top: 1px solid var(--line); border-radius: 0 0 10px 10px; display: flex; align-items: center; gap: .6rem; flex-wrap: wrap; }
    @media (max-width: 760px) { .cols { grid-template-columns: 1fr; } }
  `];

  override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('memoryBudgetBytes') && this.memoryBudgetBytes > 0) this.hostMem = this.joinMem = gibText(this.memoryBudgetBytes);
  }

  override connectedCallback(): void {
    super.connectedCallback();
    requestAdapter()
      .then((a) => (this.adapter = summarizeAdapter(a)))
      .catch((e: Error) => (this.adapterError = e.message));
  }

  /** The host memory field as bytes, 0 while it is empty or not a number yet. */
  private hostBudget(): number {
    try { return memoryBudgetFromGiB(this.hostMem) ?? 0; } catch { return 0; }
  }

  override render() {
    const warning = this.ctx > 0 ? contextWarning(this.ctx) : null;
    return html`<main>
      <section class="hero">
        <h1>pooled</h1>
        <p>One language model, pooled from the devices in a room. The host splits a Qwen3 model's layers across
          laptops and phones; each runs its share on WebGPU, and a coding agent builds web apps on top.</p>
      </section>
      <div class="cols">
        <section class="card" aria-labelledby="host-title">
          <form @submit=${this.host}>
            <h2 id="host-title">Host a room</h2>
            <pooled-model-picker .initial=${this.model} .ctx=${this.ctx} .budgetBytes=${this.hostBudget()}></pooled-model-picker>
            <div class="ctx">
              <label for="ctx">Context (tokens)</label>
              <input id="ctx" type="number" min="256" step="256" .value=${this.ctx > 0 ? String(this.ctx) : ''} data-testid="ctx"
                placeholder="by model" title="Empty: 8,192 up to 4B parameters, 16,384 for bigger models, 32,768 for MoE"
                @input=${(e: Event) => (this.ctx = Number((e.target as HTMLInputElement).value) || 0)} />
            </div>
            <pooled-memory-field testid="host-memory" .value=${this.hostMem}
              @change=${(e: Event) => (this.hostMem = (e.target as HTMLInputElement).value)}></pooled-memory-field>
            ${warning ? html`<div class="warning" role="note">${warning}</div>` : nothing}
            ${this.problem ? html`<div class="error" role="alert">${this.problem}</div>` : nothing}
            <div class="submit"><button class="primary" type="submit" data-testid="host-room">Host a room</button></div>
          </form>
        </section>
        <div class="stack">
          <section class="card" aria-labelledby="join-title">
            <form @submit=${this.join}>
              <h2 id="join-title">Join a room</h2>
              <label for="link" class="muted">Paste the invite link (or scan the host's QR code with this device's camera).</label>
              <input id="link" type="url" placeholder="http://…/?room=…" .value=${this.link} data-testid="join-link"
                @input=${(e: Event) => (this.link = (e.target as HTMLInputElement).value)} />
              <pooled-memory-field testid="join-memory" .value=${this.joinMem}
                @change=${(e: Event) => (this.joinMem = (e.target as HTMLInputElement).value)}></pooled-memory-field>
              ${this.joinProblem ? html`<div class="error" role="alert">${this.joinProblem}</div>` : nothing}
              <div><button type="submit" data-testid="join-room">Join</button></div>
            </form>
          </section>
          <section class="card" aria-labelledby="device-title" aria-live="polite">
            <h2 id="device-title">This device</h2>
            <label class="field">Its name in a room <input type="text" maxlength="64" .value=${this.deviceName} data-testid="device-name"
              @change=${(e: Event) => { saveDeviceName((e.target as HTMLInputElement).value); this.deviceName = defaultDeviceName(); }} /></label>
            ${this.adapter
              ? html`<p class="ok" data-testid="adapter">WebGPU adapter: ${adapterLabel(this.adapter)}</p>`
              : this.adapterError
                ? html`<p class="bad" data-testid="adapter-error">${this.adapterError}</p>
                    <p class="muted">It can still join with the CPU engine, slowly.</p>`
                : html`<p>Looking for a WebGPU adapter…</p>`}
          </section>
          <section class="card" aria-labelledby="server-title">
            <form @submit=${this.useServer}>
              <h2 id="server-title">Use a server</h2>
              <p class="muted">Run the agent on llama.cpp's server, vLLM or Ollama (OpenAI-compatible) instead of a room.</p>
              <label class="field">Server URL <input type="url" required .value=${this.server.url} data-testid="server-url"
                placeholder=${serverUrlExamples(location.port)[0]!.url} aria-describedby="server-url-examples"
                @input=${(e: Event) => (this.server = { ...this.server, url: (e.target as HTMLInputElement).value })} /></label>
              <p class="muted examples" id="server-url-examples" data-testid="server-url-examples">For example
                ${serverUrlExamples(location.port).map((x, i, all) => html`<code>${x.url}</code> (${x.server})${i < all.length - 1 ? ', ' : '.'}`)}</p>
              <label class="field">Model name on the server <input type="text" required .value=${this.server.model} placeholder="qwen3-1.7b" data-testid="server-model"
                @input=${(e: Event) => (this.server = { ...this.server, model: (e.target as HTMLInputElement).value })} /></label>
              <label class="field">Tokenizer and chat template from <input type="text" required .value=${this.server.tokenizer} data-testid="server-tokenizer"
                title="A Hugging Face id, URL or folder with the model's tokenizer.json and tokenizer_config.json"
                @input=${(e: Event) => (this.server = { ...this.server, tokenizer: (e.target as HTMLInputElement).value })} /></label>
              ${this.serverProblem ? html`<div class="error" role="alert">${this.serverProblem}</div>` : nothing}
              <div><button type="submit" data-testid="use-server">Open the workspace</button></div>
            </form>
          </section>
          <section class="card" aria-labelledby="try-title">
            <h2 id="try-title">Just looking?</h2>
            <p class="muted">Try the agent workspace on a scripted model: no download, no GPU.</p>
            <a class="button" href="?agent=replay" data-testid="try-replay">Open the demo workspace</a>
          </section>
        </div>
      </div>
    </main>`;
  }

  private host(e: Event): void {
    e.preventDefault();
    this.problem = undefined;
    if (this.ctx !== 0 && (!Number.isInteger(this.ctx) || this.ctx < 256)) { this.problem = 'Context must be a whole number of at least 256 tokens, or empty for the model\'s default.'; return; }
    try {
      const memoryBudgetBytes = memoryBudgetFromGiB(this.hostMem);
      const choice = this.picker!.choice();
      const detail: HostRequest = { choice, ...(this.ctx > 0 ? { ctx: this.ctx } : {}), ...(memoryBudgetBytes ? { memoryBudgetBytes } : {}) };
      this.dispatchEvent(new CustomEvent<HostRequest>('host', { detail, bubbles: true, composed: true }));
    } catch (err) {
      this.problem = (err as Error).message;
    }
  }

  private useServer(e: Event): void {
    e.preventDefault();
    const choice: ServerChoice = { url: this.server.url.trim(), model: this.server.model.trim(), tokenizer: this.server.tokenizer.trim() };
    if (!/^https?:\/\//i.test(choice.url)) { this.serverProblem = 'The server URL starts with http:// or https://'; return; }
    if (!choice.model || !choice.tokenizer) { this.serverProblem = 'Give the model name the server knows, and where its tokenizer is.'; return; }
    this.serverProblem = undefined;
    this.dispatchEvent(new CustomEvent<ServerRequest>('server', { detail: choice, bubbles: true, composed: true }));
  }

  private join(e: Event): void {
    e.preventDefault();
    try {
      const roomId = parseInvite(this.link);
      const memoryBudgetBytes = memoryBudgetFromGiB(this.joinMem);
      this.joinProblem = undefined;
      const detail: JoinRequest = { roomId, ...(memoryBudgetBytes ? { memoryBudgetBytes } : {}) };
      this.dispatchEvent(new CustomEvent<JoinRequest>('join', { detail, bubbles: true, composed: true }));
    } catch (err) {
      this.joinProblem = (err as Error).message;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-start-screen': StartScreen }
}
