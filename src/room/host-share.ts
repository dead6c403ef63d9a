// The host's own share of the model (host.ts): its layers plus the embedding and head in one engine, loaded
// for each deal (kept, its KV cut back, when its range and context are unchanged) and reported as the host device's load.
// Kept apart so host.ts stays about the room.
import type { LayerEngine } from '../model/engine-types.ts';
import type { LoadProgress } from '../model/types.ts';
import type { HostDevice } from './host-device.ts';
import type { HostOptions } from './host-types.ts';
import { shareLoaderOf } from './share-loader.ts';
import { CachingSource } from './weight-cache.ts';

/** How often the host's own load progress reaches the room's screen (a guest's comes as throttled frames). */
export const PROGRESS_SHOW_MS = 200;

export class HostShare {
  /** The host's engine for the latest deal it finished loading (null before the first). */
  engine: LayerEngine | null = null;
  private range: [number, number] | null = null;
  private ctx = 0;
  private step: number | undefined = undefined;

  constructor(private readonly opts: HostOptions, private readonly host: HostDevice) {}

  /**
   * Load `range` for deal `epoch`: the host device hears its progress and ready, or the failure; a deal
   * superseded meanwhile (`currentEpoch`) keeps the old engine. `changed` runs as progress arrives (at most every
   * PROGRESS_SHOW_MS, so the host's own card moves like a guest's) and at the end either way.
   */
  async load(epoch: number, range: [number, number], ctx: number, step: number | undefined, currentEpoch: () => number, changed: () => void): Promise<void> {
    const h = this.host;
    try {
      if (this.engine && this.range && this.range[0] === range[0] && this.range[1] === range[1] && this.ctx === ctx && this.step === step) {
        await this.engine.truncate(0);
        h.onLoadFrame({ kind: 'ready', epoch, networkBytes: 0, cacheBytes: 0, ms: 0 });
        return;
      }
      const t0 = performance.now();
      let shownAt = -Infinity;
      const source = new CachingSource(this.opts.source, this.opts.store, this.opts.modelKey);
      const request = {
        layers: range, embedding: true, head: true,
        onProgress: (p: LoadProgress) => {
          h.onLoadFrame({ kind: 'progress', epoch, ...p, ...source.counts });
          const now = performance.now();
          if (now - shownAt >= PROGRESS_SHOW_MS) { shownAt = now; changed(); }
        },
      };
      const kv = this.opts.kv ? { kv: this.opts.kv } : {};
      const dealtStep = step !== undefined ? { step } : {};
      // A share read on this thread frees the old engine before the new one is made (never two in memory);
      // a worker's share is whole before the old one goes.
      const beforeCreate = async () => {
        if (epoch !== currentEpoch()) return false;
        await this.engine?.dispose();
        this.engine = null;
        return true;
      };
      const share = await shareLoaderOf(this.opts)({ model: this.opts.modelUrl, modelKey: this.opts.modelKey, source, request, ctx, ...kv, ...dealtStep, beforeCreate });
      if (!share) return;
      if (epoch !== currentEpoch()) { await share.engine.dispose(); return; }
      await this.engine?.dispose();
      const engine = share.engine, extra = share.counts;
      this.engine = engine;
      this.range = range;
      this.ctx = ctx;
      this.step = step;
      h.onLoadFrame({ kind: 'ready', epoch, networkBytes: source.counts.networkBytes + extra.networkBytes, cacheBytes: source.counts.cacheBytes + extra.cacheBytes, ms: performance.now() - t0 });
    } catch (e) {
      h.loadFailed(e as Error);
    } finally {
      changed();
    }
  }
}
