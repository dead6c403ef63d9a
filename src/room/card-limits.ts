// What a device's card may show (host.ts deviceList): numbers that come from a guest (its heartbeat
// replies, the work times it reports per forward) are held to what a real device can report, so a
// lying guest cannot put 1e308 ms or a billion tokens per second on the host's screen.
// Documented in docs/room-protocol.md (Hostile peers).
import type { DeviceInfo } from './host-device.ts';

export const CARD_LIMITS = {
  /** A round trip longer than this is no connection a room can use (the loss timeout is seconds). */
  rttMs: 600_000,
  /** Far above any device's layers (a datacentre GPU runs a small model's layers at ~10k tokens/s). */
  tokensPerSecond: 1_000_000,
} as const;

const within = (v: number, max: number): number => (Number.isFinite(v) ? Math.min(max, Math.max(0, v)) : 0);

/** `info` with its guest-reported figures clamped to CARD_LIMITS (in place; returned for chaining). */
export function clampCard(info: DeviceInfo): DeviceInfo {
  info.rttMs = within(info.rttMs, CARD_LIMITS.rttMs);
  info.tokensPerSecond = within(info.tokensPerSecond, CARD_LIMITS.tokensPerSecond);
  return info;
}
