// The agent workspace's state: one Agent over a Backend (the room's engine, or a replay script), the
// project's files in IndexedDB, the preview, approvals with diffs, the context meter, Stop / New task,
// and the agent's saved session (src/agent/session-store.ts, IndexedDB) that a reload restores.
import { Agent, type AgentOptions, type RestoredState } from '../agent/loop.ts';
import type { Backend } from '../agent/backend.ts';
import type { ApprovalRequest } from '../agent/call-runner.ts';
import { createCallCodec } from '../agent/call-codec.ts';
import { ANSWER_CAP, conversationBudget } from '../agent/budget.ts';
import type { AgentEvent } from '../agent/events.ts';
import { IdbFiles } from '../agent/files/idb.ts';
import type { ProjectFiles } from '../agent/files/types.ts';
import type { EndReason } from '../agent/summary.ts';
import type { TimelineItem } from '../agent/timeline.ts';
import type { Segment } from '../agent/conversation.ts';
import { ToolRegistry } from '../agent/tools/registry.ts';
import type { Tokenizer } from '../model/tokenizer.ts';
import type { ToolFormat } from '../model/tool-format.ts';
import { esbuildTranspile } from '../preview/esbuild.ts';
import { PreviewHost } from '../preview/host.ts';
import { agentTools } from './agent-tools.ts';
import { editFromChange, proposedEdit, type ProposedEdit } from './diff.ts';
import { IdbSessionStore, openSession, setAsideBecause, snapshotSession, type SessionStore } from '../agent/session-store.ts';
import { Store } from './store.ts';
import { IdbHistoryStorage, isRestore, ProjectHistory, recordingFiles, type HistoryPoint, type PointOrigin, type RestoreResult } from './project-history.ts';
import { zipFiles } from './zip.ts';

export interface PendingApproval { call: number; name: string; edit: ProposedEdit }

/** One project history point as the UI lists it (src/app/project-history.ts keeps the bytes). */
export interface HistoryEntry {
  id: number;
  label: string;               // "write_file app.js", "hand edit of index.html", "restore to before …"
  at: number;
  request?: number;
  step?: number;
  call?: number;
  paths: string[];
}

export interface WorkspaceState {
  items: TimelineItem[];
  running: boolean;
  contextUsed: number;         // tokens of the conversation's prompt now
  contextBudget: number;       // what the conversation may use (context less the answer's room)
  contextSize: number;
  /** What the context meter says of the context (a room: "context 24,576 — what this room holds; add a device for 32,768"). */
  contextNote?: string;
  files: string[];
  selectedFile?: string;
  selectedText?: string;
  approvals: PendingApproval[];
  askFirst: boolean;
  lastReason?: EndReason;
  error?: string;
  restored: boolean;           // the timeline came back from a saved session
  /** New task cleared a conversation that Undo can bring back (until the next request). */
  canUndoClear: boolean;
  /** The project's history points, oldest first; null when the history store could not be opened. */
  history: HistoryEntry[] | null;
  /** What the last restore did, until the next request ("Restored to before step 2 (write_file app.js): …"). */
  restoredTo?: string;
}

export interface WorkspaceOptions {
  backend: Backend;
  tokenizer: Tokenizer;
  format: ToolFormat;
  projectId: string;
  askFirst?: boolean;
  /** The deployment's run_js switch (pooled-config.json); default on. */
  runJs?: boolean;
  /** Sample calls under the call grammar (default). Off: calls are read by the near-miss parser alone. */
  constrained?: boolean;
  /** Answer cap (default ANSWER_CAP) and, when set, the note that ends a request reaching it (AgentOptions). */
  answerCap?: number;
  answerCapNote?: string;
  /** Called as each request begins, before the agent runs (the scripted demo starts its script again). */
  beforeRequest?: () => void;
}

