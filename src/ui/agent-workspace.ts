// <pooled-agent-workspace>, on the host screen and in replay mode: the agent's timeline, request box, files and preview.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import type { Workspace, WorkspaceState } from '../app/workspace.ts';
import { StoreController } from '../app/store.ts';
import { theme } from './theme.ts';
import './agent-timeline.ts';
import './context-meter.ts';
import './file-browser.ts';
import './history-list.ts';
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
  /** Prompt reading progress while the model reads the request (tokens read of the prompt's), from the room. */
  @property({ attribute: false }) prefill?: { done: number; total: number };
  @state() private draft = '';
  /** On a narrow screen one part shows at a time: the chat, the files, or the preview. */
  @state() private tab: 'chat' | 'files' | 'preview' = 'chat';
  /** The files part shows the project's history instead of the file tree. */
  @state() private showHistory = false;
  /** New task was pressed on a conversation: ask before clearing it. */
  @state() private confirmClear = false;
  @query('textarea') private input?: HTMLTextAreaElement;
  private watch?: StoreController<WorkspaceState>;

  static override styles = [theme, css`
    :host { display: block; min-height: 0; height: 100%; }
    /* minmax(0, 1fr): no part's min-content (a long heading, a wide page) may widen the workspace past the screen. */
    main.ws { display: grid; grid-template-rows: auto 1fr; grid-template-columns: minmax(0, 1fr); min-height: 0; height: 100%; }
    .bar { display: flex; align-items: center; gap: .6rem; flex-wrap: wrap; padding: .5rem .75rem; border-bottom: 1px solid var(--line); background: var(--panel); }
    /* The heading gives way (ellipsis, full text in its title) before the actions wrap to a second row. */
    button.zip { gap: 0; }   /* its words are spaced by the text itself: the accessible name reads "Download zip" */
    .bar h1 { flex: 1 1 6rem; min-width: 0; font-size: 1.05rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    /* Stop keeps the partial answer: a plain action, not a red one. */
    button.stop:not(:disabled) { border-color: var(--warn); color: var(--warn); }
    label.toggle { display: inline-flex; gap: .35rem; align-items: center; font-size: 13px; color: var(--muted); cursor: pointer; }
    .main { display: grid; grid-template-columns: minmax(0, 1.15fr) minmax(0, 1fr); min-height: 0; }
    .left { display: grid; grid-template-rows: 1fr auto; min-height: 0; border-right: 1px solid var(--line); }
    .right { display: grid; grid-template-rows: minmax(9rem, .8fr) minmax(14rem, 1.2fr); min-height: 0; }
    .right > section { min-height: 0; display: grid; grid-template-rows: auto 1fr; border-bottom: 1px solid var(--line); }
    .part-head { display: flex; align-items: center; gap: .5rem; background: var(--panel); padding-right: .4rem; }
    .part-head h2 { flex: 1; }
    button.history-toggle { padding: .05rem .55rem; font-size: 12px; }
    button.history-toggle[aria-pressed='true'] { border-color: var(--accent); color: #fff; }
    .right h2 { padding: .3rem .6rem; font-size: 12px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; background: var(--panel); }
    form { display: flex; gap: .5rem; padding: .6rem; border-top: 1px solid var(--line); background: var(--panel); align-items: flex-end; }
    textarea { flex: 1; resize: vertical; min-height: 2.6rem; max-height: 12rem; }
    .status { font-size: 12px; color: var(--muted); padding: 0 .75rem .35rem; }
    .confirm { display: inline-flex; align-items: center; gap: .35rem; font-size: 13px; }
    button.danger { border-color: var(--bad); color: var(--bad); }
    .status.undo { display: flex; align-items: center; gap: .5rem; padding-top: .35rem; }
    .status.undo button { padding: .1rem .6rem; }
    .error.dismissable { display: flex; align-items: flex-start; gap: .5rem; margin: .4rem .6rem; }
    .error.dismissable span { flex: 1; min-width: 0; overflow-wrap: anywhere; }
    .error .dismiss { padding: 0 .45rem; line-height: 1.4; background: transparent; border-color: transparent; color: inherit; }
    .status.prefill { display: grid; gap: .2rem; padding-top: .35rem; }
    .notice { display: flex; flex-wrap: wrap; align-items: baseline; gap: .25rem .6rem; margin: 0; padding: .45rem .75rem;
      border-top: 1px solid var(--line); border-left: 3px solid var(--warn); background: #2a2516; color: #ffe9b8; font-size: 13px; }
    .notice a { color: var(--accent); white-space: nowrap; }
    pooled-agent-timeline { min-height: 0; }
    pooled-preview-pane { min-height: 0; height: 100%; }
    .tabs { display: none; gap: .25rem; padding: .3rem .5rem 0; border-bottom: 1px solid var(--line); background: var(--panel); }
    .tabs button { border-radius: 7px 7px 0 0; border-bottom: 0; padding: .3rem .9rem; }
    .tabs button[aria-selected='true'] { background: var(--bg); border-color: var(--accent); color: #fff; font-weight: 600; }
    /* Phones (below ~820 px): tabs, one part at a time filling the height, so nothing overlaps. */
    @media (max-width: 820px) {
      main.ws { grid-template-rows: auto auto 1fr; }
      .tabs { display: flex; }
      /* One row of actions on a phone: shorter labels and padding. */
      .bar { gap: .4rem; padding: .4rem .6rem; }
      .bar button { padding: .3rem .55rem; }
      .wide { display: none; }
      .main { grid-template-columns: minmax(0, 1fr); grid-template-rows: minmax(0, 1fr); }
      .left { border-right: 0; }
      .main[data-tab='chat'] .right, .main:not([data-tab='chat']) .left { display: none; }
      .main:not([data-tab='chat']) .right { grid-template-rows: minmax(0, 1fr); }
      .main[data-tab='files'] pooled-preview-pane, .main[data-tab='preview'] .right > section { display: none; }
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
      <main class="ws" aria-label="Agent workspace">
      <div class="bar">
        <h1 title=${this.heading}>${this.heading}</h1>
        <label class="toggle"><input type="checkbox" .checked=${s.askFirst} data-testid="ask-first"
          @change=${(e: Event) => ws.setAskFirst((e.target as HTMLInputElement).checked)} />Ask before edits</label>
        <pooled-context-meter .used=${s.contextUsed} .budget=${s.contextBudget} .contextSize=${s.contextSize} .note=${s.contextNote ?? ''}></pooled-context-meter>
        <button @click=${() => void this.downloadZip()} data-testid="download-zip" ?disabled=${s.files.length === 0} class="zip" title="Download the project's files as a zip"><span class="wide">Download&nbsp;</span>zip</button>
        <button @click=${() => this.downloadTranscript()} data-testid="transcript" title="Every turn as the model saw it, one JSON line each">Transcript</button>
        ${this.confirmClear
          ? html`<span class="confirm" role="group" aria-label="Clear the conversation?"><span>Clear the conversation?</span>
              <button class="danger" data-testid="confirm-new-task" @click=${() => { this.confirmClear = false; void ws.newTask(); }}>Clear</button>
              <button data-testid="cancel-new-task" @click=${() => (this.confirmClear = false)}>Keep</button></span>`
          : html`<button @click=${() => { if (s.items.length === 0 && !s.running) void ws.newTask(); else this.confirmClear = true; }} data-testid="new-task"
              title="Clear the conversation (the files are kept; Undo brings it back)">New task</button>`}
        <button class="stop" @click=${() => ws.stop()} ?disabled=${!s.running} data-testid="stop" title="Stop the request (Esc): the partial answer is kept, none of its calls run">Stop</button>
      </div>
      <div class="tabs" role="tablist" aria-label="Workspace parts">
        ${(['chat', 'files', 'preview'] as const).map((t) => html`<button role="tab" id=${`tab-${t}`} aria-selected=${this.tab === t ? 'true' : 'false'}
            aria-controls="workspace-main" data-testid=${`tab-${t}`} @click=${() => (this.tab = t)}>${t === 'chat' ? 'Chat' : t === 'files' ? `Files${s.files.length ? ` (${s.files.length})` : ''}` : 'Preview'}</button>`)}
      </div>
      <div class="main" id="workspace-main" data-tab=${this.tab}>
        <div class="left">
          <pooled-agent-timeline .items=${s.items} .approvals=${s.approvals} .running=${s.running} .emptyText=${this.notice?.empty}
            .history=${s.history ?? []} @restore-point=${(e: CustomEvent<number>) => void ws.restoreTo(e.detail)}
            @decide=${(e: CustomEvent<{ call: number; approved: boolean }>) => ws.decide(e.detail.call, e.detail.approved)}></pooled-agent-timeline>
          <div>
            ${s.restored ? html`<div class="status" data-testid="restored">Session restored from this browser.</div>` : nothing}
            ${s.restoredTo ? html`<div class="status" data-testid="restored-to" role="status">${s.restoredTo} The agent is told with your next request.</div>` : nothing}
            ${s.canUndoClear ? html`<div class="status undo" data-testid="cleared" role="status">Conversation cleared; the files are kept.
                <button data-testid="undo-new-task" @click=${() => void ws.undoNewTask()}>Undo</button></div>` : nothing}
            ${s.running && this.prefill ? html`<div class="status prefill" data-testid="prefill" aria-live="polite">
                <span>Reading the prompt: ${this.prefill.done.toLocaleString('en-US')} of ${this.prefill.total.toLocaleString('en-US')} tokens (Esc stops it)</span>
                <progress max=${this.prefill.total} .value=${this.prefill.done} aria-label="Prompt read"></progress></div>` : nothing}
            ${s.error ? html`<div class="error dismissable" role="alert" data-testid="workspace-error"><span>${s.error}</span>
                <button class="dismiss" @click=${() => ws.dismissError()} aria-label="Dismiss this message" data-testid="dismiss-error">×</button></div>` : nothing}
            ${this.notice ? html`<p class="notice" role="note" data-testid="workspace-notice">
                <span><b>${this.notice.title}:</b> ${this.notice.text}</span>
                ${this.notice.link ? html`<a href=${this.notice.link.href}>${this.notice.link.label}</a>` : nothing}
              </p>` : nothing}
            <form @submit=${this.submit}>
              <label class="sr-only" for="request">Request to the agent</label>
              <textarea id="request" rows="2" placeholder=${s.running ? 'The agent is working… (Esc stops it)' : this.notice?.placeholder ?? 'Ask for an app, or a change to this one'}
                .value=${this.draft} @input=${(e: Event) => (this.draft = (e.target as HTMLTextAreaElement).value)}
                @keydown=${this.onEnter} data-testid="request-input"></textarea>
              ${ws.canRegenerate ? html`<button type="button" data-testid="regenerate" @click=${() => void ws.regenerate()}
                  title="Send the last request again">Regenerate</button>` : nothing}
              <button class="primary" type="submit" ?disabled=${s.running || this.draft.trim() === ''} data-testid="send">Send</button>
            </form>
          </div>
        </div>
        <div class="right">
          <section aria-labelledby="files-title">
            <div class="part-head"><h2 id="files-title">${this.showHistory ? 'History' : 'Files'}</h2>
              ${s.history ? html`<button class="history-toggle" data-testid="history-toggle" aria-pressed=${this.showHistory ? 'true' : 'false'}
                  title="Every change to the project, newest first: restore the files to before any of them"
                  @click=${() => (this.showHistory = !this.showHistory)}>History (${s.history.length})</button>` : nothing}</div>
            ${this.showHistory && s.history ? html`<pooled-history-list .entries=${s.history} ?disabled=${s.running}
                @restore-point=${(e: CustomEvent<number>) => void ws.restoreTo(e.detail)}></pooled-history-list>`
              : html`<pooled-file-browser .files=${s.files} .selected=${s.selectedFile} .text=${s.selectedText}
                  @select=${(e: CustomEvent<string>) => void ws.selectFile(e.detail)}
                  @save-file=${(e: CustomEvent<{ path: string; text: string }>) => void ws.editFile(e.detail.path, e.detail.text)}></pooled-file-browser>`}
          </section>
          <pooled-preview-pane .preview=${ws.preview}></pooled-preview-pane>
        </div>
      </div>
      </main>`;
  }

  private async downloadZip(): Promise<void> {
    if (!this.workspace) return;
    const bytes = await this.workspace.projectZip();
    const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type: 'application/zip' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'project.zip';
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
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
