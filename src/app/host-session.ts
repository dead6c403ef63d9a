// Hosting a room from the app: open the room (src/room createHostRoom), load the model's tokenizer and
// chat template, and put the agent workspace on the room's engine through EngineBackend. The state the
// room screen shows (devices, deal, progress, tok/s, warnings) lives in one Store.
import { EngineBackend, QWEN3_NON_THINKING } from '../agent/engine-backend.ts';
import { defaultContextFor } from '../agent/budget.ts';
import { ChatTemplate } from '../model/chat-template.ts';
import { loadModelConfig } from '../model/config.ts';
import type { GenerateOptions, GenerationResult, TokenGenerator } from '../model/generate-types.ts';
import { resolveModelSource } from '../model/sources/resolve.ts';
import { vocabularyOf } from '../model/speculative/vocabulary.ts';
import { Tokenizer } from '../model/tokenizer.ts';
import type { ModelConfig, ModelSource } from '../model/types.ts';
import type { EngineKind, EngineOptions } from '../engines/contract.ts';
import { PAGE_ENGINES } from '../engines/page-engines.ts';
import { createHostRoom, type HostRoom } from '../room/api.ts';
import { presumedEngine } from '../room/engine-choice.ts';
import { draftLoaderFor, type DraftLoader, type DraftTarget } from './draft-loader.ts';
import { DraftSwitch, type DraftChoiceState } from './draft-switch.ts';
import { loadDeployment } from './deploy-config.ts';
import type { DealCost, DealEntry, KvType } from '../room/deal.ts';
import { HOST_ID, type DeviceInfo } from '../room/host.ts';
import type { TokenRoute } from '../room/host-chains.ts';
import { hostModelUrl } from './models.ts';
import { contextWarning } from './url-params.ts';
import { contextNote } from '../room/context-choice.ts';
import type { RoomContext } from '../room/host-types.ts';
import { TINY_ANSWER_CAP, TINY_CAP_NOTE, TINY_MODEL_ID } from './models.ts';
import { factorText, standByNote } from './stand-by.ts';
import { cachedModelSource } from './model-cache.ts';
import { PrefillByDevice, type DevicePrefill } from './prefill-progress.ts';
import { Store } from './store.ts';
import { offerOf } from './memory-budget.ts';
import { Workspace } from './workspace.ts';
import { QueuedBackend } from '../api/generate-queue.ts';
import { apiModel } from '../api/api-model.ts';
import { ApiServe } from './api-serve.ts';
import { clearRoomRecord, markRoomLeft, saveRoomRecord, type RoomRecord } from './room-record.ts';
import { PeerIdTakenError } from '../room/signaling.ts';

/** How long a reloaded host waits for its old room id on the signaling server before it opens a new room. */
export const ROOM_ID_WAIT_MS = 20_000;

export type ModelChoice =
  | { kind: 'url'; url: string; name: string; id: string }
  | { kind: 'folder'; folder: FileSystemDirectoryHandle | FileList | File[]; name: string };

export interface HostStartOptions {
  choice: ModelChoice;
  /** Absent: the model's default context by its size (src/agent/budget.ts defaultContextFor). */
  ctx?: number;
  /** The room's KV cache type (?kv=; absent: f16). */
  kv?: KvType;
  ckpt: number;
  /** ?engine=: a kind of the engine table (absent: the probe's fastest). */
  engine?: EngineKind;
  /** The engines' options (?simd=…). */
  engineOptions?: EngineOptions;
  name?: string;
  speed?: number;
  /** ?seed=: every answer sampled with this seed (absent: a random seed each). */
  seed?: number;
  memoryBudgetBytes?: number;   // what this device offers the room (default: derived from navigator.deviceMemory)
  askFirst?: boolean;
  /** Speculative decoding with prompt-lookup drafts (default on: the tokens are those of plain decoding). */
  speculate?: boolean;
  /** A draft model to load once the room is open (?draft=: a Hugging Face id, URL, /path or "tiny"). */
  draft?: string;
  /** The room this tab hosted before a reload (room-record.ts): re-opened with the same id, its deal offered first. */
  resume?: RoomRecord;
  /** How draft models load (default: draftLoaderFor, from the URL through the weight cache). Tests. */
  draftLoader?: (target: DraftTarget) => DraftLoader;
}

