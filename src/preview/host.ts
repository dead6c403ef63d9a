// The preview in the browser: one sandboxed iframe per served port, its console, run_js. See index.ts for
// why it is built this way. Browser only (DOM, MessageChannel).
import type { ProjectFiles } from '../agent/files/types.ts';
import { LogBuffer } from './log-buffer.ts';
import { buildManifest, type Transpile } from './manifest.ts';
import { mimeType } from './mime.ts';
import { isFrameMessage, type FrameLogLine, type FrameMessage } from './frame-protocol.ts';
import { frameSrcdoc } from './srcdoc.ts';
import { PreviewFrame } from './frame-shell.ts';
import { PreviewStorage } from './storage.ts';
import { rewriteSpecifiers } from './js-imports.ts';
import { findScript } from './manifest.ts';
import { splitServeTarget } from './serve-target.ts';
import { manifestFingerprint, StalledPages } from './stalled-pages.ts';
import {
  PREVIEW_LIMITS, PreviewError, type LogsResult, type PreviewApi, type PreviewLogLine, type RestorablePort, type RunJsResult,
  type ServeResult, type ServedPage,
} from './types.ts';
import { isUrlLikeSpecifier, resolveReference, virtualUrl } from './urls.ts';

/** How long run_js waits for a page's frame to come back (connect and load) before its code is sent. */
const PAGE_RETURN_MS = 10_000;

export interface PreviewHostOptions {
  files: ProjectFiles;
  /** esbuild for .ts/.tsx/.jsx (see esbuild.ts); without it such files report an error */
  transpile?: Transpile;
  loadWaitMs?: number;
  runJsMs?: number;
}

interface Page extends ServedPage {
  /** The sandboxed frame running the page, in its shell (frame-shell.ts). */
  view: PreviewFrame;
  token: string;
  channel?: MessagePort;
  attachedAt: number;
  /** Console lines the frame or the host dropped and not yet reported; when they last were. */
  dropped: number;
  droppedReportedAt: number;
  /** The host's own cap on lines from this page (the frame has one too): a token bucket. */
  budget: number;
  budgetAt: number;
  connected: Promise<void>;
  onConnected: () => void;
  onLoaded: () => void;
  /** resolves when the page fired load (never, for a page stuck while loading) */
  loaded: Promise<void>;
  /** run_js runs sent to this page's current document, by run id: each ends with its run-done, or 'reloaded'. */
  runs: Map<number, (m: RunEnd) => void>;
  pongs: Map<number, () => void>;
  didLoad: boolean;
  /** The page asked to be served afresh after reloading itself (reloadItself). */
  reloadAsked?: boolean;
  /** The host refused storage writes from this page (said once). */
  storageRefused?: boolean;
  /** What the page is made of (stalled-pages.ts), to know it again if it stalls the sandbox. */
  fingerprint?: string;
}

/** How a run_js run ends: the frame's run-done, or its document went (the page reloaded itself meanwhile). */
type RunEnd = Extract<FrameMessage, { t: 'run-done' }> | 'reloaded';

/** How a run_js run that outlived its document is reported. */
const RELOADED_NOTE = 'the page reloaded itself before this code finished; run_js now runs in the reloaded page';

/** How long a frame may take to answer a ping before the sandbox counts as stuck. */
const PING_MS = 500;
/** A frame that says hello again (a reload) gets a new channel, at most this often. */
const REATTACH_MS = 250;
/** A page that reloads itself is served afresh at most this often: a burst, then one every 2 s. */
const RELOADS_BURST = 5;
const RELOADS_PER_SECOND = 0.5;
/** Console lines a page may add per second after a burst (the frame itself sends at most 500/s). */
const LINES_BURST = 2_000;
const LINES_PER_SECOND = 1_000;

export class PreviewHost implements PreviewApi {
  /** Holds the frames; the preview pane shows it. Frames reload when it moves in the DOM. */
  readonly element: HTMLDivElement;
  readonly log = new LogBuffer();
  /** Each port's localStorage and sessionStorage, kept across the page's reloads (storage.ts). */
  readonly storage = new PreviewStorage();
  private reloads = new Map<number, { budget: number; at: number }>();
  /** Pages that stalled the sandbox: not served again until their files change. */
  private readonly stalledPages = new StalledPages();
  private pages = new Map<number, Page>();
  /** The served page shown again in browser tabs (openInTab): each tab's own frame, by its window. */
  private tabs = new Map<Window, Page>();
  private lastPort: number | undefined;
  private nextRun = 1;
  private listeners = new Set<() => void>();
  private runOutput = new Map<number, string[]>();
  private readonly onWindowMessage = (e: MessageEvent) => this.acceptHello(e);

