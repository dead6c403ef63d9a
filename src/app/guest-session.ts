// Joining a room from the app (src/room joinRoom): what this device does — its layers of the model,
// memory, load progress, status — and a screen Wake Lock while it computes, so a phone keeps working.
import { readModelConfig } from '../model/config.ts';
import type { LayerRange } from '../model/engine-types.ts';
import type { EngineKind, EngineOptions } from '../engines/contract.ts';
import { PAGE_ENGINES } from '../engines/page-engines.ts';
import { joinRoom, type GuestRoom } from '../room/api.ts';
import { loadSignalingConfig } from './deploy-config.ts';
import type { DeviceCaps } from '../room/protocol.ts';
import { Store } from './store.ts';
import { offerOf, saveMemoryOffer, savedMemoryOffer } from './memory-budget.ts';
import { platformOf, suggestedOffer, type OfferSuggestion } from '../room/capabilities.ts';
import type { ModelConfig } from '../model/types.ts';
import { layerCacheBytes } from '../room/device-bytes.ts';
import { HostReconnect, RECONNECT_LIMITS, type ReconnectState } from '../room/guest-reconnect.ts';

export type GuestStatus = 'connecting' | 'waiting' | 'loading' | 'ready' | 'computing' | 'reconnecting' | 'gone';

export interface GuestState {
  status: GuestStatus;
  roomId: string;
  name: string;
  caps?: DeviceCaps;
  range: LayerRange;
  numLayers?: number;
  bytesDone: number;
  bytesTotal: number;
  tokensPerSecond: number;     // tokens a second through this device's layers this deal: the host's card shows the same (RoomGuest.speedThisDeal)
  wakeLock: 'off' | 'held' | 'refused' | 'unsupported';
  /** While the host is away without a goodbye (its page reloading): this device tries the same room again by itself. */
  reconnect?: { attempt: number; since: number; giveUpMs: number; lastError?: string };
  /** How many times this device came back to the room by itself. */
  rejoined: number;
  why?: string;                // why the device is gone
  joinFailed?: boolean;        // it never joined: `why` is the error ("JoinError: …")
  error?: string;
  /** The model's config, once read (for the layer bar and what the share needs). */
  config?: ModelConfig;
  /** The context the host dealt at (its layers' KV cache holds this many tokens). */
  ctx?: number;
  /**
   * Ask the memory offer once on this device: nothing given (?mem=) and no figure of the user's kept in
   * this browser, so it joined with the suggestion; answering keeps the figure (memory-budget.ts).
   */
  askOffer: boolean;
  /** The suggested offer and why (what the question is filled in with). */
  suggestion: OfferSuggestion;
}

interface WakeLockSentinelLike { release(): Promise<void>; released: boolean }

const IDLE_MS = 2000;

export class GuestSession {
  readonly store: Store<GuestState>;
  private room?: GuestRoom;
  private timer: ReturnType<typeof setInterval> | undefined;
  private lastForwards = 0;
  private lastForwardAt = 0;
  private lock: WakeLockSentinelLike | null = null;
  private reconnect?: HostReconnect;

  constructor(readonly roomId: string, private readonly opts: { name?: string; engine?: EngineKind; engineOptions?: EngineOptions; speed?: number; memoryBudgetBytes?: number } = {}) {
    this.store = new Store<GuestState>({
      status: 'connecting', roomId, name: opts.name ?? '', rejoined: 0, range: [0, 0], bytesDone: 0, bytesTotal: 0, tokensPerSecond: 0,
      wakeLock: 'wakeLock' in navigator ? 'off' : 'unsupported',
      askOffer: !opts.memoryBudgetBytes && savedMemoryOffer() === undefined,
      suggestion: suggestedOffer({ deviceMemoryGiB: (navigator as { deviceMemory?: number }).deviceMemory ?? 0, platform: platformOf(navigator) }),
    });
  }

  get state(): GuestState {
    return this.store.state;
  }

  async join(): Promise<void> {
    try {
      const signaling = await loadSignalingConfig();
      const room = await joinRoom(this.roomId, {
        signaling,
        ...(this.opts.name ? { name: this.opts.name } : {}), engines: PAGE_ENGINES, ...(this.opts.engine ? { engine: this.opts.engine } : {}),
        ...(this.opts.engineOptions ? { engineOptions: this.opts.engineOptions } : {}),
        ...(this.opts.speed ? { speed: this.opts.speed } : {}),
        ...offerOf(this.opts.memoryBudgetBytes),
        // Learn the model's layer count from the same (cached) source, for the layer bar.
        beforeLoad: async (source) => {
          if (this.state.numLayers !== undefined) return;
          const { config } = await readModelConfig(source);
          this.store.set({ numLayers: config.numLayers, config });
        },
      });
      this.room = room;
      this.store.set({ status: 'waiting', name: room.guest.opts.name, caps: room.guest.opts.caps });
      this.reconnect = new HostReconnect({ connect: () => room.reconnect(), onState: (r) => this.onReconnect(r) });
      room.guest.on((e) => {
        switch (e.type) {
          case 'assigned': {
            // The same share again (a rejoin after the host's reload): the engine is kept, nothing loads, so its bytes stand.
            const same = e.range[0] === this.state.range[0] && e.range[1] === this.state.range[1] && e.ctx === this.state.ctx;
            this.store.set({ status: 'loading', range: e.range, ctx: e.ctx, ...(same ? {} : { bytesDone: 0, bytesTotal: 0 }) });
            break;
          }
          case 'progress': this.store.set({ bytesDone: e.bytesDone, bytesTotal: e.bytesTotal }); break;
          case 'ready': this.store.set({ status: 'ready', range: e.range, bytesDone: Math.max(this.state.bytesTotal, this.state.bytesDone) }); break;
          case 'removed': this.reconnect?.goodbye(e.reason); this.gone(removedWhy(e.reason)); break;
          // No goodbye: the host's page reloads (or its tab closed): try the same room again, layers kept.
          case 'host-lost': this.reconnect?.hostLost(e.why); break;
          case 'error': this.store.set({ error: e.error.message }); break;
          default: break;
        }
      });
      this.timer = setInterval(() => this.watchCompute(), 500);
      document.addEventListener('visibilitychange', this.onVisible);
    } catch (e) {
      this.gone(`${(e as Error).name}: ${(e as Error).message}`, true);
    }
  }