export interface HostState {
  phase: 'starting' | 'open' | 'failed';
  step: string;                // what is happening now ("reading the model's tokenizer…")
  modelName: string;
  ctx: number;                 // the context in effect (0 until the model's config was read, when ?ctx= did not say)
  ckpt: number;
  roomId?: string;
  link?: string;
  /** After a reload: the room came back with the same link, or (its id still held) a new one; the host screen says which. */
  restored?: { sameRoom: boolean; text: string };
  config?: ModelConfig;
  devices: DeviceInfo[];
  generating: boolean;
  /** The room's decode speed: live while tokens flow, then the last answer's; 0 until measured (each device's own layer speed is in devices[i].tokensPerSecond). */
  tokensPerSecond: number;
  deal: DealEntry[];            // the deal in effect (pipeline order)
  /** How a decode token travels in that deal (device names, host first and last) and its hops between devices. */
  route: TokenRoute;
  /** What dealing counts per layer (weights + KV at ctx) and on the host; the deal editor shows it. */
  dealCost?: DealCost;
  /** The expert's manual deal while one is set (null = automatic, in proportion to memory and speed). */
  manualDeal: DealEntry[] | null;
  /** Speculative decoding (prompt lookup) for the agent's answers; the room panel switches it. */
  speculation: boolean;
  /** Where the drafts come from: prompt lookup, a draft model loading, or one in effect (the room panel chooses). */
  draft: DraftChoiceState;
  /** Why the last draft model did not load ("DraftVocabularyError: …"); prompt lookup stays in effect. */
  draftError?: string;
  /** Prompt reading while a request's prefill runs: tokens read (reused ones counted) of the prompt's; absent otherwise. */
  prefill?: { done: number; total: number };
  /** The same per device holding layers, as chunks pass through them (prefill-progress.ts); absent outside a prefill. */
  prefillDevices?: DevicePrefill;
  warnings: string[];
  events: string[];            // recent room events ("Phone joined", "Phone left: tab closed")
  error?: string;
}

export class HostSession {
  readonly store: Store<HostState>;
  /** The built-in random-weights model: answers are gibberish, capped at TINY_ANSWER_CAP. */
  readonly tinyModel: boolean;
  room?: HostRoom;
  workspace?: Workspace;
  /** "Serve this room's model": the OpenAI-compatible endpoint, off until the host turns it on. */
  api?: ApiServe;
  /** The drafter choice (prompt lookup or a draft model); made once the target's tokenizer is known. */
  private drafts?: DraftSwitch;
  /** The deal last kept for a reload (room-record.ts). */
  private keptDeal?: { entries: DealEntry[]; ctx: number; manual?: boolean };
  /** Close room was asked: nothing is kept for a reload any more. */
  private closing = false;

  constructor(private readonly opts: HostStartOptions) {
    this.tinyModel = opts.choice.kind === 'url' && opts.choice.id === TINY_MODEL_ID;
    const warnings: string[] = [];
    if (!globalThis.navigator?.gpu) warnings.push('This browser has no WebGPU: this device runs its layers on the CPU (the WebAssembly engine), slower than a GPU. Use a recent Chrome, Edge or Safari 26+ for speed.');
    this.store = new Store<HostState>({
      phase: 'starting', step: 'opening the room…', modelName: opts.choice.name, ctx: opts.ctx ?? 0, ckpt: opts.ckpt,
      devices: [], deal: [], route: { stops: [opts.name ?? 'Host'], hops: 0 }, manualDeal: null, speculation: opts.speculate ?? true, draft: { kind: 'lookup' }, generating: false, tokensPerSecond: 0, warnings, events: [],
    });
  }

  get state(): HostState {
    return this.store.state;
  }

