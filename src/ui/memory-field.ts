// <pooled-memory-field>, on the start and guest screens: the memory this device offers the room.
import { LitElement, css, html } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { defaultMemoryBudget, MAX_MEMORY_GIB, MIN_MEMORY_GIB, type DefaultMemory } from '../app/memory-budget.ts';
import { formatBytes, theme } from './theme.ts';

/**
 * "Memory this device offers the room (GiB)": a number input, empty = the device's default, which it
 * shows (derived as the room derives it). The parent reads `value` (the text as typed) and parses it.
 */
@customElement('pooled-memory-field')
export class MemoryField extends LitElement {
  @property() value = '';
  /** data-testid of the input (two fields share the start screen). */
  @property() testid = 'memory';
  @state() private fallback?: DefaultMemory;

  static override styles = [theme, css`
    :host { display: grid; gap: .25rem; }
    .row { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
    input { width: 7rem; }
    .hint { font-size: 12.5px; }
  `];

  override connectedCallback(): void {
    super.connectedCallback();
    void defaultMemoryBudget().then((d) => (this.fallback = d)).catch(() => undefined);
  }

  override render() {
    const d = this.fallback;
    const placeholder = d ? String(Math.round((d.bytes / 2 ** 30) * 100) / 100) : '';
    return html`
      <div class="row">
        <label for="mem">Memory this device offers the room (GiB)</label>
        <input id="mem" type="number" inputmode="decimal" min=${MIN_MEMORY_GIB} max=${MAX_MEMORY_GIB} step="0.25"
          placeholder=${placeholder} .value=${this.value} data-testid=${this.testid} aria-describedby="mem-hint"
          @input=${(e: Event) => { this.value = (e.target as HTMLInputElement).value; this.dispatchEvent(new Event('change', { bubbles: true, composed: true })); }} />
      </div>
      <span id="mem-hint" class="hint muted" data-testid=${`${this.testid}-default`}>${d
        ? `Empty: the default, ${formatBytes(d.bytes)} (${d.why}). The room deals this device no more layers than that holds, and its layers' cache at the room's context.`
        : 'Empty: this device’s suggested offer (from the memory the browser reports).'}</span>`;
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-memory-field': MemoryField }
}
