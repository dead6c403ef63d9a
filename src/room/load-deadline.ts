// How long a guest may take to load its share of a deal (host-liveness.ts judges it): a grace period plus
// the share's bytes at a minimum rate, never more than the room's total load timeout. A guest that
// trickles `progress` frames cannot stretch it: progress only proves it is not stalled, the deadline
// counts from the assign. Documented in docs/room-protocol.md (Hostile peers).
import { layerCosts, type DealCost } from './deal.ts';

export const LOAD_DEADLINE = {
  /** The slowest load a room waits for: 1 MiB/s (8 Mbit/s) of the share's bytes, download and upload together. */
  minBytesPerSecond: 2 ** 20,
  /** Time every load gets besides its bytes: engine start, shader compiles, a cache lookup. */
  graceMs: 60_000,
} as const;

export interface LoadDeadlineOptions {
  loadMinBytesPerSecond?: number | undefined;
  loadGraceMs?: number | undefined;
  /** The cap on any load (HostOptions.loadTimeoutMs, default 30 min). */
  loadTimeoutMs?: number | undefined;
}

/** The bytes a device holding `range` loads and keeps, as the host counts them (weights and cache: an upper bound on what is read). */
export function shareBytes(cost: DealCost, range: readonly [number, number]): number {
  return layerCosts(cost).slice(range[0], range[1]).reduce((a, b) => a + b, 0);
}

/** ms a load of `bytes` may take in all: grace + bytes / minimum rate, capped by the total load timeout. */
export function loadDeadlineMs(bytes: number, o: LoadDeadlineOptions = {}): number {
  const rate = o.loadMinBytesPerSecond ?? LOAD_DEADLINE.minBytesPerSecond;
  const grace = o.loadGraceMs ?? LOAD_DEADLINE.graceMs;
  const cap = o.loadTimeoutMs ?? 30 * 60_000;
  return Math.min(cap, grace + (Math.max(0, bytes) / rate) * 1000);
}