  async start(): Promise<void> {
    const { choice } = this.opts;
    const startedAt = performance.now();
    let loadedOnce = false;
    try {
      this.store.set({ step: 'finding the model…' });
      const url = choice.kind === 'url' ? await hostModelUrl(choice.url) : undefined;
      const resolved: ModelSource = await resolveModelSource(url ?? (choice as { folder: FileSystemDirectoryHandle | FileList | File[] }).folder);
      // From a URL, the tokenizer and config come through this browser's model cache (a reload reads them locally).
      const source: ModelSource = url ? cachedModelSource(resolved, url) : resolved;
      this.store.set({ step: "reading the model's tokenizer and chat template…" });
      const tokenizer = await Tokenizer.fromSource(source);
      const template = ChatTemplate.fromTokenizerConfig(tokenizer.config as Record<string, unknown>,
        source.modelFile ? `${source.label} (GGUF metadata)` : `${source.label}/tokenizer_config.json`);
      // The context wanted: ?ctx= (dealt exactly, or refused naming what the room holds), else the model's
      // default, of which the room deals as much as its memory holds.
      const ctx = this.opts.ctx ?? defaultContextFor(await loadModelConfig(source));
      const small = contextWarning(ctx);
      this.store.set({ step: 'opening the room…', ctx, warnings: small ? [small, ...this.state.warnings] : this.state.warnings });
      const { signaling, runJs } = await loadDeployment();
      const open = (resume: RoomRecord | undefined) => createHostRoom({
        signaling,
        ...(resume ? { roomId: resume.roomId, peerToken: resume.peerToken, idRetryMs: ROOM_ID_WAIT_MS, ...(resume.deal ? { resumeDeal: resume.deal } : {}) } : {}),
        model: url ?? resolved, ctx, ctxExact: this.opts.ctx !== undefined, host: { ckpt: this.opts.ckpt }, ...(this.opts.kv ? { kv: this.opts.kv } : {}),
        engines: PAGE_ENGINES, ...(this.opts.engine ? { engine: this.opts.engine } : {}), ...(this.opts.speed ? { speed: this.opts.speed } : {}),
        ...(this.opts.engineOptions ? { engineOptions: this.opts.engineOptions } : {}),
        ...offerOf(this.opts.memoryBudgetBytes), name: this.opts.name ?? 'Host',
      });
      const room = await this.openRoom(open);
      this.room = room;
      this.keepRoom(room);
      this.watchPageLeaving();
      const target: DraftTarget = {
        vocabulary: vocabularyOf(room.config, tokenizer), ctx, engine: this.opts.engine ?? presumedEngine(PAGE_ENGINES),
        ...(this.opts.engineOptions ? { engineOptions: this.opts.engineOptions } : {}), origin: globalThis.location?.origin ?? '',
      };
      this.drafts = new DraftSwitch((this.opts.draftLoader ?? draftLoaderFor)(target), (s) => {
        if (s.draftError) this.log(`Draft model not loaded: ${s.draftError}`);
        else if (s.draft.kind === 'model' && this.state.draft.kind !== 'model') this.log(`Draft model ${s.draft.name} in effect`);
        this.store.set(s);
        if (s.draft.kind !== 'loading') this.reserveForDraft(room, s.draft.kind === 'model' ? s.draft.bytes : 0);
      });
      room.host.on((e) => {
        if (e.type === 'rows') return;   // per chunk: the request's own listener counts them (generate)
        if (e.type === 'joined') this.log(`${e.device.name} joined`);
        if (e.type === 'left') this.log(e.why === 'removed by the host' ? `${e.device.name} removed from the room` : `${e.device.name} left: ${e.why}`);
        if (e.type === 'deal-error') this.store.set({ error: `${e.error.name}: ${e.error.message}` });
        if (e.type === 'ready') {
          // How long the first load took, measured: it depends on the GPU (seconds on a real one, longer on a software adapter).
          if (!loadedOnce) this.log(`Model ready ${((performance.now() - startedAt) / 1000).toFixed(1)} s after Host a room`);
          loadedOnce = true;
          const manualDeal = room.host.manualDeal;   // a resumed manual deal is manual again
          this.store.set({ deal: e.deal, route: room.host.route, error: undefined, ctx: e.context.ctx, dealCost: room.host.dealCost, manualDeal });
          // The deal is kept for a reload, but not the host-alone one dealt while guests are still coming back.
          if (!room.host.resuming) this.keepRoom(room, { entries: e.deal, ctx: e.context.ctx, ...(manualDeal ? { manual: true } : {}) });
          this.workspace?.contextChanged(contextNoteFor(e.context));
        }
        this.store.set({ devices: room.host.deviceList() });
      });
      const generator: TokenGenerator = { generate: (prompt, o) => this.generate(prompt, o), recover: (signal) => room.host.recover(signal) };
      const engineBackend = new EngineBackend({
        ...(this.opts.seed !== undefined ? { sampling: { ...QWEN3_NON_THINKING, seed: this.opts.seed } } : {}),
        generator, tokenizer, template, contextSize: () => room.host.currentContext.ctx, name: choice.name,
        // Every device that works on each token: those holding layers, and the host (embedding, head, sampling).
        devices: () => room.host.currentDeal.filter((d) => d.deviceId === HOST_ID || d.range[1] > d.range[0]).length || 1,
      });
      // One stream through the room at a time: the agent's answers and the API's requests share this queue.
      const backend = new QueuedBackend(engineBackend);
      this.api = new ApiServe({ model: apiModel(apiModelId(choice), backend, tokenizer, template.format), origin: globalThis.location?.origin ?? 'http://127.0.0.1' });
      this.store.set({ step: 'opening the project…' });
      const tiny = this.tinyModel;
      this.workspace = await Workspace.open({
        backend, tokenizer, format: template.format, projectId: 'default', runJs,
        ...(this.opts.askFirst === undefined ? {} : { askFirst: this.opts.askFirst }),
        ...(tiny ? { answerCap: TINY_ANSWER_CAP, answerCapNote: TINY_CAP_NOTE } : {}),
      });
      this.workspace.contextChanged(contextNoteFor(room.host.currentContext));
      if (this.opts.draft) void this.loadDraft(this.opts.draft);
      this.store.set({ phase: 'open', step: '', ctx: room.host.currentContext.ctx, roomId: room.roomId, link: room.link, config: room.config, devices: room.host.deviceList(), deal: room.host.currentDeal, route: room.host.route, dealCost: room.host.dealCost });
    } catch (e) {
      this.store.set({ phase: 'failed', error: `${(e as Error).name}: ${(e as Error).message}` });
    }
  }