export class Workspace {
  readonly store: Store<WorkspaceState>;
  readonly preview: PreviewHost;
  private readonly agent: Agent;
  private readonly agentOptions: AgentOptions;
  private controller: AbortController | null = null;
  private readonly decisions = new Map<number, (approved: boolean) => void>();
  private saving: Promise<void> = Promise.resolve();
  /** Files edited by hand in the viewer since the last request: the next request tells the agent. */
  private readonly handEdited = new Set<string>();
  /** What New task cleared, for Undo (kept in memory until the next request). */
  private cleared?: { segments: Segment[]; items: TimelineItem[] };
  /** The last request's text, for Regenerate. */
  private lastRequest: string | undefined;
  /** Restores since the last request, one line each: the next request tells the agent. */
  private readonly restoreNotes: string[] = [];
  /** The agent call running now (from its events), so a history point says which call it was taken before. */
  private runningCall: PointOrigin | undefined;
  private currentRequest = 0;
  /** The files as the agent's tools and the file pane see them: every change first kept in the history. */
  private readonly agentFiles: ProjectFiles;
  private readonly handFiles: ProjectFiles;

  private constructor(private readonly opts: WorkspaceOptions, readonly files: ProjectFiles, private readonly sessions: SessionStore | null,
    restored: RestoredState | undefined, askFirst: boolean, private readonly history: ProjectHistory | null) {
    this.agentFiles = history ? recordingFiles(files, history, (path) => this.callOrigin(path)) : files;
    this.handFiles = history ? recordingFiles(files, history, (path) => ({ label: `hand edit of ${path}` })) : files;
    this.preview = new PreviewHost({ files, transpile: esbuildTranspile });
    const tools = new ToolRegistry(agentTools(this.agentFiles, this.preview, { runJs: opts.runJs ?? true }));
    const fullCodec = createCallCodec({ tokenizer: opts.tokenizer, format: opts.format, tools: tools.schemas() });
    const codec = opts.constrained === false ? { parse: fullCodec.parse } : fullCodec;
    this.agentOptions = {
      backend: opts.backend, tools, format: opts.format, codec, files, askFirst,
      approve: (req) => this.askApproval(req),
    };
    if (opts.answerCap !== undefined) this.agentOptions.answerCap = opts.answerCap;
    if (opts.answerCapNote !== undefined) this.agentOptions.answerCapNote = opts.answerCapNote;
    if (restored) this.agentOptions.restore = restored;
    try {
      this.agent = new Agent(this.agentOptions);
    } catch (e) {
      this.preview.dispose(); // open() tries again without the session: no second set of frames and listeners
      throw e;
    }
    this.store = new Store<WorkspaceState>({
      items: this.snapshot(), running: false, contextUsed: this.agent.conversation.promptLength(),
      contextBudget: conversationBudget(opts.backend.contextSize, opts.answerCap ?? ANSWER_CAP), contextSize: opts.backend.contextSize,
      files: [], approvals: [], askFirst, restored: Boolean(restored && restored.timeline.length > 0), canUndoClear: false,
      history: history ? historyEntries(history.points) : null,
    });
    this.agent.subscribe((e) => this.onEvent(e));
    history?.onChange(() => this.store.set({ history: historyEntries(history.points) }));
    files.onChange(() => void this.refreshFiles());
  }