  /** The reconnect's course on this page: reconnecting (with its attempt), back in the room, or gone after the bound. */
  private onReconnect(r: ReconnectState): void {
    if (r.kind === 'reconnecting') {
      void this.releaseWakeLock();
      this.store.set({ status: 'reconnecting', tokensPerSecond: 0, reconnect: { attempt: r.attempt, since: r.since, giveUpMs: RECONNECT_LIMITS.giveUpMs, ...(r.lastError ? { lastError: r.lastError } : {}) } });
    } else if (r.kind === 'connected') {
      // Back in the room: the host deals again (the same layers, ideally: this device's engine is kept).
      this.store.set({ status: 'waiting', reconnect: undefined, rejoined: r.rejoined });
    } else if (r.kind === 'gave-up') {
      this.store.set({ reconnect: undefined });
      this.gone(`The host did not come back within ${Math.round(RECONNECT_LIMITS.giveUpMs / 60_000)} minutes (${r.attempts} tries): its room is closed.`);
    }
  }

  /** "computing" while forward passes arrive; tok/s from their rate; Wake Lock held meanwhile. */
  private watchCompute(): void {
    const guest = this.room?.guest;
    if (!guest || this.state.status === 'gone' || this.state.status === 'reconnecting') return;
    const now = performance.now();
    const forwards = guest.stats.forwards;
    const delta = forwards - this.lastForwards;
    if (guest.speedThisDeal !== this.state.tokensPerSecond) this.store.set({ tokensPerSecond: guest.speedThisDeal });
    if (delta > 0) {
      this.lastForwardAt = now;
      this.store.set({ status: 'computing' });
      void this.holdWakeLock();
    } else if (this.state.status === 'computing' && now - this.lastForwardAt > IDLE_MS) {
      this.store.set({ status: 'ready' });
      void this.releaseWakeLock();
    }
    this.lastForwards = forwards;
  }

  private readonly onVisible = (): void => {
    // The browser drops a wake lock when the page is hidden; take it again when it comes back.
    if (document.visibilityState === 'visible' && this.state.status === 'computing') void this.holdWakeLock();
  };

  private async holdWakeLock(): Promise<void> {
    const wl = (navigator as { wakeLock?: { request(type: 'screen'): Promise<WakeLockSentinelLike> } }).wakeLock;
    if (!wl || (this.lock && !this.lock.released)) return;
    try {
      this.lock = await wl.request('screen');
      this.store.set({ wakeLock: 'held' });
    } catch {
      this.store.set({ wakeLock: 'refused' });   // e.g. a hidden tab, or battery saver
    }
  }

  private async releaseWakeLock(): Promise<void> {
    const lock = this.lock;
    this.lock = null;
    if (lock && !lock.released) await lock.release().catch(() => undefined);
    if (this.state.wakeLock === 'held') this.store.set({ wakeLock: 'off' });
  }

  /** The user answered the offer question with this figure: kept for this device; asked no more. */
  answerOffer(bytes: number): void {
    saveMemoryOffer(bytes);
    this.store.set({ askOffer: false });
  }

  /** `failed`: joining itself failed (the screen explains the error and offers Retry). */
  private gone(why: string, failed = false): void {
    clearInterval(this.timer);
    void this.releaseWakeLock();
    this.store.set({ status: 'gone', why, joinFailed: failed });
  }

  async leave(): Promise<void> {
    document.removeEventListener('visibilitychange', this.onVisible);
    this.reconnect?.stop();
    await this.room?.leave();
    this.gone('you left the room');
  }
}

/** A goodbye's reason in the guest's words: the host closed the room, or removed this device (and why). */
export function removedWhy(reason: string): string {
  if (/closed the room/.test(reason)) return 'The host closed the room.';
  const m = /^removed by the host(?::\s*(.*))?$/s.exec(reason.trim());
  if (m) return m[1] ? `The host removed this device: ${m[1]}.` : 'The host removed this device from the room.';
  return `The host let this device go: ${reason}.`;
}

/**
 * What the room needs from this device for its share: the layers' weights (the bytes it loads) and their
 * cache at the dealt context (KV for attention layers, state for recurrent ones; f16 KV). Null until the
 * share, the config and the weights' size are known.
 */
export function shareNeeds(s: Pick<GuestState, 'range' | 'config' | 'ctx' | 'bytesTotal'>): { bytes: number; weights: number; cache: number } | null {
  const [a, b] = s.range;
  if (b <= a || !s.config || !s.ctx || s.bytesTotal <= 0) return null;
  let cache = 0;
  for (let i = a; i < b; i++) cache += layerCacheBytes(s.config, i, s.ctx, 0);
  return { bytes: s.bytesTotal + cache, weights: s.bytesTotal, cache };
}