  /**
   * The room: the one of before the reload when there was one (same id, taken back with its signaling token,
   * or waited for up to ROOM_ID_WAIT_MS), else a new one; a new one after a reload is said, so the person shares the new link.
   */
  private async openRoom(open: (resume: RoomRecord | undefined) => Promise<HostRoom>): Promise<HostRoom> {
    const resume = this.opts.resume;
    if (!resume) return open(undefined);
    try {
      const room = await open(resume);
      this.store.set({ restored: { sameRoom: true, text: 'Room restored after the reload: same invite link; guests rejoin by themselves and keep their layers.' } });
      this.log('Room restored after a reload');
      return room;
    } catch (e) {
      if (!(e instanceof PeerIdTakenError)) throw e;
      clearRoomRecord();
      const room = await open(undefined);
      this.store.set({ restored: { sameRoom: false, text: `The room's old link was still held by the signaling server after ${ROOM_ID_WAIT_MS / 1000} s, so this is a new room: share the new invite link with the guests.` } });
      this.log('New room: the old room id was still held');
      return room;
    }
  }

  /** Keep this room for a reload of the tab (room-record.ts): only a model chosen by URL can be re-opened without the person. */
  private keepRoom(room: HostRoom, deal?: { entries: DealEntry[]; ctx: number; manual?: boolean }): void {
    const { choice } = this.opts;
    if (choice.kind !== 'url' || this.closing) return;
    const kept = deal ?? this.keptDeal;
    this.keptDeal = kept;
    try {
      saveRoomRecord({
        roomId: room.roomId, peerToken: room.peerToken, model: { id: choice.id, url: choice.url, name: choice.name },
        ...(this.opts.ctx !== undefined ? { ctx: this.opts.ctx } : {}), ...(this.opts.memoryBudgetBytes ? { memoryBudgetBytes: this.opts.memoryBudgetBytes } : {}),
        ...(kept ? { deal: kept } : {}),
      });
    } catch { /* a record past its bounds (a room of very many devices): that room does not survive a reload */ }
  }

