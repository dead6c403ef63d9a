// <pooled-code-editor>: the file pane's editor. The plain numbered text shows at once; CodeMirror
// (codemirror-setup.ts) is imported the first time a file opens and then takes its place.
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { CodeEditorHandle } from './codemirror-setup.ts';
import { theme } from './theme.ts';

@customElement('pooled-code-editor')
export class CodeEditor extends LitElement {
  @property() path = '';
  @property() text = '';
  @property({ type: Boolean }) editable = false;
  /** CodeMirror is in place (tests and the fallback view read it). */
  @state() private ready = false;
  private editor?: CodeEditorHandle;
  private loading?: Promise<void>;

  static override styles = [theme, css`
    :host { display: block; min-height: 12rem; height: 100%; }
    .cm-host { height: 100%; }
    table { border-collapse: collapse; width: 100%; }
    td { vertical-align: top; padding: 0 .5rem; white-space: pre-wrap; word-break: break-word; }
    td.n { color: #7f93a6; text-align: right; user-select: none; width: 1%; white-space: nowrap; }
  `];

  /** The text as edited (the plain text while CodeMirror loads). */
  get value(): string {
    return this.editor?.text() ?? this.text;
  }

  override render() {
    return html`<div class="cm-host" data-testid="code-editor" data-ready=${String(this.ready)}></div>
      ${this.ready ? nothing : html`<table class="mono">${this.text.replace(/\n$/, '').split('\n').map((line, i) => html`<tr><td class="n">${i + 1}</td><td>${line}</td></tr>`)}</table>`}`;
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (!this.editor) { void this.load(); return; }
    if (changed.has('path') || changed.has('text')) this.editor.show(this.path, this.text);
    if (changed.has('editable')) {
      this.editor.setEditable(this.editable);
      if (this.editable) this.editor.focus();
    }
  }

  private load(): Promise<void> {
    this.loading ??= import('./codemirror-setup.ts').then(({ createCodeEditor }) => {
      const parent = this.renderRoot.querySelector<HTMLElement>('.cm-host')!;
      this.editor = createCodeEditor({ parent, root: this.shadowRoot!, path: this.path, text: this.text, editable: this.editable, label: `Contents of ${this.path}` });
      this.ready = true;
      if (this.editable) this.editor.focus();
    });
    return this.loading;
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.editor?.destroy();
    this.editor = undefined;
    this.loading = undefined;
    this.ready = false;
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-code-editor': CodeEditor }
}
