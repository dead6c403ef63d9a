// <pooled-model-picker>, on the start screen: which model the room runs.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { ModelChoice } from '../app/host-session.ts';
import { defaultMemoryBudget } from '../app/memory-budget.ts';
import { devicesNeeded, MODEL_PRESETS, ModelChoiceError, modelName, modelUrlFor, presetContext, type ModelPreset } from '../app/models.ts';
import { formatBytes, theme } from './theme.ts';

type Kind = 'preset' | 'custom' | 'folder';

/**
 * Which model the room runs: a Qwen3 preset (MLC q4f16_1 or BF16, by Hugging Face id), any HF id or URL,
 * a local folder (picker or drop), or the built-in tiny test model. `choice()` says what to load.
 */
@customElement('pooled-model-picker')
export class ModelPicker extends LitElement {
  /** Initial selection (?model=): a preset id, any HF id or a URL. */
  @property() initial = 'tiny';
  /** The host's memory budget (0 = this device's default) and context (0 = each model's default): how many such devices a preset needs. */
  @property({ type: Number }) budgetBytes = 0;
  @property({ type: Number }) ctx = 0;
  @state() private defaultBudget = 0;
  @state() private kind: Kind = 'preset';
  @state() private preset = 'tiny';
  @state() private custom = '';
  @state() private folder: FileSystemDirectoryHandle | File[] | null = null;
  @state() private folderName = '';
  @state() private dragging = false;

  static override styles = [theme, css`
    :host { display: grid; gap: .5rem; }
    fieldset { border: 0; margin: 0; padding: 0; display: grid; gap: .25rem; }
    legend { font-weight: 600; margin-bottom: .25rem; }
    label.opt { display: grid; grid-template-columns: auto 1fr auto; gap: .1rem .5rem; align-items: baseline; padding: .3rem .45rem; border-radius: 7px; cursor: pointer; }
    label.opt:hover { background: var(--panel-2); }
    label.opt .size { color: var(--muted); font-size: 12px; }
    label.opt .note { grid-column: 2 / 4; color: var(--muted); font-size: 12.5px; }
    label.opt .need { grid-column: 2 / 4; font-size: 12.5px; color: var(--accent); }
    .other { display: grid; gap: .35rem; padding: .3rem .45rem; }
    .other input[type='text'] { width: 100%; }
    .drop { border: 1px dashed #4a5d70; border-radius: 8px; padding: .6rem; text-align: center; color: var(--muted); }
    .drop.over { border-color: var(--accent); background: #15263a; color: var(--text); }
  `];

  override connectedCallback(): void {
    super.connectedCallback();
    void defaultMemoryBudget().then((d) => (this.defaultBudget = d.bytes)).catch(() => undefined);
  }

  /** "needs 3 devices of 8 GiB" for a preset with a size. */
  private need(p: ModelPreset) {
    const budget = this.budgetBytes > 0 ? this.budgetBytes : this.defaultBudget;
    // The count at the context the room would open with: the one typed, else the model's default.
    const ctx = this.ctx > 0 ? this.ctx : presetContext(p);
    const n = ctx > 0 ? devicesNeeded(p, budget, ctx) : 0;
    if (n === 0) return nothing;
    return html`<span class="need" data-testid=${`need-${p.id}`} data-ctx=${ctx}>${n === 1 ? 'fits one device' : `needs ${n} devices`} of ${formatBytes(budget)}, with ${ctx.toLocaleString('en-US')} tokens of context${this.ctx > 0 ? '' : ' (its default)'}</span>`;
  }

  override willUpdate(changed: Map<string, unknown>): void {
    if (!changed.has('initial')) return;
    if (MODEL_PRESETS.some((p) => p.id === this.initial)) { this.kind = 'preset'; this.preset = this.initial; }
    else if (this.initial) { this.kind = 'custom'; this.custom = this.initial; }
  }

