// The host's copy of each served port's localStorage and sessionStorage (the page's side is
// frame-storage.js). Kept in memory for as long as the preview host lives, per port: a port is the
// page's origin, as on a dev server. A frame opened on the port (serve, the pane's Reload, the page's
// own reload, a link) starts with the current contents in its manifest, so they are there before any
// page script runs.
//
// What a frame reports is untrusted: each change is checked (frame-protocol.ts checks the message's
// shape and size) and an area never grows past its quota, whatever the frame claims; a change that
// would is refused and counted, so a hostile page cannot fill the host's memory.
import { PREVIEW_LIMITS } from './types.ts';

export type StorageAreaName = 'local' | 'session';
export const STORAGE_AREAS: readonly StorageAreaName[] = ['local', 'session'];

/** One Storage's contents: keys and values in insertion order, at most `quota` UTF-16 code units in all. */
export class StorageArea {
  private readonly items = new Map<string, string>();
  private used = 0;

  constructor(readonly quota: number = PREVIEW_LIMITS.storageChars) {}

  /** Code units of keys and values held (what the quota counts). */
  get size(): number {
    return this.used;
  }

  get length(): number {
    return this.items.size;
  }

  get(key: string): string | null {
    return this.items.get(key) ?? null;
  }

  /** Applies a frame's batch of changes (value null: removed); returns how many it refused (over the quota). */
  apply(clear: boolean, changes: readonly (readonly [string, string | null])[]): number {
    if (clear) {
      this.items.clear();
      this.used = 0;
    }
    let refused = 0;
    for (const [key, value] of changes) {
      const old = this.items.get(key);
      const without = this.used - (old === undefined ? 0 : key.length + old.length);
      if (value === null) {
        this.items.delete(key);
        this.used = without;
      } else if (without + key.length + value.length > this.quota) {
        refused++;
      } else {
        this.items.set(key, value);
        this.used = without + key.length + value.length;
      }
    }
    return refused;
  }

  entries(): [string, string][] {
    return [...this.items];
  }
}

/** What a frame's manifest carries: the quota and both areas' contents. */
export interface FrameStorage {
  quota: number;
  local: [string, string][];
  session: [string, string][];
}

/** Every port's two areas. */
export class PreviewStorage {
  private readonly ports = new Map<number, Record<StorageAreaName, StorageArea>>();

  constructor(private readonly quota: number = PREVIEW_LIMITS.storageChars) {}

  area(port: number, name: StorageAreaName): StorageArea {
    let areas = this.ports.get(port);
    if (!areas) {
      areas = { local: new StorageArea(this.quota), session: new StorageArea(this.quota) };
      this.ports.set(port, areas);
    }
    return areas[name];
  }

  snapshot(port: number): FrameStorage {
    return { quota: this.quota, local: this.area(port, 'local').entries(), session: this.area(port, 'session').entries() };
  }
}
