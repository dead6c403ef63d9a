// A guest whose host went away without a goodbye (its tab reloaded, its network blinked) tries to join the
// same room again by itself, with a bounded backoff, keeping its loaded layers: the host re-opens the same
// room id after a reload (src/app/room-record.ts) and deals again, and a guest dealt the same layers keeps
// its engine (guest.ts `assign`). A goodbye is final: "the host closed the room" (its Close room) or
// "removed by the host" end the guest's part without a retry.
//
//   connected ──host lost, no goodbye──▶ reconnecting ──attempt succeeds──▶ connected (rejoined)
//       │                                     │ attempt fails: wait 0.5 s, 1 s, 2 s … 5 s, try again
//       │                                     └─ 2 min since the loss ──▶ gave-up
//       └──goodbye (closed / removed)──▶ closed            (leave() ──▶ stopped, from any state)

export type ReconnectState =
  | { kind: 'connected'; rejoined: number }
  | { kind: 'reconnecting'; why: string; attempt: number; since: number; lastError?: string }
  | { kind: 'closed'; reason: string }
  | { kind: 'gave-up'; why: string; attempts: number; lastError?: string }
  | { kind: 'stopped' };

export const RECONNECT_LIMITS = {
  /** The wait after the first failed attempt; it doubles up to maxDelayMs. */
  firstDelayMs: 500,
  maxDelayMs: 5000,
  /** Since the host was lost: past this, no more attempts (a host that closed its tab never comes back). */
  giveUpMs: 120_000,
} as const;

export interface ReconnectClock {
  now(): number;
  wait(ms: number): Promise<void>;
}

const realClock: ReconnectClock = { now: () => performance.now(), wait: (ms) => new Promise((r) => setTimeout(r, ms)) };

export interface ReconnectOptions {
  /** One attempt to join the same room again: resolves once connected (the guest said hello), rejects otherwise. */
  connect: () => Promise<void>;
  onState: (s: ReconnectState) => void;
  clock?: ReconnectClock;
  limits?: Partial<{ firstDelayMs: number; maxDelayMs: number; giveUpMs: number }>;
}

export class HostReconnect {
  private current: ReconnectState = { kind: 'connected', rejoined: 0 };
  private readonly clock: ReconnectClock;
  private readonly limits: { firstDelayMs: number; maxDelayMs: number; giveUpMs: number };
  /** Bumped on every change of course (a goodbye, leave): a loop that sees another value stops. */
  private run = 0;

  constructor(private readonly opts: ReconnectOptions) {
    this.clock = opts.clock ?? realClock;
    this.limits = { ...RECONNECT_LIMITS, ...opts.limits };
  }

  get state(): ReconnectState { return this.current; }

  private set(s: ReconnectState): void {
    this.current = s;
    this.opts.onState(s);
  }

  /** The channel to the host closed without a goodbye: start trying again (once; a loss while trying is the same loss). */
  hostLost(why: string): void {
    if (this.current.kind !== 'connected') return;
    const rejoined = this.current.rejoined;
    const run = ++this.run;
    const since = this.clock.now();
    this.set({ kind: 'reconnecting', why, attempt: 0, since });
    void this.loop(run, why, since, rejoined);
  }

  /** The host said goodbye: final, whatever is under way. */
  goodbye(reason: string): void {
    if (this.current.kind === 'stopped') return;
    this.run++;
    this.set({ kind: 'closed', reason });
  }

  /** This device left: nothing more is tried. */
  stop(): void {
    this.run++;
    this.set({ kind: 'stopped' });
  }

  private async loop(run: number, why: string, since: number, rejoined: number): Promise<void> {
    let delay: number = this.limits.firstDelayMs;
    let lastError: string | undefined;
    for (let attempt = 1; ; attempt++) {
      if (run !== this.run) return;
      this.set({ kind: 'reconnecting', why, attempt, since, ...(lastError ? { lastError } : {}) });
      try {
        await this.opts.connect();
        if (run !== this.run) return;
        this.set({ kind: 'connected', rejoined: rejoined + 1 });
        return;
      } catch (e) {
        lastError = `${(e as Error).name}: ${(e as Error).message}`;
      }
      if (run !== this.run) return;
      if (this.clock.now() - since + delay > this.limits.giveUpMs) {
        this.set({ kind: 'gave-up', why, attempts: attempt, lastError });
        return;
      }
      await this.clock.wait(delay);
      delay = Math.min(delay * 2, this.limits.maxDelayMs);
    }
  }
}
