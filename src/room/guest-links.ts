// A guest's direct channels to its pipeline neighbours (direct hops): the one it opens to its next
// device, and the ones other guests open to it. Who may open one is the transport's business (PeerJS:
// only peers of this room, the signaling server vouching for the id); which of them may send is the
// guest's (only its current previous device, guest.ts). Bounded: one outgoing channel at a time and at
// most MAX_INCOMING incoming ones (the oldest goes first, never the current previous device's, so a
// peer opening channels in a loop cannot cut the chain).
import { HopError } from './errors.ts';
import type { Frame } from './protocol.ts';
import { FrameChannel, type MessageLink } from './wire.ts';

/** Open a message link to the guest `deviceId` of this room (PeerJS in the browser, memory in tests). */
export type DialFn = (deviceId: string, signal: AbortSignal) => Promise<MessageLink>;

export const MAX_INCOMING = 4;

export interface NeighbourEvents {
  /** A frame on a channel from/to `peer` (validated by the decoder; its meaning is the guest's to judge). */
  onFrame(peer: string, f: Frame, ch: FrameChannel): void;
  onBadFrame(peer: string, e: Error): void;
  /** A channel to or from `peer` closed. */
  onClose(peer: string, direction: 'in' | 'out', why: string): void;
}

export class NeighbourLinks {
  private readonly incoming = new Map<string, FrameChannel>();   // insertion order = age
  private out: { peer: string; ch: FrameChannel } | null = null;
  private dialing: { peer: string; done: Promise<FrameChannel>; abort: AbortController } | null = null;

  constructor(private readonly events: NeighbourEvents, private readonly dial: DialFn | undefined, private readonly dialTimeoutMs = 8000) {}

  /** A channel another guest opened to us (its identity vouched for by the transport); `keep`: the current previous device. */
  accept(link: MessageLink, peer: string, keep = ''): void {
    this.incoming.get(peer)?.close();
    this.incoming.delete(peer);
    while (this.incoming.size >= MAX_INCOMING) {
      const [oldest, ch] = [...this.incoming].find(([id]) => id !== keep)!;
      this.incoming.delete(oldest);
      ch.close();
    }
    const ch = this.wrap(link, peer, 'in');
    this.incoming.set(peer, ch);
  }

  private wrap(link: MessageLink, peer: string, direction: 'in' | 'out'): FrameChannel {
    const ch = new FrameChannel(link);
    ch.onFrame = (f) => this.events.onFrame(peer, f, ch);
    ch.onBadFrame = (e) => this.events.onBadFrame(peer, e);
    ch.onClose = (why) => {
      if (direction === 'in' && this.incoming.get(peer) === ch) this.incoming.delete(peer);
      if (direction === 'out' && this.out?.ch === ch) this.out = null;
      this.events.onClose(peer, direction, why);
    };
    return ch;
  }

  /** Whether `peer` has an open channel to us. */
  hasIncoming(peer: string): boolean { return this.incoming.get(peer)?.isOpen() ?? false; }

  /** The open channel to the next device `peer`, or null. */
  next(peer: string): FrameChannel | null {
    return this.out && this.out.peer === peer && this.out.ch.isOpen() ? this.out.ch : null;
  }

  /**
   * A channel to `peer` as the next device: the open one, or a new one (the previous outgoing channel, to
   * another device, is closed). Rejects with a HopError naming the device when it cannot be opened in time.
   */
  connect(peer: string, peerName = peer): Promise<FrameChannel> {
    const open = this.next(peer);
    if (open) return Promise.resolve(open);
    if (this.dialing?.peer === peer) return this.dialing.done;
    this.dialing?.abort.abort();
    if (this.out) { const old = this.out.ch; this.out = null; old.close(); }
    const dial = this.dial;
    if (!dial) return Promise.reject(new HopError(`no direct channel to device "${peerName}": this device cannot open one`));
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.dialTimeoutMs);
    const done = (async () => {
      let link: MessageLink;
      try {
        link = await Promise.race([
          dial(peer, abort.signal),
          new Promise<never>((_, reject) => abort.signal.addEventListener('abort', () => reject(new Error(`not open after ${this.dialTimeoutMs} ms`)), { once: true })),
        ]);
      } catch (e) {
        throw new HopError(`could not open a direct channel to device "${peerName}": ${(e as Error).message}`);
      } finally {
        clearTimeout(timer);
        if (this.dialing?.abort === abort) this.dialing = null;
      }
      if (abort.signal.aborted) { link.close(); throw new HopError(`the channel to device "${peerName}" is no longer wanted`); }
      const ch = this.wrap(link, peer, 'out');
      this.out = { peer, ch };
      return ch;
    })();
    done.catch(() => undefined);
    this.dialing = { peer, done, abort };
    return done;
  }

  /** Close the outgoing channel unless it goes to `keepNext`, and stop any dial elsewhere. */
  keepOnly(keepNext: string): void {
    if (this.dialing && this.dialing.peer !== keepNext) { this.dialing.abort.abort(); this.dialing = null; }
    if (this.out && this.out.peer !== keepNext) { const old = this.out.ch; this.out = null; old.close(); }
  }

  closeAll(): void {
    this.dialing?.abort.abort();
    this.dialing = null;
    this.out?.ch.close();
    this.out = null;
    for (const ch of this.incoming.values()) ch.close();
    this.incoming.clear();
  }
}