  /**
   * The record says when this page went away (room-record.ts leftAt): a reload re-opens the room only then.
   * `freeze` comes before a phone discards a background tab (no pagehide then); `resume`/`pageshow` undo it.
   */
  private watchPageLeaving(): void {
    if (typeof addEventListener !== 'function') return;
    const left = () => markRoomLeft(true);
    const back = () => markRoomLeft(false);
    addEventListener('pagehide', left);
    addEventListener('pageshow', back);
    document.addEventListener('freeze', left);
    document.addEventListener('resume', back);
  }

  /** Devices that read the prompt: those holding layers in the deal in effect. */
  private layerHolders(): string[] {
    return this.state.deal.filter((d) => d.range[1] > d.range[0]).map((d) => d.deviceId);
  }

    private async generate(prompt: readonly number[], o: GenerateOptions): Promise<GenerationResult> {
    const room = this.room!;
    this.store.set({ generating: true });
    const live = new LiveSpeed((tps) => this.store.set({ tokensPerSecond: tps }));
    const byDevice = new PrefillByDevice();
    const stopRows = room.host.on((e) => {
      if (e.type !== 'rows' || !byDevice.reading) return;
      byDevice.rows(e.deviceIds, e.rows);
      const snap = byDevice.snapshot(this.layerHolders());
      if (snap) this.store.set({ prefill: { done: snap.done, total: snap.total }, prefillDevices: snap.devices });
    });
    let drafting = false;
    try {
      const drafter = this.state.speculation ? this.drafts?.begin() : undefined;
      if (drafter) drafting = true;
      const speculate = drafter ? { speculate: { drafter } } : {};
      const result = await room.host.generate(prompt, {
        ...o, ...speculate,
        onPrefill: (done, total) => {
          byDevice.request(done, total);
          // One source: the chat shows what every card's count agrees on (prefill-progress.ts).
          const snap = byDevice.snapshot(this.layerHolders());
          this.store.set({ prefill: snap && done < total ? { done: snap.done, total } : undefined, prefillDevices: snap?.devices });
          o.onPrefill?.(done, total);
        },
        onToken: (id, soFar) => { live.token(); o.onToken?.(id, soFar); },
      });
      if (result.stats.decodeTokensPerSecond > 0) this.store.set({ tokensPerSecond: result.stats.decodeTokensPerSecond });
      if (result.note) this.log(result.note);
      return result;
    } finally {
      if (drafting) this.drafts!.end();
      stopRows();
      this.store.set({ generating: false, prefill: undefined, prefillDevices: undefined, devices: room.host.deviceList() });
    }
  }

  /** Speculation on or off from the next answer on. */
  setSpeculation(on: boolean): void {
    if (on === this.state.speculation) return;
    this.store.set({ speculation: on });
    this.log(on ? 'Speculative decoding on' : 'Speculative decoding off');
  }

  /**
   * Draft with the model `choice` from the next answer on (a Hugging Face id, URL, /path or "tiny"),
   * checked against the target's tokenizer first. Resolves once it is in effect or failed (draftError).
   */
  async loadDraft(choice: string): Promise<void> {
    if (!choice.trim()) return;
    await this.drafts?.load(choice);
  }

  /**
   * The draft model's bytes stay out of the deal: the host's share of layers is dealt from what is left
   * (a re-deal when that changes it). When the room's layers no longer fit, the draft model goes.
   */
  private reserveForDraft(room: HostRoom, bytes: number): void {
    try {
      room.host.reserveHostMemory(bytes).catch((e: Error) => this.store.set({ error: `${e.name}: ${e.message}` }));
    } catch (e) {
      this.drafts?.useLookup();
      const mb = (bytes / 2 ** 20).toFixed(0);
      this.store.set({ draftError: `${(e as Error).name}: the draft model's ${mb} MiB would leave too little memory for the model's layers (${(e as Error).message})` });
      this.log(`Draft model dropped: it does not fit beside the host's layers`);
    }
  }

