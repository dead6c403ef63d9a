// <pooled-preview-pane>, in the workspace (and the preview harness): the served page and its console.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { PreviewHost } from '../preview/host.ts';
import type { PreviewLogLine, ServedPage } from '../preview/types.ts';

/**
 * The served page with its address (":5173/") and its console. Shows the PreviewHost's frames (it owns
 * them; the pane only places its element once, since moving an iframe reloads it).
 */
@customElement('pooled-preview-pane')
export class PreviewPane extends LitElement {
  @property({ attribute: false }) preview?: PreviewHost;
  @state() private ports: ServedPage[] = [];
  @state() private lines: PreviewLogLine[] = [];
  @state() private clearedAt = 0;
  @state() private blocked = false;
  private unsubscribe?: () => void;
  private placed?: PreviewHost;
  private refreshQueued = false;

  static override styles = css`
    :host { display: block; min-height: 16rem; color: #e8eef4; background: #151d25; font: 13px/1.4 system-ui, sans-serif; }
    .pane { display: flex; flex-direction: column; height: 100%; min-height: inherit; }
    header { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; padding: .4rem .6rem; border-bottom: 1px solid #2a3947; }
    .address { font-family: ui-monospace, monospace; background: #0f1419; border: 1px solid #2a3947; border-radius: 6px; padding: .15rem .5rem; }
    button { font: inherit; color: inherit; background: #22303c; border: 1px solid #2a3947; border-radius: 6px; padding: .15rem .55rem; cursor: pointer; }
    button[aria-pressed='true'] { background: #2f6f9f; }
    button:focus-visible { outline: 2px solid #66b3ff; outline-offset: 1px; }
    .frames { position: relative; flex: 1 1 60%; min-height: 10rem; background: #fff; }
    .empty { position: absolute; inset: 0; display: grid; place-items: center; color: #555; }
    section { flex: 0 0 auto; height: 30%; min-height: 5rem; display: flex; flex-direction: column; border-top: 1px solid #2a3947; }
    section h2 { font-size: 12px; margin: 0; padding: .3rem .6rem; display: flex; justify-content: space-between; align-items: center; }
    /* role=log on a wrapper: on the list itself it would hide the items' list semantics. */
    .log { flex: 1 1 auto; min-height: 0; overflow: auto; }
    ol { list-style: none; margin: 0; padding: 0 .6rem .4rem; font-family: ui-monospace, monospace; font-size: 12px; }
    li { white-space: pre-wrap; word-break: break-word; border-bottom: 1px solid #1d2833; padding: 1px 0; }
    .blocked { color: #ffd180; }
    .error { color: #ff8a80; } .warn { color: #ffd180; } .info, .debug { color: #9fb3c8; }
  `;

  override updated(changed: Map<string, unknown>): void {
    if (changed.has('preview') && this.preview !== this.placed) this.attachHost();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.unsubscribe?.();
  }

  private attachHost(): void {
    this.unsubscribe?.();
    this.placed = this.preview;
    const slot = this.renderRoot.querySelector('.frames');
    if (!this.preview || !slot) return;
    slot.append(this.preview.element);
    this.unsubscribe = this.preview.onChange(() => this.queueRefresh());
    void this.refresh();
  }

  /** At most one refresh per animation frame, however many lines arrive (a page may flood its console). */
  private queueRefresh(): void {
    if (this.refreshQueued) return;
    this.refreshQueued = true;
    requestAnimationFrame(() => {
      this.refreshQueued = false;
      void this.refresh();
    });
  }

  private async refresh(): Promise<void> {
    if (!this.preview) return;
    this.ports = await this.preview.served();
    this.lines = this.preview.log.since(this.clearedAt).slice(-200);
  }

  override render() {
    const selected = this.preview?.selectedPort;
    return html`<div class="pane">
      <header>
        <span class="address" data-testid="preview-address" aria-label="Preview address">${selected === undefined ? 'nothing served' : `:${selected}/`}</span>
        ${this.ports.length < 2 ? nothing : html`<nav aria-label="Served ports">
          ${this.ports.map((p) => html`<button aria-pressed=${String(p.port === selected)} title=${`/${p.folder}`}
              @click=${() => this.preview?.select(p.port)}>:${p.port}</button>`)}
        </nav>`}
        ${selected !== undefined ? html`<button @click=${() => this.reload()} aria-label="Reload the page">Reload</button>
          <button data-testid="preview-open-tab" @click=${() => this.openInTab()} title="The same page in a new browser tab; it shows each new build">Open in a new tab ↗</button>` : nothing}
        ${this.blocked ? html`<span role="status" class="blocked">The browser blocked the new tab: allow pop-ups for this site.</span>` : nothing}
      </header>
      <div class="frames" role="region" aria-label="Served page">
        ${this.ports.length === 0 ? html`<div class="empty">Nothing is served yet. The agent's serve tool shows its page here.</div>` : nothing}
      </div>
      <section aria-labelledby="console-title">
        <h2 id="console-title">Console
          <button @click=${() => this.clear()} aria-label="Clear the console">Clear</button>
        </h2>
        <div class="log" role="log" aria-live="polite" aria-label="Console output" data-testid="preview-console" tabindex="0"><ol>
          ${this.lines.map((l) => html`<li class=${l.level}>${this.ports.length > 1 ? `:${l.port} ` : ''}${l.text}</li>`)}
        </ol></div>
      </section>
    </div>`;
  }

  private reload(): void {
    const port = this.preview?.selectedPort;
    const served = this.ports.find((p) => p.port === port);
    if (served) void this.preview?.serve(served.page === 'index.html' ? served.folder : `${served.folder ? served.folder + '/' : ''}${served.page}`);
  }

  private openInTab(): void {
    this.blocked = this.preview?.openInTab() === null;
  }

  private clear(): void {
    this.clearedAt = this.preview?.log.cursor ?? 0;
    void this.refresh();
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pooled-preview-pane': PreviewPane;
  }
}