  /** Opens the project's files and its saved session (if any), and restores the served pages. */
  static async open(opts: WorkspaceOptions): Promise<Workspace> {
    const files = await IdbFiles.open(opts.projectId);
    let sessions: SessionStore | null = null;
    let restored: RestoredState | undefined;
    let problem: string | undefined;
    try {
      sessions = await IdbSessionStore.open();
      // Same model: the exact tokens; another model: each turn encoded again from its text. One that
      // cannot be read is set aside (kept under another name) and a new session starts.
      ({ restored, problem } = await openSession(sessions, opts.projectId, opts.backend));
    } catch (e) {
      problem = `${(e as Error).name}: ${(e as Error).message} (the session store cannot be opened: starting without one; the files are kept)`;
    }
    const askFirst = opts.askFirst ?? localStorage.getItem(askFirstKey(opts.projectId)) === '1';
    // No history store (private mode, a broken database): the workspace works on without restore points.
    const history = await IdbHistoryStorage.open(opts.projectId).then((s) => ProjectHistory.open(s)).catch(() => null);
    let ws: Workspace;
    try {
      ws = new Workspace(opts, files, sessions, restored, askFirst, history);
    } catch (e) {
      if (!restored || !sessions) throw e;
      problem = await setAsideBecause(sessions, opts.projectId, e as Error); // passed the checks, still broke the agent
      restored = undefined;
      ws = new Workspace(opts, files, sessions, undefined, askFirst, history);
    }
    if (problem) ws.store.set({ error: problem });
    await ws.refreshFiles();
    const ports = restored?.servedPorts ?? [];
    // The session keeps each port as the path serve was given (a folder, or a page like docs/about.html):
    // the preview resolves it again itself.
    if (ports.length > 0) await ws.preview.restore(ports).catch(() => undefined);
    return ws;
  }

  /** The timeline updates its items in place; the UI gets fresh copies so changed cards re-render. */
  private snapshot(): TimelineItem[] {
    return this.agent.timeline.items.map((item) => ({ ...item }));
  }

  get state(): WorkspaceState {
    return this.store.state;
  }

  /**
   * The backend's context changed (a room re-dealt at another context): the budget the meter shows
   * follows it, as the agent's does (it reads the backend's context at each request).
   */
  contextChanged(note?: string): void {
    const contextSize = this.opts.backend.contextSize;
    this.store.set({ contextSize, contextBudget: conversationBudget(contextSize, this.opts.answerCap ?? ANSWER_CAP), contextNote: note });
  }

  private onEvent(e: AgentEvent): void {
    if (e.type === 'request' || e.type === 'step') this.currentRequest = e.request;
    if (e.type === 'call') this.runningCall = { label: e.name, request: this.currentRequest, step: e.step, call: e.call };
    if (e.type === 'result' || e.type === 'summary') this.runningCall = undefined;
    const patch: Partial<WorkspaceState> = { items: this.snapshot() };
    if (e.type === 'step') patch.contextUsed = e.promptTokens;
    if (e.type === 'summary') patch.lastReason = e.reason;
    this.store.set(patch);
  }

  /** Runs one request to its end (done, stopped, limit, stuck, context, error). */
  async send(text: string): Promise<EndReason | undefined> {
    const typed = text.trim();
    if (typed === '' || this.state.running) return undefined;
    this.lastRequest = typed;
    this.cleared = undefined;            // a new request: the cleared conversation is gone for good
    // The model reads files only through its tools: say which ones changed by hand, so it reads them again.
    const edited = [...this.handEdited];
    this.handEdited.clear();
    const notes = [...this.restoreNotes];
    this.restoreNotes.splice(0);
    if (edited.length) notes.push(`I edited ${edited.join(', ')} by hand since your last answer.`);
    const request = notes.length ? `${typed}\n\n${notes.map((n) => `(${n})`).join('\n')}` : typed;
    const controller = new AbortController();
    this.controller = controller;
    this.store.set({ running: true, error: undefined, restored: false, canUndoClear: false, restoredTo: undefined });
    try {
      this.opts.beforeRequest?.();
      const outcome = await this.agent.run(request, { signal: controller.signal });
      return outcome.reason;
    } catch (e) {
      this.store.set({ error: `${(e as Error).name}: ${(e as Error).message}` });
      return 'error';
    } finally {
      this.controller = null;
      this.rejectPending();
      this.store.set({ running: false, items: this.snapshot(), contextUsed: this.agent.conversation.promptLength() });
      await this.save();
    }
  }

  /** Send the last request again (an answer that failed, stopped or ran out). */
  regenerate(): Promise<EndReason | undefined> {
    return this.lastRequest ? this.send(this.lastRequest) : Promise.resolve(undefined);
  }