  constructor(private readonly opts: PreviewHostOptions) {
    this.element = document.createElement('div');
    this.element.className = 'pooled-preview-frames';
    this.element.style.cssText = 'position:absolute;inset:0;';
    window.addEventListener('message', this.onWindowMessage);
  }

  /** Called when ports or logs change (the pane re-renders). Returns an unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get selectedPort(): number | undefined {
    return this.lastPort;
  }

  select(port: number): void {
    if (!this.pages.has(port)) throw new PreviewError(`nothing is served on :${port}`);
    this.lastPort = port;
    for (const p of this.pages.values()) p.view.shell.style.visibility = p.port === port ? 'visible' : 'hidden';
    this.emit();
  }

  async serve(target = ''): Promise<ServeResult> {
    const { folder, page } = await splitServeTarget(this.opts.files, target);
    await this.recycleIfStuck();
    const existing = [...this.pages.values()].find((p) => p.folder === folder);
    const port = existing?.port ?? this.freePort();
    const cursor = this.log.cursor;
    const started = performance.now();
    const opened = await this.open({ port, folder, page: existing && target === '' ? existing.page : page }, existing !== undefined);
    const ms = Math.round(performance.now() - started);
    if (typeof opened === 'string') return { port, folder, page, loaded: false, ms, errors: [], reloaded: false, stalled: opened };
    const loaded = opened;
    const errors = this.log.since(cursor, port).filter((l) => l.level === 'error').map((l) => l.text);
    return { port, folder, page: this.pages.get(port)!.page, loaded, ms, errors, reloaded: existing !== undefined };
  }

  async logs(cursor = 0): Promise<LogsResult> {
    return this.log.read(cursor);
  }

  async served(): Promise<ServedPage[]> {
    return [...this.pages.values()].map(({ port, folder, page }) => ({ port, folder, page })).sort((a, b) => a.port - b.port);
  }

  /** Serves the given ports again (after a reload of the app) on the same numbers, without waiting for their pages. */
  async restore(ports: RestorablePort[]): Promise<void> {
    for (const p of ports) {
      try {
        const spec = 'folder' in p ? p : { port: p.port, ...(await splitServeTarget(this.opts.files, p.path)) };
        await this.open(spec, this.pages.has(p.port), 0);
      } catch (e) {
        this.push(p.port, 'warn', 'system', `could not serve :${p.port} again: ${(e as Error).message}`);
      }
    }
  }

  async runJs(code: string, portIn?: number): Promise<RunJsResult> {
    const port = portIn ?? this.lastPort;
    if (port === undefined) throw new PreviewError('nothing is served yet: call serve first, then run_js next to that page');
    const page = this.pages.get(port);
    if (!page) throw new PreviewError(`nothing is served on :${port}; served: ${[...this.pages.keys()].map((p) => ':' + p).join(', ') || 'none'}`);
    const limit = this.opts.runJsMs ?? PREVIEW_LIMITS.runJsMs;
    const run = this.nextRun++;
    const output: string[] = [];
    this.runOutput.set(run, output);
    const started = performance.now();
    const rewritten = await this.rewriteRunCode(code, page);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settled = false;
    let sentTo: Page | undefined;
    const done = new Promise<RunEnd | 'timeout'>((resolve) => {
      const end = (r: RunEnd | 'timeout') => { settled = true; resolve(r); };
      // The limit is the code's own time: it starts when the code is sent. Before that, next to a page
      // still coming back (a reload after the last timeout, on a loaded machine): wait for its frame to
      // connect and load (a page that never loads gets 1.5 s), bounded on its own. A page replaced
      // meanwhile (it reloaded itself) gets the code in its new document.
      timer = setTimeout(() => end('timeout'), limit + PAGE_RETURN_MS);
      const sendTo = async (target: Page): Promise<void> => {
        await target.connected;
        await Promise.race([target.loaded, sleep(Math.min(1_500, limit / 2))]);
        if (settled) return;
        const now = this.pages.get(port);
        if (now && now !== target) return sendTo(now);
        clearTimeout(timer);
        timer = setTimeout(() => end('timeout'), limit);
        sentTo = target;
        target.runs.set(run, end);
        target.channel!.postMessage({ t: 'run', run, code: rewritten });
      };
      void sendTo(page);
    });
    const result = await done;
    clearTimeout(timer);
    sentTo?.runs.delete(run);
    this.runOutput.delete(run);
    const ms = Math.round(performance.now() - started);
    if (result === 'timeout') {
      this.push(port, 'warn', 'system', `run_js stopped after ${limit / 1000} s; the page was reloaded`);
      await this.recycle();
      return { status: 'timeout', output, ms };
    }
    if (result === 'reloaded') return { status: 'done', output, ms, note: RELOADED_NOTE };
    return result.ok ? { status: 'done', output, ms } : { status: 'error', output, error: result.error ?? 'failed', ms };
  }

