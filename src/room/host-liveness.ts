// Whether the room's guests are still there (host.ts): heartbeats and their deadlines, pings, the probe
// that settles a hint (the signaling server's disconnect relay, a guest's closed direct hop), and what a
// lost hop or a faulty chain means for the next deal. Kept apart so host.ts reads as joins, deals, requests.
import type { ChainEngine } from './chain-engine.ts';
import { DeviceLeftError, HopError, ProtocolError } from './errors.ts';
import type { HostDevice } from './host-device.ts';
import type { HostEvent, HostOptions } from './host-types.ts';
import type { Frame } from './protocol.ts';

/** What the watch reads of the room (RoomHost's state, by reference) and the verdicts it hands back. */
export interface WatchedRoom {
  readonly opts: HostOptions;
  devices(): Iterable<HostDevice>;
  device(id: string): HostDevice | undefined;
  epoch(): number;
  /** This deal's neighbours of a guest ('' = the host), as told in its assign. */
  route(id: string): { prev: string; next: string } | undefined;
  /** Hops "a>b" that could not be wired or stalled: dealt through the host until a or b joins again. */
  readonly cutHops: Set<string>;
  /** A deal that had to be made again without a hop: whoever waits for the old one waits for the new. */
  readonly redoneAs: Map<number, Promise<void>>;
  lose(d: HostDevice, why: string): void;
  drop(d: HostDevice, why: string): void;
  /** `d` (connected) sent a frame the host refuses. */
  badFrame(d: HostDevice, error: Error): void;
  emit(e: HostEvent): void;
  redeal(): Promise<void>;
}

export class HostLiveness {
  private readonly timer: ReturnType<typeof setInterval>;
  private lastTick = performance.now();
  private readonly startedAt = performance.now();
  private readonly pings = new Map<number, (ms: number) => void>();

  constructor(private readonly room: WatchedRoom) {
    const hb = room.opts.heartbeatMs ?? 250;
    this.timer = setInterval(() => this.heartbeat(), hb);
  }

  stop(): void { clearInterval(this.timer); }

  /** A heartbeat from `d`: a reply gives its round trip (and answers a ping or probe); the guest's own is answered. */
  onHeartbeat(d: HostDevice, f: Extract<Frame, { kind: 'heartbeat' }>): void {
    if (f.reply) {
      // A reply carries back a time this host sent: one from before it started or from the future is a lie
      // (a sentAt of −1e308 once showed a round trip of 1e308 ms on the device's card).
      const now = performance.now();
      // (+ 1 ms: a ping's key sits a hair past the clock it was read from.)
      if (!(f.sentAt >= this.startedAt && f.sentAt <= now + 1)) { this.room.badFrame(d, new ProtocolError(`heartbeat reply with sentAt ${f.sentAt}, a time this host never sent`)); return; }
      d.rttMs = Math.max(0, now - f.sentAt);
      this.pings.get(f.sentAt)?.(d.rttMs);
    }
    else d.channel?.trySend({ kind: 'heartbeat', reply: true, sentAt: f.sentAt });
  }

  private heartbeat(): void {
    const { opts } = this.room;
    const now = performance.now();
    const timeout = opts.lossTimeoutMs ?? 1250;
    const interval = opts.heartbeatMs ?? 250;
    const stalled = now - this.lastTick > 2 * interval;
    this.lastTick = now;
    const limits = { silenceMs: timeout, loadStallMs: opts.loadStallMs ?? 120_000, loadTimeoutMs: opts.loadTimeoutMs ?? 30 * 60_000 };
    for (const d of this.room.devices()) {
      if (!d.channel) continue;
      // This page itself was blocked (a long synchronous load or CPU forward): answers may be queued
      // behind us, so silence proves nothing. Give every device a fresh window instead of blaming it.
      if (stalled) d.freshWindow(now - interval);
      const verdict = d.judge(now, limits);
      if (verdict?.silent) { this.room.lose(d, verdict.why); continue; }
      if (verdict) { this.room.drop(d, verdict.why); continue; }
      d.channel.trySend({ kind: 'heartbeat', reply: false, sentAt: now });
    }
  }

