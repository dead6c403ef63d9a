// <pooled-host-screen>: the host's room panel beside its agent workspace.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { HostSession, HostState } from '../app/host-session.ts';
import { StoreController } from '../app/store.ts';
import { TINY_ANSWER_CAP } from '../app/models.ts';
import type { WorkspaceNotice } from './agent-workspace.ts';
import { theme } from './theme.ts';
import './room-panel.ts';
import './api-panel.ts';
import './agent-workspace.ts';
import './error-box.ts';

/** Said where the request is typed when the room runs the built-in random-weights model. */
function tinyNotice(): WorkspaceNotice {
  return {
    title: 'Tiny test model',
    text: `random weights, for trying the room: answers are gibberish and stop at ${TINY_ANSWER_CAP} tokens.`,
    empty: 'Send any request to watch tokens stream through the room. To build apps, host the room with a Qwen3 model.',
    link: { href: location.pathname, label: 'Pick another model →' },
  };
}

/** The host: the room (devices, invite) beside the agent workspace that runs on it. */
@customElement('pooled-host-screen')
export class HostScreen extends LitElement {
  @property({ attribute: false }) session?: HostSession;
  private watch?: StoreController<HostState>;

  static override styles = [theme, css`
    :host { display: grid; grid-template-columns: minmax(18rem, 24rem) 1fr; height: 100vh; min-height: 0; }
    aside { display: flex; flex-direction: column; gap: .75rem; overflow: auto; padding: .75rem; border-right: 1px solid var(--line); background: #121a21; }
    /* Not yet open: one centred column across the whole screen (not the room panel's 24 rem track). */
    .starting { grid-column: 1 / -1; justify-self: center; align-self: start; width: min(40rem, 100%); padding: 2rem 1rem; display: grid; gap: .75rem; }
    .starting h1 { font-size: 1.3rem; }
    @media (max-width: 900px) { :host { grid-template-columns: 1fr; height: auto; } aside { border-right: 0; } pooled-agent-workspace { height: 90vh; } }
  `];

  override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('session') && this.session && !this.watch) this.watch = new StoreController(this, this.session.store);
  }

  override render() {
    const s = this.session?.state;
    if (!s) return nothing;
    if (s.phase !== 'open') {
      return html`<main class="starting" aria-live="polite">
        <h1>${s.phase === 'failed' ? 'The room did not open' : 'Opening a room'} <span class="muted">with ${s.modelName}</span></h1>
        ${s.phase === 'starting' ? html`<div class="card"><p data-testid="host-step">${s.step}</p><progress aria-label="Opening the room"></progress></div>` : nothing}
        ${s.error ? html`<pooled-error-box data-testid="host-error" .error=${s.error}></pooled-error-box>` : nothing}
      </main>`;
    }
    return html`
      <aside aria-label="Room"><pooled-room-panel .session=${this.session}></pooled-room-panel>
        <pooled-api-panel .serve=${this.session!.api}></pooled-api-panel></aside>
      <pooled-agent-workspace .workspace=${this.session!.workspace} heading=${`Agent · ${s.modelName}`}
        .notice=${this.session!.tinyModel ? tinyNotice() : undefined} .prefill=${s.prefill}></pooled-agent-workspace>`;
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-host-screen': HostScreen }
}
