// <pooled-error-box>: an error in plain words (what happened, the likely cause, what to do), a Retry and
// a way back, with the technical text folded below for whoever needs it.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { explainError } from '../app/explain-error.ts';
import { theme } from './theme.ts';

/** Fires `retry` (bubbling, composed) when Retry is pressed. */
@customElement('pooled-error-box')
export class ErrorBox extends LitElement {
  /** "Name: message", as the sessions keep errors. */
  @property() error = '';
  /** Whether to offer Retry, and a "Back to start" link. */
  @property({ type: Boolean }) retry = true;
  @property({ type: Boolean }) back = true;

  static override styles = [theme, css`
    :host { display: block; }
    .error { display: grid; gap: .35rem; white-space: normal; }
    .what { font-weight: 600; font-size: 1rem; margin: 0; }
    .actions { display: flex; gap: .5rem; flex-wrap: wrap; margin-top: .25rem; }
    details { font-size: 12.5px; color: var(--muted); }
    details pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .35rem 0 0; color: #ffd9d5; }
  `];

  override render() {
    if (!this.error) return nothing;
    const e = explainError(this.error);
    return html`<div class="error" role="alert" data-testid="error-box">
      <p class="what" data-testid="error-what">${e.what}</p>
      <p data-testid="error-cause">${e.cause}</p>
      <p data-testid="error-todo">${e.todo}</p>
      <div class="actions">
        ${this.retry ? html`<button class="primary" data-testid="retry" @click=${() => this.dispatchEvent(new CustomEvent('retry', { bubbles: true, composed: true }))}>Retry</button>` : nothing}
        ${this.back ? html`<a class="button" href=${location.pathname} data-testid="back-to-start">Back to start</a>` : nothing}
      </div>
      <details><summary>Technical detail</summary><pre data-testid="error-detail">${e.detail}</pre></details>
    </div>`;
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-error-box': ErrorBox }
}
