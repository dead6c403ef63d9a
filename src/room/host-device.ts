// What the host knows about one device (itself included): capabilities, dealt range, load progress and
// where its bytes came from, link health, and the per-deal "ready" promise the host waits on.
import type { LayerRange } from '../model/engine-types.ts';
import type { DeviceCaps, FrameOf } from './protocol.ts';
import type { RemoteLayerEngine } from './remote-engine.ts';
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
  error: string | undefined;
  remote: RemoteLayerEngine | null = null;
  private epoch = -1;
  private settle: { resolve: () => void; reject: (e: Error) => void } | null = null;

  constructor(readonly id: string, readonly name: string, readonly caps: DeviceCaps, public channel: FrameChannel | null) {}

  /** A new deal: returns a promise that resolves when this device reports ready for `epoch`. */
  startLoad(epoch: number, range: LayerRange): Promise<void> {
    this.settle?.reject(new Error('superseded by a new deal'));
    this.epoch = epoch;
    this.range = range;
    this.status = 'loading';
    this.bytesDone = 0; this.bytesTotal = 0; this.networkBytes = 0; this.cacheBytes = 0;
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
    if (f.kind === 'progress') { this.bytesDone = f.bytesDone; this.bytesTotal = f.bytesTotal; return; }
    this.bytesDone = this.bytesTotal;
    this.status = 'ready';
    this.settle?.resolve();
    this.settle = null;
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
    };
    if (this.error) i.error = this.error;
    return i;
  }
}