  /**
   * Opens the page served on `port` in a new browser tab (preview-tab.html, this app's origin). Call it
   * from a click (browsers allow pop-ups only then). The tab asks for its frame when it loads (again after
   * a reload), and every later serve of that port (a rebuild) shows the new build there too. The tab's
   * frame fetches files and keeps storage through this host, as the pane's does; its console stays in
   * the tab (preview_logs reads the pane's page only, so the agent never sees lines twice).
   */
  openInTab(port = this.lastPort): Window | null {
    if (port === undefined || !this.pages.has(port)) throw new PreviewError('nothing is served yet: serve a page first');
    return window.open(`${import.meta.env.BASE_URL}preview-tab.html?port=${port}`, '_blank');
  }

  /** Removes every frame (their processes go with them) and stops listening. */
  dispose(): void {
    window.removeEventListener('message', this.onWindowMessage);
    for (const p of this.pages.values()) removeFrame(p);
    for (const p of this.tabs.values()) removeFrame(p);
    this.pages.clear();
    this.tabs.clear();
  }

  // ---- internals -----------------------------------------------------------------------------------

  /**
   * Chromium runs all of our sandboxed frames in ONE process (they share the app's site), so a page stuck
   * in a loop stalls every port, and its process only goes once no frame is left in it. Recycling removes
   * every frame, then serves each port again in a fresh process.
   */
  private async recycle(dropUnloaded = false): Promise<void> {
    const pages = [...this.pages.values()];
    for (const p of pages) removeFrame(p);
    const back: Page[] = [];
    for (const p of pages) {
      if (dropUnloaded && !p.didLoad) {
        // Most likely the one looping: serving it again would stall the fresh process too.
        this.dropStalled(p, 'its page never finished loading (an endless loop?)');
        continue;
      }
      await this.open({ port: p.port, folder: p.folder, page: p.page }, true, dropUnloaded ? undefined : 0);
      if (!dropUnloaded) continue;
      // After a stall, each page comes back alone and is pinged once loaded: one that stalls the fresh
      // process (a loop after its load event) is the culprit; those back before it leave the stuck process too.
      const now = this.pages.get(p.port);
      if (!now || (await this.ping(now))) { back.push(p); continue; }
      this.dropStalled(now, 'it stalled the sandbox again right after loading: an endless loop after its load event?');
      for (const b of back) { const f = this.pages.get(b.port); if (f) removeFrame(f); }
      for (const b of back) await this.open({ port: b.port, folder: b.folder, page: b.page }, true, 0);
    }
    if (this.lastPort !== undefined && !this.pages.has(this.lastPort)) this.lastPort = [...this.pages.keys()].at(-1);
    this.emit();
  }

  /** `page` stalled the sandbox: it goes, and is not served again until its files change (stalled-pages.ts). */
  private dropStalled(page: Page, why: string): void {
    removeFrame(page);
    this.pages.delete(page.port);
    if (page.fingerprint) this.stalledPages.mark(page.folder, page.page, page.fingerprint, why);
    this.push(page.port, 'warn', 'system', `stopped :${page.port}/ — ${why}; it is not served again until its files change`);
  }

  /** Before a serve: if any page does not answer a ping, the shared sandbox process is stuck; recycle it. */
  private async recycleIfStuck(): Promise<void> {
    if (this.pages.size === 0) return;
    const answers = await Promise.all([...this.pages.values()].map((p) => this.ping(p)));
    if (answers.every(Boolean)) return;
    for (const p of this.pages.values()) this.push(p.port, 'warn', 'system', 'the preview sandbox was stuck (an endless loop?); restarting it');
    await this.recycle(true);
  }

  private ping(page: Page): Promise<boolean> {
    const id = this.nextRun++;
    return Promise.race([
      page.connected.then(() => new Promise<boolean>((resolve) => {
        page.pongs.set(id, () => resolve(true));
        page.channel!.postMessage({ t: 'ping', id });
      })),
      sleep(PING_MS).then(() => false),
    ]).finally(() => page.pongs.delete(id));
  }

