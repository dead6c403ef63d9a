// <pooled-draft-choice>, under the room panel's speculative decoding switch: where drafts come from.
// Prompt lookup (no model, the default) or a draft model the user names (a Hugging Face id, URL or
// /path of a small model with the target's tokenizer), loaded whole on this device. The state line says
// what is loading, what is in effect and what it holds here; a refusal shows its named error.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { formatBytes } from '../app/draft-loader.ts';
import type { HostSession, HostState } from '../app/host-session.ts';
import { theme } from './theme.ts';

/** Draft models worth suggesting: the smallest Qwen3, whose tokenizer every Qwen3 target shares. */
const SUGGESTED = ['mlc-ai/Qwen3-0.6B-q4f16_1-MLC', 'Qwen/Qwen3-0.6B', 'Qwen/Qwen3-0.6B-GGUF:Q8_0'];

@customElement('pooled-draft-choice')
export class DraftChoice extends LitElement {
  @property({ attribute: false }) session?: HostSession;
  @property({ attribute: false }) state?: HostState;
  /** The user picked "draft model" and the field shows, before anything loaded. */
  @state() private picking = false;
  @state() private choice = '';

  static override styles = [theme, css`
    :host { display: grid; gap: .35rem; font-size: 12.5px; padding-left: 1.35rem; }
    fieldset { border: 0; margin: 0; padding: 0; display: flex; gap: .2rem .75rem; flex-wrap: wrap; align-items: center; }
    legend { float: left; padding: 0; margin-right: .1rem; }
    fieldset label { display: inline-flex; align-items: center; gap: .3rem; cursor: pointer; }
    fieldset input { margin: 0; }
    form { display: flex; gap: .4rem; }
    form input { flex: 1; min-width: 0; padding: .25rem .45rem; font-size: 12.5px; }
    form button { padding: .2rem .6rem; font-size: 12.5px; }
    .line { margin: 0; overflow-wrap: anywhere; }
    .error { margin: 0; font-size: 12px; }
  `];

  override render() {
    const s = this.state;
    if (!s) return nothing;
    const d = s.draft;
    const model = d.kind !== 'lookup' || this.picking;
    return html`
      <fieldset data-testid="draft-choice" data-kind=${d.kind}>
        <legend class="muted">Drafts</legend>
        <label title="Guess from the conversation: no model, nothing to load">
          <input type="radio" name="drafts" data-testid="drafts-lookup" .checked=${!model} @change=${this.lookup} />prompt lookup</label>
        <label title="A small model with the target's tokenizer guesses the next tokens, loaded whole on this device">
          <input type="radio" name="drafts" data-testid="drafts-model" .checked=${model} @change=${() => (this.picking = true)} />draft model</label>
      </fieldset>
      ${model ? html`
        <form @submit=${this.load}>
          <label class="sr-only" for="draft-model">Draft model (Hugging Face id or URL)</label>
          <input id="draft-model" type="text" list="draft-suggestions" data-testid="draft-input" placeholder="e.g. Qwen/Qwen3-0.6B" spellcheck="false"
            .value=${this.choice} @input=${(e: Event) => (this.choice = (e.target as HTMLInputElement).value)} />
          <datalist id="draft-suggestions">${SUGGESTED.map((id) => html`<option value=${id}></option>`)}</datalist>
          <button type="submit" data-testid="draft-load" ?disabled=${!this.choice.trim() || d.kind === 'loading'}>Load</button>
        </form>` : nothing}
      ${d.kind === 'loading' ? html`<p class="line muted" data-testid="draft-status" role="status">${d.step}</p>` : nothing}
      ${d.kind === 'model' ? html`<p class="line muted" data-testid="draft-status" role="status"
          title="The draft model's weights and its KV cache, on this device beside its share of the room's model">${d.name} · ${formatBytes(d.bytes)} on this device</p>` : nothing}
      ${s.draftError ? html`<p class="error" role="alert" data-testid="draft-error">${s.draftError}</p>` : nothing}`;
  }

  override willUpdate(): void {
    // A draft model named by ?draft= shows in the field while it loads.
    const d = this.state?.draft;
    if (!this.choice && d && d.kind === 'loading') this.choice = d.name;
  }

  private lookup(): void {
    this.picking = false;
    rememberDraft(null);
    this.session?.useLookupDrafts();
  }

  private load(e: Event): void {
    e.preventDefault();
    const choice = this.choice.trim();
    if (!choice) return;
    rememberDraft(choice);
    void this.session?.loadDraft(choice);
  }
}

/** A reload keeps the choice: ?draft= in the address (replaced, not a new history entry). */
function rememberDraft(choice: string | null): void {
  const q = new URLSearchParams(location.search);
  if (choice) q.set('draft', choice);
  else q.delete('draft');
  history.replaceState(null, '', `${location.pathname}?${q}`);
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-draft-choice': DraftChoice }
}
