// What the host knows about one device (itself included): capabilities, dealt range, load progress and
// where its bytes came from, link health, and the per-deal "ready" promise the host waits on.
import type { LayerRange } from '../model/engine-types.ts';
import type { DeviceCaps, FrameOf } from './protocol.ts';
import type { ReadRation } from './peer-source.ts';
import type { ChainEngine } from './chain-engine.ts';
import type { FrameChannel } from './wire.ts';

export type DeviceStatus = 'joining' | 'loading' | 'ready' | 'failed' | 'left';

/** A plain snapshot for the UI and tests. */
export interface DeviceInfo {
  id: string;
  name: string;
  isHost: boolean;
  status: DeviceStatus;
  caps: DeviceCaps;
  range: LayerRange;
  bytesDone: number;
  bytesTotal: number;
  networkBytes: number;        // bytes this device loaded over the network (or from the host) for the current deal
  cacheBytes: number;          // bytes it served from its own cache
  rttMs: number;               // last heartbeat round trip (guests)
  badFrames: number;
  tokensPerSecond: number;     // how fast its layers ran this deal, as the host saw it (network included)
  snapshotBytes: number;       // one checkpoint snapshot of its Gated DeltaNet layers' state (0: none held)
  snapshots: number;           // snapshots it keeps now (the pinned checkpoint and the answer checkpoints)
  error?: string;
}

export class HostDevice {
  status: DeviceStatus = 'joining';
  range: LayerRange = [0, 0];
  bytesDone = 0;
  bytesTotal = 0;
  networkBytes = 0;
  cacheBytes = 0;
  rttMs = 0;
  badFrames = 0;
  lastSeen = 0;
  /** When the current load started, and when its progress last moved (a guest must keep it moving). */
  loadStartedAt = 0;
  loadMovedAt = 0;
  /** How long this load may take in all, whatever progress it reports (load-deadline.ts; set by the deal). */
  loadDeadlineMs = Infinity;
  private tensorsDone = 0;
  /** This guest's model reads from the host (made on its first read). */
  reads: ReadRation | null = null;
  error: string | undefined;
  /** The chain of guests this device runs in (this deal), once every device is ready. */
  chain: ChainEngine | null = null;
  private epoch = -1;
  private settle: { resolve: () => void; reject: (e: Error) => void } | null = null;

  constructor(readonly id: string, readonly name: string, readonly caps: DeviceCaps, public channel: FrameChannel | null) {}

  /** A new deal: returns a promise that resolves when this device reports ready for `epoch`. */
  startLoad(epoch: number, range: LayerRange): Promise<void> {
    this.settle?.reject(new Error('superseded by a new deal'));
    this.epoch = epoch;
    this.range = range;
    this.status = 'loading';
    this.bytesDone = 0; this.bytesTotal = 0; this.networkBytes = 0; this.cacheBytes = 0; this.tensorsDone = 0;
    this.loadStartedAt = this.loadMovedAt = performance.now();
    this.error = undefined;
    const p = new Promise<void>((resolve, reject) => { this.settle = { resolve, reject }; });
    p.catch(() => undefined); // a superseded deal's promise may never be awaited
    return p;
  }

  /** A newer deal was asked for: stop waiting on this one (its loads may still finish; they are ignored). */
  supersede(): void {
    this.settle?.reject(new Error('superseded by a new deal'));
    this.settle = null;
  }

  onLoadFrame(f: FrameOf<'progress'> | FrameOf<'ready'>): void {
    if (f.epoch !== this.epoch) return;
    this.networkBytes = f.networkBytes;
    this.cacheBytes = f.cacheBytes;
    if (f.kind === 'progress') {
      if (f.bytesDone > this.bytesDone || f.tensorsDone > this.tensorsDone) this.loadMovedAt = performance.now();
      this.bytesDone = f.bytesDone; this.bytesTotal = f.bytesTotal; this.tensorsDone = f.tensorsDone;
      return;
    }
    this.bytesDone = this.bytesTotal;
    this.status = 'ready';
    this.settle?.resolve();
    this.settle = null;
  }

  /** The host itself was blocked until `since`: silence and stalled loading before then prove nothing. */
  freshWindow(since: number): void {
    this.lastSeen = Math.max(this.lastSeen, since);
    this.loadMovedAt = Math.max(this.loadMovedAt, since);
  }

  /**
   * Whether a guest must go: silent (a ready device that stopped answering: gone) or misbehaving (a
   * loading device whose progress stopped moving, or that takes too long in all: it may answer
   * heartbeats and never load). Only a device that should be answering is judged by silence: one still
   * loading may be busy decoding its weights (a closed tab is still caught by its goodbye, the channel's
   * state and the signaling server).
   */
  judge(now: number, limits: { silenceMs: number; loadStallMs: number; loadTimeoutMs: number }): { why: string; silent: boolean } | null {
    if (this.status === 'ready' && now - this.lastSeen > limits.silenceMs) return { why: `no answer for ${Math.round(now - this.lastSeen)} ms`, silent: true };
    if (this.status !== 'loading') return null;
    const still = now - this.loadMovedAt, total = now - this.loadStartedAt;
    if (still > limits.loadStallMs) return { why: `no loading progress for ${Math.round(still)} ms`, silent: false };
    if (total > limits.loadTimeoutMs) return { why: `still loading after ${Math.round(total / 1000)} s`, silent: false };
    if (total > this.loadDeadlineMs) return { why: `still loading after ${(total / 1000).toFixed(1)} s, past its load deadline of ${(this.loadDeadlineMs / 1000).toFixed(1)} s for its share`, silent: false };
    return null;
  }

  loadFailed(e: Error): void {
    if (this.status !== 'left') this.status = 'failed';
    this.error = e.message;
    this.settle?.reject(e);
    this.settle = null;
  }

  info(): DeviceInfo {
    const i: DeviceInfo = {
      id: this.id, name: this.name, isHost: this.channel === null && this.id === 'host', status: this.status, caps: this.caps,
      range: [...this.range] as LayerRange, bytesDone: this.bytesDone, bytesTotal: this.bytesTotal,
      networkBytes: this.networkBytes, cacheBytes: this.cacheBytes, rttMs: this.rttMs, badFrames: this.badFrames, tokensPerSecond: 0,
      snapshotBytes: 0, snapshots: 0,
    };
    if (this.error) i.error = this.error;
    return i;
  }
}