  /** What to load now; a ModelChoiceError says what is missing. */
  choice(origin = location.origin): ModelChoice {
    if (this.kind === 'folder') {
      if (!this.folder) throw new ModelChoiceError('choose a model folder first (or drop one here)');
      return { kind: 'folder', folder: this.folder, name: this.folderName };
    }
    const id = this.kind === 'preset' ? this.preset : this.custom;
    return { kind: 'url', url: modelUrlFor(id, origin), name: modelName(id), id: id.trim() };
  }

  override render() {
    return html`<fieldset>
      <legend>Model</legend>
      ${MODEL_PRESETS.map((p) => html`<label class="opt">
        <input type="radio" name="model" .checked=${this.kind === 'preset' && this.preset === p.id} data-testid=${`model-${p.id}`}
          @change=${() => { this.kind = 'preset'; this.preset = p.id; }} />
        <span>${p.label}</span><span class="size">${p.size}</span>
        ${p.note ? html`<span class="note">${p.note}</span>` : nothing}
        ${this.need(p)}
      </label>`)}
      <label class="opt">
        <input type="radio" name="model" .checked=${this.kind === 'custom'} @change=${() => (this.kind = 'custom')} />
        <span>Another Hugging Face id or URL</span><span></span>
      </label>
      ${this.kind === 'custom' ? html`<div class="other">
        <label class="sr-only" for="custom">Hugging Face id or URL</label>
        <input id="custom" type="text" placeholder="Qwen/Qwen3-1.7B, Qwen/Qwen3-8B-GGUF:Q4_K_M or https://…/model.gguf" .value=${this.custom}
          @input=${(e: Event) => (this.custom = (e.target as HTMLInputElement).value)} />
      </div>` : nothing}
      <label class="opt">
        <input type="radio" name="model" .checked=${this.kind === 'folder'} @change=${() => (this.kind = 'folder')} />
        <span>A folder on this device</span><span></span>
      </label>
      ${this.kind === 'folder' ? html`<div class="other">
        <div class="drop ${this.dragging ? 'over' : ''}" @dragover=${this.onDragOver} @dragleave=${() => (this.dragging = false)} @drop=${this.onDrop}>
          ${this.folderName ? html`<b>${this.folderName}</b> · ` : nothing}Drop a model folder here, or
          <button type="button" @click=${this.pickFolder}>Choose a folder…</button>
          <input type="file" hidden webkitdirectory multiple @change=${this.onFiles} />
          <p class="muted">Safetensors (config.json) or MLC (mlc-chat-config.json) with tokenizer.json, or a folder with a .gguf file. Guests read it through this device.</p>
        </div>
      </div>` : nothing}
    </fieldset>`;
  }

  private async pickFolder(): Promise<void> {
    const picker = (window as { showDirectoryPicker?: () => Promise<FileSystemDirectoryHandle> }).showDirectoryPicker;
    if (picker) {
      try {
        const handle = await picker();
        this.folder = handle;
        this.folderName = handle.name;
      } catch { /* cancelled */ }
      return;
    }
    this.renderRoot.querySelector<HTMLInputElement>('input[type=file]')?.click();
  }

  private onFiles(e: Event): void {
    const files = [...((e.target as HTMLInputElement).files ?? [])];
    if (files.length === 0) return;
    this.folder = files;
    this.folderName = (files[0] as File & { webkitRelativePath?: string }).webkitRelativePath?.split('/')[0] || `${files.length} files`;
  }

  private onDragOver(e: DragEvent): void {
    e.preventDefault();
    this.dragging = true;
  }

  private async onDrop(e: DragEvent): Promise<void> {
    e.preventDefault();
    this.dragging = false;
    const item = e.dataTransfer?.items?.[0] as (DataTransferItem & { getAsFileSystemHandle?: () => Promise<FileSystemHandle | null> }) | undefined;
    const handle = await item?.getAsFileSystemHandle?.();
    if (handle && handle.kind === 'directory') {
      this.folder = handle as FileSystemDirectoryHandle;
      this.folderName = handle.name;
      return;
    }
    const files = [...(e.dataTransfer?.files ?? [])];
    if (files.length > 0) { this.folder = files; this.folderName = `${files.length} files`; }
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-model-picker': ModelPicker }
}
