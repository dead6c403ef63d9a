// <pooled-file-browser>, in the workspace: the project's file tree and the selected file.
import { LitElement, css, html } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { buildTree, sortedChildren as sorted, type TreeNode } from '../app/file-tree.ts';
import { theme } from './theme.ts';
import './code-editor.ts';
import type { CodeEditor } from './code-editor.ts';

/** The project's files: a tree, and the selected file with line numbers. Fires `select` with a path. */
@customElement('pooled-file-browser')
export class FileBrowser extends LitElement {
  @property({ attribute: false }) files: string[] = [];
  @property() selected?: string;
  @property() text?: string;
  /** Hand-editing the selected file (Save fires `save-file` with { path, text }). */
  @state() private editing = false;

  static override styles = [theme, css`
    :host { display: grid; grid-template-rows: auto 1fr; min-height: 0; }
    nav { overflow: auto; max-height: 11rem; padding: .25rem 0; border-bottom: 1px solid var(--line); }
    ul { list-style: none; margin: 0; padding-left: .9rem; }
    nav > ul { padding-left: .4rem; }
    button.file { background: none; border: 0; padding: .05rem .35rem; border-radius: 4px; width: 100%; justify-content: flex-start; }
    button.file[aria-current='true'] { background: #24405c; }
    .folder { color: var(--muted); padding: .05rem .35rem; }
    .viewer { overflow: auto; min-height: 0; }
    .empty { color: var(--muted); padding: .6rem; font-size: 13px; }
    .viewer { display: grid; align-content: start; }
    .tools { display: flex; gap: .4rem; align-items: center; padding: .25rem .4rem; font-size: 12px; }
    .tools .name { flex: 1; color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    .viewer { grid-template-rows: auto 1fr; }
    pooled-code-editor { min-height: 0; }
  `];

  override render() {
    const tree = buildTree(this.files);
    return html`
      <nav aria-label="Project files" data-testid="file-tree">
        ${this.files.length === 0 ? html`<div class="empty">No files yet.</div>` : this.renderChildren(tree)}
      </nav>
      <div class="viewer" role="region" aria-label=${this.selected ? `Contents of ${this.selected}` : 'File viewer'} tabindex="0" data-testid="file-viewer">
        ${this.selected === undefined ? html`<div class="empty">Select a file to read it.</div>`
          : this.text === undefined ? html`<div class="empty">${this.selected} is gone.</div>`
          : html`<div class="tools"><span class="name mono">${this.selected}</span>${this.editing
              ? html`<button class="primary" data-testid="file-save" @click=${this.save}>Save</button><button @click=${this.cancel}>Cancel</button>`
              : html`<button data-testid="file-edit" title="Change this file by hand: the agent is told at the next request" @click=${() => (this.editing = true)}>Edit</button>`}</div>
            <pooled-code-editor .path=${this.selected} .text=${this.text} .editable=${this.editing}></pooled-code-editor>`}
      </div>`;
  }

  private renderChildren(node: TreeNode): unknown {
    return html`<ul>${sorted(node).map((child) => child.isFile
      ? html`<li><button class="file mono" aria-current=${String(child.path === this.selected)} data-path=${child.path}
          @click=${() => this.select(child.path)}>${child.name}</button></li>`
      : html`<li><div class="folder mono">${child.name}/</div>${this.renderChildren(child)}</li>`)}</ul>`;
  }

  private get editor(): CodeEditor | null {
    return this.renderRoot.querySelector('pooled-code-editor');
  }

  private save(): void {
    if (this.selected === undefined) return;
    const text = this.editor?.value ?? this.text ?? '';
    this.dispatchEvent(new CustomEvent('save-file', { detail: { path: this.selected, text }, bubbles: true, composed: true }));
    this.editing = false;
  }

  /** Cancel: back to the saved text, read-only. */
  private cancel(): void {
    this.editing = false;
    this.editor?.requestUpdate('text');
  }

  private select(path: string): void {
    this.editing = false;
    this.dispatchEvent(new CustomEvent('select', { detail: path, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-file-browser': FileBrowser }
}
