// The host tabs that serve a room's model right now, by key digest, and the digests of the last few
// that closed: a client whose host tab closed is told so (503 with a reason), not that its key is wrong.
// In memory only: a restarted server knows no keys until the host tabs reconnect.
import { sameDigest, type KeyDigest } from './auth.ts';
import type { HostConnection } from './host-connection.ts';

export type HostLookup =
  | { state: 'live'; host: HostConnection }
  | { state: 'closed' }
  | { state: 'unknown' };

export class HostRegistry {
  private readonly live = new Map<KeyDigest, HostConnection>();
  /** Oldest first; at most `rememberClosed`. */
  private readonly closed: KeyDigest[] = [];

  constructor(readonly maxHosts: number, readonly rememberClosed: number) {}

  get size(): number { return this.live.size; }

  find(digest: KeyDigest): HostLookup {
    const host = this.live.get(digest);
    if (host && sameDigest(host.digest, digest)) return { state: 'live', host };
    return this.closed.some((d) => sameDigest(d, digest)) ? { state: 'closed' } : { state: 'unknown' };
  }

  /** Registers a host that said hello; returns why not when its key is held or the server is full. */
  add(host: HostConnection): string | null {
    if (this.live.has(host.digest)) return 'this key is already served by another open host tab';
    if (this.live.size >= this.maxHosts) return `the server serves ${this.maxHosts} host tabs already`;
    this.live.set(host.digest, host);
    const i = this.closed.indexOf(host.digest);
    if (i >= 0) this.closed.splice(i, 1);
    return null;
  }

  /** Forgets a host whose socket closed, and remembers its key as closed (not when the tab replaced its key: that one is dead). */
  remove(host: HostConnection, o: { remember: boolean } = { remember: true }): void {
    if (this.live.get(host.digest) !== host) return;
    this.live.delete(host.digest);
    if (!o.remember) return;
    this.closed.push(host.digest);
    if (this.closed.length > this.rememberClosed) this.closed.shift();
  }

  all(): HostConnection[] { return [...this.live.values()]; }
}