  private freePort(): number {
    let port: number = PREVIEW_LIMITS.defaultPort;
    while (this.pages.has(port)) port++;
    return port;
  }

  /**
   * (Re)creates the frame of a port; resolves true once the page fired load, false after the wait, or
   * why it was not served (a page that stalled the sandbox and has not changed since).
   */
  private async open(spec: ServedPage, reload: boolean, waitMs = this.opts.loadWaitMs ?? PREVIEW_LIMITS.loadWaitMs): Promise<boolean | string> {
    const current = this.pages.get(spec.port);
    // A ping first: the frame sends its pending storage writes before its pong (frame-storage.js).
    const [manifest] = await Promise.all([
      buildManifest({ files: this.opts.files, folder: spec.folder, page: spec.page, port: spec.port, transpile: this.opts.transpile }),
      current?.channel && !current.reloadAsked ? this.ping(current) : null,
    ]);
    const fingerprint = await manifestFingerprint(manifest);
    const refused = this.stalledPages.refusal(spec.folder, spec.page, fingerprint);
    if (refused) return refused;
    const old = this.pages.get(spec.port);
    if (old) {
      removeFrame(old); // drops its process, even one stuck in a loop
      endRuns(old);
    }
    if (reload) this.push(spec.port, 'info', 'system', `— reloaded :${spec.port}/ —`);
    manifest.storage = this.storage.snapshot(spec.port); // as it is now, after the files were read
    const token = crypto.randomUUID();
    let onConnected!: () => void;
    const connected = new Promise<void>((r) => (onConnected = r));
    let onLoaded!: () => void;
    const loaded = new Promise<void>((r) => (onLoaded = r));
    // In a shell whose base is the virtual origin: the frame never learns this page's address (frame-shell.ts).
    const view = new PreviewFrame(this.element, spec.port, frameSrcdoc(manifest, token), `Preview of :${spec.port}/`);
    const page: Page = {
      port: spec.port, folder: spec.folder, page: spec.page, view, token, connected, onConnected, loaded, onLoaded,
      runs: new Map(), pongs: new Map(), didLoad: false, attachedAt: 0, dropped: 0, droppedReportedAt: 0, budget: LINES_BURST, budgetAt: performance.now(), fingerprint,
    };
    this.pages.set(spec.port, page);
    this.select(spec.port);
    for (const [win, shown] of this.tabs) if (shown.port === spec.port) this.showInTab(win, spec.port, shown.page);
    if (waitMs <= 0) return false;
    const ok = await Promise.race([loaded.then(() => true), sleep(waitMs).then(() => false)]);
    if (ok) await sleep(100); // let load handlers and first timers report
    return ok;
  }

  /**
   * Only the hello of one of our own frames (checked by source and token) gets a channel. A second hello
   * from the same frame is its page reloading itself (location.reload()): it gets a fresh channel (at
   * most every REATTACH_MS; the frame says hello until answered), and the old one is closed.
   */
  private acceptHello(e: MessageEvent): void {
    const data = e.data as { t?: unknown; token?: unknown; reload?: unknown; port?: unknown } | null;
    if (data?.t === 'pv-tab') return this.acceptTab(e, data.port);
    if (!data || data.t !== 'pv-hello') return;
    const page = [...this.pages.values(), ...this.tabs.values()].find((p) => p.view.owns(e.source) && p.token === data.token);
    if (!page) return;
    if (this.isTab(page)) {
      // A tab's page: a reload there shows the current build again; a channel for everything else.
      if (data.reload === true) { for (const [win, p] of this.tabs) if (p === page) this.showInTab(win, page.port, page.page); return; }
      page.channel?.close();
      const channel = new MessageChannel();
      page.channel = channel.port1;
      channel.port1.onmessage = (m) => this.onFrameMessage(page, m.data);
      (e.source as Window).postMessage({ t: 'pv-port', token: page.token }, '*', [channel.port2]);
      page.onConnected();
      return;
    }
    if (data.reload === true) {
      void this.reloadItself(page);
      return;
    }
    const now = performance.now();
    if (page.channel) {
      if (now - page.attachedAt < REATTACH_MS) return;
      page.channel.close();
      endRuns(page); // the document they ran in is gone
      page.didLoad = false;
      page.loaded = new Promise<void>((r) => (page.onLoaded = r));
      this.push(page.port, 'info', 'system', `— the page reloaded itself (:${page.port}/) —`);
    }
    page.attachedAt = now;
    const channel = new MessageChannel();
    page.channel = channel.port1;
    channel.port1.onmessage = (m) => this.onFrameMessage(page, m.data);
    (e.source as Window).postMessage({ t: 'pv-port', token: page.token }, '*', [channel.port2]);
    page.onConnected();
  }

