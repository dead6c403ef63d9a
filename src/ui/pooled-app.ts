// <pooled-app>, the page's one element (index.html): switches between the start, host, guest and replay screens.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, state } from 'lit/decorators.js';
import { GuestSession } from '../app/guest-session.ts';
import { HostSession } from '../app/host-session.ts';
import { openReplayWorkspace } from '../app/replay-session.ts';
import { openServerWorkspace, saveServerChoice, type ServerChoice } from '../app/server-session.ts';
import { DEMO_SCRIPT, parseAppParams, type AppParams } from '../app/url-params.ts';
import type { Workspace } from '../app/workspace.ts';
import type { ApiServe } from '../app/api-serve.ts';
import { inviteLink } from '../room/signaling.ts';
import type { HostRequest, JoinRequest, ServerRequest } from './start-screen.ts';
import { gibText } from '../app/memory-budget.ts';
import type { EngineKind, EngineOptions } from '../engines/contract.ts';
import { defaultDeviceName } from '../app/device-name.ts';
import { readRoomRecord, type RoomRecord } from '../app/room-record.ts';
import { theme } from './theme.ts';
import './error-box.ts';
import './start-screen.ts';
import './host-screen.ts';
import './api-panel.ts';
import './guest-screen.ts';
import './agent-workspace.ts';
import type { WorkspaceNotice } from './agent-workspace.ts';

type Screen =
  | { kind: 'start' }
  | { kind: 'host'; session: HostSession }
  | { kind: 'guest'; session: GuestSession }
  | { kind: 'replay'; workspace?: Workspace; api?: ApiServe; error?: string }
  | { kind: 'server'; choice: ServerChoice; workspace?: Workspace; error?: string }
  | { kind: 'bad-url'; error: string };

/** The app: start (host or join), the host's room + workspace, a guest's screen, or the replay workspace. */
@customElement('pooled-app')
export class PooledApp extends LitElement {
  @state() private screen: Screen = { kind: 'start' };
  private params: AppParams = { ckpt: 4, delay: 15 };

  static override styles = [theme, css`
    :host { display: block; min-height: 100vh; background: var(--bg); }
    .replay { height: 100vh; }
    .with-api { display: grid; grid-template-columns: minmax(16rem, 22rem) 1fr; }
    .with-api aside { padding: .75rem; border-right: 1px solid var(--line); overflow: auto; }
    /* Narrow: the workspace first (its request box in the first screen), the endpoint's panel below it. */
    @media (max-width: 900px) { .with-api { grid-template-columns: 1fr; } .with-api aside { order: 2; border-right: 0; } }
    .center { max-width: 40rem; margin: 2rem auto; padding: 0 1rem; display: grid; gap: .75rem; }
  `];

  override connectedCallback(): void {
    super.connectedCallback();
    try {
      this.params = parseAppParams(location.search);
    } catch (e) {
      this.screen = { kind: 'bad-url', error: `${(e as Error).name}: ${(e as Error).message}` };
      return;
    }
    if (this.params.room) this.joinRoom({ roomId: this.params.room, ...(this.params.memoryBudgetBytes ? { memoryBudgetBytes: this.params.memoryBudgetBytes } : {}) });
    else if (this.params.agent === 'replay') this.openReplay();
    else if (this.params.server) this.openServer(this.params.server);
    else this.resumeRoom();
  }

  /**
   * A reload of the host's page: the room this tab hosted (kept in the tab's storage) opens again with the
   * same id, so its guests rejoin by themselves. Only on the room's own address (?model= as hosting wrote
   * it), and only once the page that hosted it went away: the start page's plain address, another model, or
   * a duplicate of the tab starts afresh.
   */
  private resumeRoom(): void {
    const record = readRoomRecord();
    // leftAt: the page that hosted it went away (not a duplicate of a tab whose page still hosts it).
    if (!record || record.leftAt === undefined || this.params.model !== record.model.id) return;
    const { id, url, name } = record.model;
    this.hostRoom({
      choice: { kind: 'url', id, url, name }, ...(record.ctx ? { ctx: record.ctx } : {}),
      ...(record.memoryBudgetBytes ? { memoryBudgetBytes: record.memoryBudgetBytes } : {}),
    }, record);
  }

  /** The last host request, for Retry. */
  private lastHost?: HostRequest;

  /** ?engine= and the engine rows' options (?simd=…): they travel with the room's probe and loads. */
  private engineParams(): { engine?: EngineKind; engineOptions?: EngineOptions } {
    return { ...(this.params.engine ? { engine: this.params.engine } : {}), ...(this.params.engineOptions ? { engineOptions: this.params.engineOptions } : {}) };
  }

  private hostRoom(req: HostRequest, resume?: RoomRecord): void {
    this.lastHost = req;
    const session = new HostSession({
      ...(resume ? { resume } : {}),
      choice: req.choice, ckpt: this.params.ckpt, ...(req.ctx === undefined ? {} : { ctx: req.ctx }), ...(this.params.kv ? { kv: this.params.kv } : {}),
      ...this.engineParams(), name: this.params.name ?? defaultDeviceName(),
      ...(this.params.speed ? { speed: this.params.speed } : {}), ...(this.params.draft ? { draft: this.params.draft } : {}),
      ...(this.params.seed !== undefined ? { seed: this.params.seed } : {}),
      ...(req.memoryBudgetBytes ? { memoryBudgetBytes: req.memoryBudgetBytes } : {}),
      ...(this.params.ask === undefined ? {} : { askFirst: this.params.ask }),
    });
    this.screen = { kind: 'host', session };
    if (req.choice.kind === 'url') {
      // A reload comes back to the same choice (and, hosting again, to the saved session).
      const q = new URLSearchParams(location.search);
      q.set('model', req.choice.id);
      if (req.ctx === undefined) q.delete('ctx');
      else q.set('ctx', String(req.ctx));
      if (req.memoryBudgetBytes) q.set('mem', gibText(req.memoryBudgetBytes));
      history.replaceState(null, '', `${location.pathname}?${q}`);
    }
    void session.start();
  }