  /** Round trips of `count` heartbeat frames (26 bytes on the wire), one at a time, to a connected guest: ms each. */
  async ping(d: HostDevice, count: number): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < count; i++) {
      const sentAt = performance.now() + i * 1e-6; // unique key even within one clock tick
      const ms = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => { this.pings.delete(sentAt); reject(new DeviceLeftError(d.name, d.id, 'no heartbeat reply in 5 s')); }, 5000);
        this.pings.set(sentAt, (v) => { clearTimeout(timer); this.pings.delete(sentAt); resolve(v); });
        d.channel!.trySend({ kind: 'heartbeat', reply: false, sentAt });
      });
      out.push(ms);
    }
    return out;
  }

  get probeMs(): number { return Math.min(750, this.room.opts.lossTimeoutMs ?? 1250); }

  /** Lose `d` (`why`) unless it answers a heartbeat within `probeMs`; then `onAnswer`. */
  probe(d: HostDevice, why: string, probeMs = this.probeMs, onAnswer?: () => void): void {
    if (!d.channel?.isOpen()) { this.room.lose(d, why); return; }
    const sentAt = performance.now() + Math.random() * 1e-6; // a key no other ping uses
    const timer = setTimeout(() => { this.pings.delete(sentAt); this.room.lose(d, `${why} and it stopped answering`); }, probeMs);
    this.pings.set(sentAt, () => { clearTimeout(timer); this.pings.delete(sentAt); onAnswer?.(); });
    d.channel.trySend({ kind: 'heartbeat', reply: false, sentAt });
  }

  /**
   * `d` says its direct channel to neighbour `peerId` could not be opened or closed. While the deal is
   * still wiring, that hop goes through the host instead (a new deal). Once wired, a closed channel most
   * often means the neighbour is gone: probe it, and lose it, naming it, if it does not answer; if it
   * does, only the channel broke: the chain's request fails (`stopped`, naming the hop) and is re-wired.
   */
  hopLost(d: HostDevice, peerId: string, reason: string): void {
    const { room } = this;
    const route = room.route(d.id);
    const hop = route?.next === peerId ? `${d.id}>${peerId}` : route?.prev === peerId ? `${peerId}>${d.id}` : null;
    if (!hop || !d.channel) {
      if (d.channel) room.badFrame(d, new ProtocolError(`"link-lost" frame about device "${peerId}", which is not a neighbour of "${d.name}" in this deal`));
      return;
    }
    const peer = room.device(peerId);
    const names = hop.split('>').map((id) => `"${room.device(id)?.name ?? id}"`).join(' → ');
    const chain = d.chain;
    if (!chain) {
      room.cutHops.add(hop);
      room.emit({ type: 'frame-error', deviceId: d.id, error: new HopError(`direct hop ${names} could not be wired (${reason}): dealing it through the host`) });
      const old = room.epoch();
      const redone = room.redeal();
      redone.catch(() => undefined);
      room.redoneAs.set(old, redone);
      return;
    }
    if (!peer || chain.failed) return;
    this.probe(peer, `its direct channel with "${d.name}" closed`, this.probeMs, () => {
      chain.fail(new HopError(`the direct hop ${names} closed while both devices are still here (${reason})`));
      if (room.opts.autoRedeal ?? true) void room.redeal().catch(() => undefined);
    });
  }

  /** A chain of guests stalled or sent bad activations without naming one of them: its hops go through the host next time. */
  chainFault(chain: ChainEngine, why: string): void {
    const ids = chain.devices.map((x) => x.id);
    for (let i = 1; i < ids.length; i++) this.room.cutHops.add(`${ids[i - 1]}>${ids[i]}`);
    chain.fail(new HopError(`chain ${chain.label}: ${why}; its hops go through the host from the next deal`));
    if (this.room.opts.autoRedeal ?? true) void this.room.redeal().catch(() => undefined);
  }
}