  /**
   * The page reloaded itself (location.reload()): its document asks to be served afresh, with the
   * current files and storage, instead of running its first srcdoc again. A page that reloads over and
   * over is stopped once its budget is spent.
   */
  private async reloadItself(page: Page): Promise<void> {
    if (page.reloadAsked) return; // the frame asks again until it is replaced
    page.reloadAsked = true;
    const now = performance.now();
    const r = this.reloads.get(page.port) ?? { budget: RELOADS_BURST, at: now };
    r.budget = Math.min(RELOADS_BURST, r.budget + ((now - r.at) / 1000) * RELOADS_PER_SECOND);
    r.at = now;
    this.reloads.set(page.port, r);
    if (r.budget < 1) {
      this.push(page.port, 'warn', 'system', `stopped :${page.port}/ — the page reloads itself over and over; serve it again once fixed`);
      return;
    }
    r.budget--;
    this.push(page.port, 'info', 'system', `— the page reloaded itself (:${page.port}/) —`);
    const selected = this.lastPort;
    await this.open({ port: page.port, folder: page.folder, page: page.page }, false, 0);
    if (selected !== undefined && selected !== page.port && this.pages.has(selected)) this.select(selected);
  }

  /** preview-tab.html loaded (or reloaded) in a tab this app opened: its frame goes in. */
  private acceptTab(e: MessageEvent, port: unknown): void {
    const win = e.source as Window | null;
    if (e.origin !== location.origin || !win || typeof port !== 'number') return;
    let ours = false;
    try { ours = win.opener === window; } catch { ours = false; }
    if (!ours) return;
    const served = this.pages.get(port);
    const note = win.document.getElementById('note');
    if (!served) {
      if (note) note.textContent = `Nothing is served on :${port} any more: serve it again in the app, then reload this tab.`;
      return;
    }
    win.addEventListener('message', this.onWindowMessage);   // its frame says hello to this tab's window
    this.showInTab(win, port, served.page);
  }

  /** (Re)places the frame of `port` in a tab opened by openInTab; a closed tab is forgotten. */
  private showInTab(win: Window, port: number, pagePath: string): void {
    const old = this.tabs.get(win);
    if (old) removeFrame(old);
    this.tabs.delete(win);
    const container = win.closed ? null : win.document.getElementById('frames');
    const served = this.pages.get(port);
    if (!container || !served) return;
    win.document.title = `:${port}/${pagePath === 'index.html' ? '' : pagePath} — pooled preview`;
    void buildManifest({ files: this.opts.files, folder: served.folder, page: pagePath, port, transpile: this.opts.transpile }).then((manifest) => {
      if (win.closed || this.tabs.has(win)) return;
      manifest.storage = this.storage.snapshot(port);
      const token = crypto.randomUUID();
      let onConnected!: () => void;
      const connected = new Promise<void>((r) => (onConnected = r));
      const view = new PreviewFrame(container, port, frameSrcdoc(manifest, token), `Preview of :${port}/`);
      this.tabs.set(win, {
        port, folder: served.folder, page: pagePath, view, token, connected, onConnected, loaded: Promise.resolve(), onLoaded: () => {},
        runs: new Map(), pongs: new Map(), didLoad: false, attachedAt: 0, dropped: 0, droppedReportedAt: 0, budget: LINES_BURST, budgetAt: performance.now(),
      });
      const note = win.document.getElementById('note');
      if (note) note.textContent = '';
    });
  }

  private isTab(page: Page): boolean {
    for (const p of this.tabs.values()) if (p === page) return true;
    return false;
  }