  get canRegenerate(): boolean {
    return !this.state.running && this.lastRequest !== undefined && this.state.lastReason !== undefined && this.state.lastReason !== 'done';
  }

  /** A hand edit in the viewer: written to the project, the pages that serve it reloaded; the next request names the file. */
  async editFile(path: string, text: string): Promise<void> {
    await this.handFiles.write(path, text);
    this.handEdited.add(path);
    if (this.state.selectedFile === path) this.store.set({ selectedText: text });
    await this.reloadPagesServing([path]);
  }

  /**
   * Restore to a history point: every change since it undone (the restore itself kept as a point, so it
   * can be undone too), the pages serving those files reloaded, and the next request tells the agent.
   */
  async restoreTo(id: number): Promise<RestoreResult | undefined> {
    if (!this.history || this.state.running) return undefined;
    let result: RestoreResult;
    try {
      result = await this.history.restore(this.files, id);
    } catch (e) {
      this.store.set({ error: `the project could not be restored: ${(e as Error).message}` });
      return undefined;
    }
    const { point, written, removed } = result;
    const what = [written.length ? `${written.join(', ')} changed back` : '', removed.length ? `${removed.join(', ')} removed (they did not exist then)` : '']
      .filter(Boolean).join('; ');
    if (!what) {
      this.store.set({ restoredTo: 'The files are already as they were then: nothing changed.' });
      return result;
    }
    this.restoreNotes.push(`${restorePhrase(point, 'agent')}: ${what}.`);
    for (const path of written) this.handEdited.delete(path);
    this.store.set({ restoredTo: `${restorePhrase(point, 'user')}: ${what}.` });
    await this.reloadPagesServing([...written, ...removed]);   // once per page: a reload cut short by the next one logs errors
    return result;
  }

  /** Which change a history point is taken before: the agent call running now, else a change nobody named. */
  private callOrigin(path: string): PointOrigin {
    const call = this.runningCall;
    return call ? { ...call, label: `${call.label} ${path}` } : { label: `change to ${path}` };
  }

  /** Serves again (same port, same page) every page whose folder holds one of the files, so the preview shows the change. */
  private async reloadPagesServing(paths: string[]): Promise<void> {
    const served = await this.preview.served();
    const holding = served.filter((p) => paths.some((path) => p.folder === '' || path.startsWith(`${p.folder}/`)));
    if (holding.length > 0) await this.preview.restore(holding).catch(() => undefined);   // a page that fails says so in its console
  }

  /** Every project file in a store-only zip (src/app/zip.ts), paths as the project has them. */
  async projectZip(): Promise<Uint8Array> {
    const paths = await this.files.allFiles();
    const entries = [];
    for (const path of paths) {
      const data = await this.files.readBytes(path);
      if (data) entries.push({ path, data });
    }
    return zipFiles(entries);
  }

  /** Stop (the button, Esc): the model's partial answer is kept and none of its calls run. */
  stop(): void {
    this.controller?.abort();
    this.rejectPending();
  }

  /** New task: the conversation and its timeline are cleared; the files stay. */
  async newTask(): Promise<void> {
    if (this.state.running) {
      this.stop();
      while (this.state.running) await new Promise((r) => setTimeout(r, 20));
    }
    if (this.agent.conversation.segments.length > 0 || this.agent.timeline.items.length > 0) {
      this.cleared = { segments: structuredClone(this.agent.conversation.segments), items: structuredClone(this.agent.timeline.items) };
    }
    this.agent.newTask();
    this.agent.timeline.items.splice(0);
    this.store.set({
      items: [], contextUsed: this.agent.conversation.promptLength(), lastReason: undefined, restored: false, error: undefined,
      canUndoClear: this.cleared !== undefined,
    });
    await this.save();
  }