  private joinRoom({ roomId, memoryBudgetBytes }: JoinRequest): void {
    const session = new GuestSession(roomId, {
      name: this.params.name ?? defaultDeviceName(), ...this.engineParams(),
      ...(this.params.speed ? { speed: this.params.speed } : {}), ...(memoryBudgetBytes ? { memoryBudgetBytes } : {}),
    });
    if (!this.params.room) {
      // A reload rejoins the same room with the same choices (name, engine, memory…).
      const q = new URLSearchParams(location.search);
      for (const [k, v] of new URLSearchParams(new URL(inviteLink(roomId)).search)) q.set(k, v);
      if (memoryBudgetBytes) q.set('mem', gibText(memoryBudgetBytes));
      history.replaceState(null, '', `${location.pathname}?${q}`);
    }
    this.screen = { kind: 'guest', session };
    void session.join();
  }

  private openServer(choice: ServerChoice): void {
    saveServerChoice(choice);
    const q = new URLSearchParams(location.search);
    q.set('server', choice.url);
    q.set('server-model', choice.model);
    q.set('tokenizer', choice.tokenizer);
    history.replaceState(null, '', `${location.pathname}?${q}`);   // a reload comes back to this server
    this.screen = { kind: 'server', choice };
    openServerWorkspace(choice, { ...(this.params.ctx ? { ctx: this.params.ctx } : {}), ...(this.params.ask === undefined ? {} : { askFirst: this.params.ask }) })
      .then((workspace) => (this.screen = { kind: 'server', choice, workspace }))
      .catch((e: Error) => (this.screen = { kind: 'server', choice, error: `${e.name}: ${e.message}` }));
  }

  private openReplay(): void {
    this.screen = { kind: 'replay' };
    openReplayWorkspace(this.params)
      .then(({ workspace, api }) => (this.screen = { kind: 'replay', workspace, api }))
      .catch((e: Error) => (this.screen = { kind: 'replay', error: `${e.name}: ${e.message}` }));
  }

  override render() {
    const s = this.screen;
    switch (s.kind) {
      case 'start':
        return html`<pooled-start-screen .model=${this.params.model ?? 'tiny'} .ctx=${this.params.ctx ?? 0} .memoryBudgetBytes=${this.params.memoryBudgetBytes ?? 0}
          @host=${(e: CustomEvent<HostRequest>) => this.hostRoom(e.detail)}
          @join=${(e: CustomEvent<JoinRequest>) => this.joinRoom(e.detail)}
          @server=${(e: CustomEvent<ServerRequest>) => this.openServer(e.detail)}></pooled-start-screen>`;
      case 'host':
        return html`<pooled-host-screen .session=${s.session} @retry=${() => { if (this.lastHost) this.hostRoom(this.lastHost); }}></pooled-host-screen>`;
      case 'guest':
        return html`<pooled-guest-screen .session=${s.session}></pooled-guest-screen>`;
      case 'replay':
        if (s.error) {
          return html`<main class="center"><h1>Replay workspace</h1>
            <pooled-error-box data-testid="replay-error" .error=${s.error} @retry=${() => this.openReplay()}></pooled-error-box></main>`;
        }
        return s.workspace
          ? html`<div class="with-api"><aside aria-label="Endpoint"><pooled-api-panel .serve=${s.api}></pooled-api-panel></aside>
              <pooled-agent-workspace class="replay" .workspace=${s.workspace} heading="Agent · scripted replay model"
              .notice=${replayNotice(this.params.script ?? DEMO_SCRIPT)}></pooled-agent-workspace></div>`
          : html`<main class="center"><p class="muted">Opening the replay workspace…</p></main>`;
      case 'server':
        if (s.error) {
          return html`<main class="center"><h1>Server</h1>
            <pooled-error-box data-testid="server-error" .error=${s.error} @retry=${() => this.openServer(s.choice)}></pooled-error-box></main>`;
        }
        return s.workspace
          ? html`<pooled-agent-workspace class="replay" .workspace=${s.workspace} heading=${`Agent · ${s.choice.model} on ${s.choice.url}`}></pooled-agent-workspace>`
          : html`<main class="center"><p class="muted">Connecting to ${s.choice.url}…</p></main>`;
      case 'bad-url':
        return html`<main class="center"><h1>pooled</h1>
          <pooled-error-box data-testid="url-error" .error=${s.error} .retry=${false}></pooled-error-box></main>`;
      default:
        return nothing;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-app': PooledApp }
}

/** What the replay workspace tells the user where the request is typed: the answers are scripted. */
function replayNotice(script: string): WorkspaceNotice {
  const link = { href: location.pathname, label: 'Host a room with a model →' };
  if (script === DEMO_SCRIPT) {
    return {
      title: 'Scripted demo',
      text: 'no model runs here. Whatever you ask, it replays the same script, which builds a counter app.',
      placeholder: 'Ask for anything: the demo builds its counter app',
      empty: 'Send any request to watch the agent write a small counter app, serve it in the preview and check its console.',
      link,
    };
  }
  return { title: 'Scripted replay', text: `the answers come from ${script}, not from what you ask.`, link };
}