  /** Back to prompt-lookup drafts; the draft model's engine is disposed. */
  useLookupDrafts(): void {
    if (this.state.draft.kind !== 'lookup') this.log('Drafts from prompt lookup');
    this.drafts?.useLookup();
  }

  redeal(): void {
    void this.room?.host.redeal().catch((e: Error) => this.store.set({ error: `${e.name}: ${e.message}` }));
  }

  /**
   * Apply an expert's deal (validated first: throws DealError synchronously for a bad one, so the editor
   * can show it inline), or go back to the automatic deal with null. Loading errors land in `error`.
   */
  setManualDeal(entries: DealEntry[] | null): void {
    const room = this.room;
    if (!room) return;
    const done = room.host.setManualDeal(entries);   // validates before anything changes
    this.store.set({ manualDeal: entries, error: undefined });
    this.log(entries ? 'Manual deal applied' : 'Back to the automatic deal');
    void done.catch((e: Error) => this.store.set({ error: `${e.name}: ${e.message}` }));
  }

  /**
   * "Split anyway": deal by memory alone, so guests the automatic deal left standing by (a split would
   * be slower) get layers. It is a manual deal: "Back to automatic" undoes it.
   */
  splitAnyway(): void {
    const { config, dealCost, devices, deal } = this.state;
    const note = standByNote(config, dealCost, devices, deal);
    if (!note?.split) return;
    this.setManualDeal(note.split);
    this.log(`Split anyway: layers dealt by memory alone (${note.names.join(', ')} now ${note.names.length === 1 ? 'holds' : 'hold'} layers; expected ${factorText(note.factor)} the speed)`);
  }

  /** Whether the manual deal is in effect: the room keeps it only while every device it names is present. */
  get manualInEffect(): boolean {
    const { manualDeal, devices } = this.state;
    return !!manualDeal && manualDeal.every((e) => devices.some((d) => d.id === e.deviceId && d.status !== 'left'));
  }

  remove(deviceId: string): void {
    try {
      this.room?.host.remove(deviceId);
    } catch (e) {
      this.store.set({ error: `${(e as Error).name}: ${(e as Error).message}` });
    }
  }

  private log(line: string): void {
    this.store.set({ events: [...this.state.events.slice(-19), line] });
  }

  /** Close room: the guests are told goodbye (they stop), and a reload no longer re-opens it. */
  async close(): Promise<void> {
    this.api?.close();
    this.closing = true;
    clearRoomRecord();
    await this.drafts?.close();
    await this.room?.close();
  }
}

/**
 * The decode speed while an answer streams: tokens after the first over the time since the first (so
 * the prefill is not counted), shown at most every 250 ms and only once there is a measurement.
 */
export class LiveSpeed {
  private first = 0;
  private tokens = 0;
  private shownAt = 0;

  constructor(private readonly show: (tokensPerSecond: number) => void, private readonly now = () => performance.now()) {}

  token(): void {
    const t = this.now();
    if (this.tokens++ === 0) {
      this.first = t;
      return;
    }
    if (t - this.shownAt < 250 || t <= this.first) return;
    this.shownAt = t;
    this.show((this.tokens - 1) / ((t - this.first) / 1000));
  }
}

/** The model id the endpoint lists: the model's id (a URL choice) or its folder's name, as one printable line. */
export function apiModelId(choice: ModelChoice): string {
  const raw = choice.kind === 'url' ? choice.id : choice.name;
  return raw.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 256) || 'pooled-model';
}

/** The meter's note for a room's context: only when it holds less than the context wanted (else the meter's count says enough). */
export function contextNoteFor(c: RoomContext): string | undefined {
  return c.ctx < c.want ? contextNote(c) : undefined;
}