  /** Undo New task: the cleared conversation and its timeline back as they were (before any new request). */
  async undoNewTask(): Promise<void> {
    const cleared = this.cleared;
    if (!cleared || this.state.running) return;
    this.cleared = undefined;
    this.agent.conversation.segments.push(...cleared.segments);
    this.agent.timeline.items.push(...cleared.items);
    this.store.set({ items: this.snapshot(), contextUsed: this.agent.conversation.promptLength(), canUndoClear: false });
    await this.save();
  }

  /** The error line's close button: the message is gone, nothing else changes. */
  dismissError(): void {
    this.store.set({ error: undefined });
  }

  /** The conversation as the model saw it, one JSON line per turn (for the Transcript download). */
  transcript(): string {
    return this.agent.transcript.jsonl();
  }

  setAskFirst(on: boolean): void {
    this.agentOptions.askFirst = on;     // the loop reads it at each call
    this.store.set({ askFirst: on });
    localStorage.setItem(askFirstKey(this.opts.projectId), on ? '1' : '0');
  }

  decide(call: number, approved: boolean): void {
    this.decisions.get(call)?.(approved);
  }

  async selectFile(path: string | undefined): Promise<void> {
    const text = path === undefined ? undefined : (await this.files.readText(path)) ?? undefined;
    this.store.set({ selectedFile: path, selectedText: text });
  }

  private async askApproval(req: ApprovalRequest): Promise<boolean> {
    let edit: ProposedEdit;
    if (req.change) {
      edit = editFromChange(req.change);
    } else {
      const path = String(req.arguments.path ?? '');
      edit = proposedEdit(req.name, req.arguments, path ? await this.files.readText(path).catch(() => null) : null);
    }
    const pending: PendingApproval = { call: req.call, name: req.name, edit };
    this.store.set({ approvals: [...this.state.approvals, pending] });
    const approved = await new Promise<boolean>((resolve) => this.decisions.set(req.call, resolve));
    this.decisions.delete(req.call);
    this.store.set({ approvals: this.state.approvals.filter((a) => a.call !== req.call) });
    return approved;
  }

  private rejectPending(): void {
    for (const resolve of [...this.decisions.values()]) resolve(false);
  }

  private async refreshFiles(): Promise<void> {
    const files = await this.files.allFiles();
    const selected = this.state.selectedFile;
    const patch: Partial<WorkspaceState> = { files };
    if (selected !== undefined) patch.selectedText = (await this.files.readText(selected)) ?? undefined;
    this.store.set(patch);
  }

  private save(): Promise<void> {
    const sessions = this.sessions;
    if (!sessions) return Promise.resolve();
    this.saving = this.saving
      .then(() => sessions.save(this.opts.projectId, snapshotSession(this.agent, this.opts.backend.name)))
      .catch((e: Error) => this.store.set({ error: `the session could not be saved: ${e.message}` }));
    return this.saving;
  }
}

const askFirstKey = (projectId: string) => `pooled.askFirst.${projectId}`;

/**
 * What a restore to `point` was, for the agent's note ("I restored the project to before step 2 (your
 * write_file style.css)") or the status line ("Restored to before step 2 (write_file style.css)"). Restoring to
 * before a restore undoes it.
 */
function restorePhrase(point: HistoryPoint, to: 'agent' | 'user'): string {
  const [mine, yours] = to === 'agent' ? ['my ', 'your '] : ['the ', ''];
  if (point.step !== undefined) return `${to === 'agent' ? 'I restored the project' : 'Restored'} to before step ${point.step} (${yours}${point.label})`;
  if (isRestore(point)) return `${to === 'agent' ? 'I undid' : 'Undid'} ${mine}${point.label}`;
  return `${to === 'agent' ? 'I restored the project' : 'Restored'} to before ${mine}${point.label}`;
}

const historyEntries = (points: readonly HistoryPoint[]): HistoryEntry[] =>
  points.map(({ id, label, at, request, step, call, changes }) => ({
    id, label, at, paths: changes.map((c) => c.path).sort(),
    ...(request !== undefined ? { request } : {}), ...(step !== undefined ? { step } : {}), ...(call !== undefined ? { call } : {}),
  }));
