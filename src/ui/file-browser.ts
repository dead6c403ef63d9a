// <pooled-file-browser>, in the workspace: the project's file tree and the selected file.
import { LitElement, css, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { buildTree, sortedChildren as sorted, type TreeNode } from '../app/file-tree.ts';
import { theme } from './theme.ts';

/** The project's files: a tree, and the selected file with line numbers. Fires `select` with a path. */
@customElement('pooled-file-browser')
export class FileBrowser extends LitElement {
  @property({ attribute: false }) files: string[] = [];
  @property() selected?: string;
  @property() text?: string;

  static override styles = [theme, css`
    :host { display: grid; grid-template-rows: auto 1fr; min-height: 0; }
    nav { overflow: auto; max-height: 11rem; padding: .25rem 0; border-bottom: 1px solid var(--line); }
    ul { list-style: none; margin: 0; padding-left: .9rem; }
    nav > ul { padding-left: .4rem; }
    button.file { background: none; border: 0; padding: .05rem .35rem; border-radius: 4px; width: 100%; justify-content: flex-start; }
    button.file[aria-current='true'] { background: #24405c; }
    .folder { color: var(--muted); padding: .05rem .35rem; }
    .viewer { overflow: auto; min-height: 0; }
    table { border-collapse: collapse; width: 100%; }
    td { vertical-align: top; padding: 0 .5rem; white-space: pre-wrap; word-break: break-word; }
    td.n { color: #7f93a6; text-align: right; user-select: none; width: 1%; white-space: nowrap; }
    .empty { color: var(--muted); padding: .6rem; font-size: 13px; }
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
          : html`<table class="mono">${this.text.replace(/\n$/, '').split('\n').map((line, i) => html`<tr><td class="n">${i + 1}</td><td>${line}</td></tr>`)}</table>`}
      </div>`;
  }

  private renderChildren(node: TreeNode): unknown {
    return html`<ul>${sorted(node).map((child) => child.isFile
      ? html`<li><button class="file mono" aria-current=${String(child.path === this.selected)} data-path=${child.path}
          @click=${() => this.select(child.path)}>${child.name}</button></li>`
      : html`<li><div class="folder mono">${child.name}/</div>${this.renderChildren(child)}</li>`)}</ul>`;
  }

  private select(path: string): void {
    this.dispatchEvent(new CustomEvent('select', { detail: path, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-file-browser': FileBrowser }
}