  private onFrameMessage(page: Page, data: unknown): void {
    const tab = this.isTab(page);
    if ((!tab && this.pages.get(page.port) !== page) || !isFrameMessage(data)) return; // a removed frame or junk
    if (tab) return this.onTabFrameMessage(page, data);
    switch (data.t) {
      case 'logs':
        this.takeLines(page, data.lines, data.dropped);
        break;
      case 'loaded':
        page.didLoad = true;
        page.onLoaded();
        break;
      case 'run-done':
        page.runs.get(data.run)?.(data);
        break;
      case 'run-start':
        break;
      case 'pong':
        page.pongs.get(data.id)?.();
        break;
      case 'navigate':
        void this.navigate(page, data.path);
        break;
      case 'fetch':
        void this.answerFetch(page, data.id, data.path);
        break;
      case 'storage': {
        const refused = this.storage.area(page.port, data.area).apply(data.clear, data.changes);
        if (refused > 0 && !page.storageRefused) {
          page.storageRefused = true; // said once per page: only a page that lies about its quota gets here
          this.push(page.port, 'warn', 'system', `${refused} ${data.area}Storage writes refused: over the ${PREVIEW_LIMITS.storageChars >> 20} Mi characters a page may keep`);
        }
        break;
      }
    }
  }

  /** A tab's frame: it fetches files, keeps storage and follows links; its console stays in the tab. */
  private onTabFrameMessage(page: Page, data: FrameMessage): void {
    switch (data.t) {
      case 'fetch':
        void this.answerFetch(page, data.id, data.path);
        break;
      case 'storage':
        this.storage.area(page.port, data.area).apply(data.clear, data.changes);
        break;
      case 'navigate':
        for (const [win, p] of this.tabs) if (p === page) this.showInTab(win, page.port, data.path);
        break;
      case 'pong':
        page.pongs.get(data.id)?.();
        break;
      default:
        break;
    }
  }

  /** A link to another page of the folder: that page on the same port (a missing one shows a 404 page). */
  private async navigate(page: Page, path: string): Promise<void> {
    this.push(page.port, 'info', 'system', `→ /${path}`);
    await this.open({ port: page.port, folder: page.folder, page: path }, false, 0);
  }

  private async answerFetch(page: Page, id: number, path: string): Promise<void> {
    let bytes: Uint8Array | null = null;
    try {
      bytes = await this.opts.files.readBytes(page.folder === '' ? path : `${page.folder}/${path}`);
    } catch {
      bytes = null; // a path the project refuses is simply not there
    }
    const reply = bytes
      ? { t: 'reply', id, status: 200, mime: mimeType(path), bytes: bytes.buffer }
      : { t: 'reply', id, status: 404 };
    page.channel?.postMessage(reply, bytes ? [bytes.buffer as ArrayBuffer] : []);
  }

  private async rewriteRunCode(code: string, page: Page): Promise<string> {
    const prefix = page.folder === '' ? '' : page.folder + '/';
    const present = new Set((await this.opts.files.allFiles()).filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length)));
    return rewriteSpecifiers(code, (spec) => {
      if (!isUrlLikeSpecifier(spec)) return null;
      const target = resolveReference(spec, page.page, page.port);
      if (target === null) return null;
      return virtualUrl(page.port, findScript(target, (p) => present.has(p)) ?? target);
    });
  }

  /** A batch of console lines: kept within the page's budget, drops reported at most once a second. */
  private takeLines(page: Page, lines: FrameLogLine[], droppedByFrame: number): void {
    const now = performance.now();
    page.budget = Math.min(LINES_BURST, page.budget + ((now - page.budgetAt) / 1000) * LINES_PER_SECOND);
    page.budgetAt = now;
    page.dropped += droppedByFrame;
    for (const l of lines) {
      if (page.budget < 1) { page.dropped++; continue; }
      page.budget--;
      this.log.push({ port: page.port, level: l.level, source: l.source, text: l.text });
      if (l.run) this.runOutput.get(l.run)?.push(l.level === 'log' ? l.text : `[${l.level}] ${l.text}`);
    }
    if (page.dropped > 0 && now - page.droppedReportedAt >= 1000) {
      this.log.push({ port: page.port, level: 'warn', source: 'system', text: `${page.dropped} console lines dropped: the page is flooding its console` });
      page.dropped = 0;
      page.droppedReportedAt = now;
    }
    this.emit();
  }

  private push(port: number, level: PreviewLogLine['level'], source: PreviewLogLine['source'], text: string): void {
    this.log.push({ port, level, source, text });
    this.emit();
  }

  private emit(): void {
    for (const l of this.listeners) l();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Runs sent to a document that is gone (the page reloaded or was replaced) end now, with what they printed. */
function endRuns(page: Page): void {
  const ends = [...page.runs.values()];
  page.runs.clear();
  for (const end of ends) end('reloaded');
}

/** Takes a page's frame out (its process goes with it once no frame is left in it) and frees its document. */
function removeFrame(page: Page): void {
  page.view.remove();
  page.channel?.close();
}
