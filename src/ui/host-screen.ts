// <pooled-host-screen>: the host's room panel beside its agent workspace.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { HostSession, HostState } from '../app/host-session.ts';
import { StoreController } from '../app/store.ts';
import { theme } from './theme.ts';
import './room-panel.ts';
import './agent-workspace.ts';

/** The host: the room (devices, invite) beside the agent workspace that runs on it. */
@customElement('pooled-host-screen')
export class HostScreen extends LitElement {
  @property({ attribute: false }) session?: HostSession;
  private watch?: StoreController<HostState>;

  static override styles = [theme, css`
    :host { display: grid; grid-template-columns: minmax(18rem, 24rem) 1fr; height: 100vh; min-height: 0; }
    aside { overflow: auto; padding: .75rem; border-right: 1px solid var(--line); background: #121a21; }
    .starting { padding: 2rem; display: grid; gap: .75rem; max-width: 40rem; }
    @media (max-width: 900px) { :host { grid-template-columns: 1fr; height: auto; } aside { border-right: 0; } pooled-agent-workspace { height: 90vh; } }
  `];

  override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('session') && this.session && !this.watch) this.watch = new StoreController(this, this.session.store);
  }

  override render() {
    const s = this.session?.state;
    if (!s) return nothing;
    if (s.phase !== 'open') {
      return html`<div class="starting" aria-live="polite">
        <h2>Opening a room with ${s.modelName}</h2>
        ${s.phase === 'starting' ? html`<p class="muted" data-testid="host-step">${s.step}</p><progress aria-label="Opening the room"></progress>` : nothing}
        ${s.error ? html`<div class="error" role="alert" data-testid="host-error">${s.error}</div><a class="button" href=${location.pathname}>Back</a>` : nothing}
      </div>`;
    }
    return html`
      <aside aria-label="Room"><pooled-room-panel .session=${this.session}></pooled-room-panel></aside>
      <pooled-agent-workspace .workspace=${this.session!.workspace} heading=${`Agent · ${s.modelName}`}></pooled-agent-workspace>`;
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-host-screen': HostScreen }
}
