// <pooled-agent-workspace>, on the host screen and in replay mode: the agent's timeline, request box, files and preview.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import type { Workspace, WorkspaceState } from '../app/workspace.ts';
import { StoreController } from '../app/store.ts';
import { theme } from './theme.ts';
import './agent-timeline.ts';
import './context-meter.ts';
import './file-browser.ts';
import './preview-pane.ts';

/** A line above the request box saying what answers to expect (the scripted demo ignores requests). */
export interface WorkspaceNotice {
  title: string;
  text: string;
  placeholder?: string;
  /** What the empty timeline says instead of inviting any request. */
  empty?: string;
  link?: { href: string; label: string };
}

/**
 * The agent workspace: timeline + request box on the left; files and the preview on the right. The
 * header has the context meter next to New task, Stop (Esc also stops), and "ask before edits".
 */
@customElement('pooled-agent-workspace')
export class AgentWorkspace extends LitElement {
  @property({ attribute: false }) workspace?: Workspace;
  @property() heading = 'Agent';
  @property({ attribute: false }) notice?: WorkspaceNotice;
  @state() private draft = '';
  @query('textarea') private input?: HTMLTextAreaElement;
  private watch?: StoreController<WorkspaceState>;

  static override styles = [theme, css`
    :host { display: grid; grid-template-rows: auto 1fr; min-height: 0; height: 100%; }
    header { display: flex; align-items: center; gap: .6rem; flex-wrap: wrap; padding: .5rem .75rem; border-bottom: 1px solid var(--line); background: var(--panel); }
    header h2 { flex: 1 1 auto; }
    label.toggle { display: inline-flex; gap: .35rem; align-items: center; font-size: 13px; color: var(--muted); cursor: pointer; }
    .main { display: grid; grid-template-columns: minmax(0, 1.15fr) minmax(0, 1fr); min-height: 0; }
    .left { display: grid; grid-template-rows: 1fr auto; min-height: 0; border-right: 1px solid var(--line); }
    .right { display: grid; grid-template-rows: minmax(9rem, .8fr) minmax(14rem, 1.2fr); min-height: 0; }
    .right > section { min-height: 0; display: grid; grid-template-rows: auto 1fr; border-bottom: 1px solid var(--line); }
    .right h3 { padding: .3rem .6rem; font-size: 12px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; background: var(--panel); }
    form { display: flex; gap: .5rem; padding: .6rem; border-top: 1px solid var(--line); background: var(--panel); align-items: flex-end; }
    textarea { flex: 1; resize: vertical; min-height: 2.6rem; max-height: 12rem; }
    .status { font-size: 12px; color: var(--muted); padding: 0 .75rem .35rem; }
    .notice { display: flex; flex-wrap: wrap; align-items: baseline; gap: .25rem .6rem; margin: 0; padding: .45rem .75rem;
      border-top: 1px solid var(--line); border-left: 3px solid var(--warn); background: #2a2516; color: #ffe9b8; font-size: 13px; }
    .notice a { color: var(--accent); white-space: nowrap; }
    pooled-agent-timeline { min-height: 0; }
    pooled-preview-pane { min-height: 0; height: 100%; }
    @media (max-width: 820px) {
      .main { grid-template-columns: 1fr; grid-auto-rows: minmax(20rem, auto); }
      .left { border-right: 0; min-height: 28rem; }
    }
  `];

  override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('workspace') && this.workspace && !this.watch) this.watch = new StoreController(this, this.workspace.store);
  }

  override connectedCallback(): void {
    super.connectedCallback();
    document.addEventListener('keydown', this.onKey);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    document.removeEventListener('keydown', this.onKey);
  }

  private readonly onKey = (e: KeyboardEvent): void => {
    if (e.key === 'Escape' && this.workspace?.state.running) {
      e.preventDefault();
      this.workspace.stop();
    }
  };

  override render() {
    const ws = this.workspace;
    const s = ws?.state;
    if (!ws || !s) return html`<p class="muted">Opening the workspace…</p>`;
    return html`
      <header>
        <h2>${this.heading}</h2>
        <label class="toggle"><input type="checkbox" .checked=${s.askFirst} data-testid="ask-first"
          @change=${(e: Event) => ws.setAskFirst((e.target as HTMLInputElement).checked)} />Ask before edits</label>
        <pooled-context-meter .used=${s.contextUsed} .budget=${s.contextBudget} .contextSize=${s.contextSize} .note=${s.contextNote ?? ''}></pooled-context-meter>
        <button @click=${() => this.downloadTranscript()} data-testid="transcript" title="Every turn as the model saw it, one JSON line each">Transcript</button>
        <button @click=${() => void ws.newTask()} data-testid="new-task" title="Clear the conversation (the files are kept)">New task</button>
        <button class="danger" @click=${() => ws.stop()} ?disabled=${!s.running} data-testid="stop" title="Stop the request (Esc)">Stop</button>
      </header>
      <div class="main">
        <div class="left">
          <pooled-agent-timeline .items=${s.items} .approvals=${s.approvals} .running=${s.running} .emptyText=${this.notice?.empty}
            @decide=${(e: CustomEvent<{ call: number; approved: boolean }>) => ws.decide(e.detail.call, e.detail.approved)}></pooled-agent-timeline>
          <div>
            ${s.restored ? html`<div class="status" data-testid="restored">Session restored from this browser.</div>` : nothing}
            ${s.error ? html`<div class="error" role="alert">${s.error}</div>` : nothing}
            ${this.notice ? html`<p class="notice" role="note" data-testid="workspace-notice">
                <span><b>${this.notice.title}:</b> ${this.notice.text}</span>
                ${this.notice.link ? html`<a href=${this.notice.link.href}>${this.notice.link.label}</a>` : nothing}
              </p>` : nothing}
            <form @submit=${this.submit}>
              <label class="sr-only" for="request">Request to the agent</label>
              <textarea id="request" rows="2" placeholder=${s.running ? 'The agent is working… (Esc stops it)' : this.notice?.placeholder ?? 'Ask for an app, or a change to this one'}
                .value=${this.draft} @input=${(e: Event) => (this.draft = (e.target as HTMLTextAreaElement).value)}
                @keydown=${this.onEnter} data-testid="request-input"></textarea>
              <button class="primary" type="submit" ?disabled=${s.running || this.draft.trim() === ''} data-testid="send">Send</button>
            </form>
          </div>
        </div>
        <div class="right">
          <section aria-labelledby="files-title">
            <h3 id="files-title">Files</h3>
            <pooled-file-browser .files=${s.files} .selected=${s.selectedFile} .text=${s.selectedText}
              @select=${(e: CustomEvent<string>) => void ws.selectFile(e.detail)}></pooled-file-browser>
          </section>
          <pooled-preview-pane .preview=${ws.preview}></pooled-preview-pane>
        </div>
      </div>`;
  }

  private downloadTranscript(): void {
    if (!this.workspace) return;
    const url = URL.createObjectURL(new Blob([this.workspace.transcript()], { type: 'application/x-ndjson' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `pooled-transcript-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }

  private onEnter(e: KeyboardEvent): void {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.submit(e);
    }
  }

  private submit(e: Event): void {
    e.preventDefault();
    const text = this.draft.trim();
    if (!text || !this.workspace || this.workspace.state.running) return;
    this.draft = '';
    if (this.input) this.input.value = '';
    void this.workspace.send(text);
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-agent-workspace': AgentWorkspace }
}
