// The host's room, kept in this tab's storage so a reload re-opens the SAME room: its id (the one the invite
// link names), the model it runs, the context and memory chosen, and the deal last in effect (offered first
// again, so guests that come back to the same layers keep their loaded engines). One record, a few KiB at
// most; read back only after checking every field (storage is a boundary: another version of the app or a
// hand edit may have written it); cleared when the person closes the room with the app's Close room.
//
// sessionStorage, not localStorage: it survives a reload of this tab (and a phone's restore of a discarded
// tab) but not the tab's closing, and a second tab of the app does not try to take over the same room id.
import type { DealEntry } from '../room/deal.ts';
import { DEVICE_ID } from '../room/protocol.ts';
import { HOST_ID } from '../room/host.ts';

export const ROOM_RECORD_KEY = 'pooled.hostRoom';
/** Bounds of what is read back: a record bigger than this, or a deal of more entries, is refused. */
export const ROOM_RECORD_LIMITS = { bytes: 16 * 1024, dealEntries: 64, text: 512, layers: 4096 } as const;
/** A record older than this is stale: its guests gave up reconnecting long ago (guest-reconnect.ts: 2 min). */
export const ROOM_RECORD_MAX_AGE_MS = 24 * 3600_000;

export interface RoomRecord {
  v: 1;
  /** 32 hex digits: the invite link's ?room=. */
  roomId: string;
  /** The signaling token the room's id was opened with: the same token takes the id back at once after a reload (signaling.ts openPeer). */
  peerToken: string;
  /** The model as the start screen chose it (a URL choice: a folder cannot be re-opened without the person). */
  model: { id: string; url: string; name: string };
  /** ?ctx= when the person gave one. */
  ctx?: number;
  /** The memory the host offered, in bytes, when the person gave one. */
  memoryBudgetBytes?: number;
  /** The deal last in effect and its context (absent until the first deal with guests); manual when the person set it (a reload keeps it manual). */
  deal?: { entries: DealEntry[]; ctx: number; manual?: boolean };
  /** When it was written (ms since the epoch). */
  savedAt: number;
  /**
   * When the page hosting it went away (pagehide, or frozen to be discarded). Only then does a page of this
   * tab re-open the room: a duplicated tab copies the tab's storage while the hosting page is still there,
   * and must not take its room over.
   */
  leftAt?: number;
}

type Store = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

function defaultStore(): Store | undefined {
  try { return globalThis.sessionStorage; } catch { return undefined; }   // storage can be refused (privacy settings)
}

export function saveRoomRecord(record: Omit<RoomRecord, 'v' | 'savedAt'>, storage: Store | undefined = defaultStore(), now = Date.now()): void {
  const full: RoomRecord = { v: 1, ...record, savedAt: now };
  const problem = recordProblem(full, now);
  if (problem) throw new RoomRecordError(problem);
  const text = JSON.stringify(full);
  if (text.length > ROOM_RECORD_LIMITS.bytes) throw new RoomRecordError(`the record is ${text.length} bytes (at most ${ROOM_RECORD_LIMITS.bytes})`);
  try { storage?.setItem(ROOM_RECORD_KEY, text); } catch { /* full or refused: the room just will not survive a reload */ }
}

/** The record kept in this tab, or undefined: none, stale, or not one this app wrote (then it is removed). */
export function readRoomRecord(storage: Store | undefined = defaultStore(), now = Date.now()): RoomRecord | undefined {
  let text: string | null = null;
  try { text = storage?.getItem(ROOM_RECORD_KEY) ?? null; } catch { return undefined; }
  if (text === null) return undefined;
  let value: unknown;
  try { value = text.length <= ROOM_RECORD_LIMITS.bytes ? JSON.parse(text) : undefined; } catch { value = undefined; }
  if (value === undefined || recordProblem(value, now) !== null) { clearRoomRecord(storage); return undefined; }
  return value as RoomRecord;
}

/** The hosting page goes away (true) or stays after all (false: back from the back-forward cache, or unfrozen). */
export function markRoomLeft(left: boolean, storage: Store | undefined = defaultStore(), now = Date.now()): void {
  const record = readRoomRecord(storage, now);
  if (!record) return;
  const { leftAt: _was, ...rest } = record;
  try { storage?.setItem(ROOM_RECORD_KEY, JSON.stringify(left ? { ...rest, leftAt: now } : rest)); } catch { /* nothing kept */ }
}

export function clearRoomRecord(storage: Store | undefined = defaultStore()): void {
  try { storage?.removeItem(ROOM_RECORD_KEY); } catch { /* nothing kept */ }
}

export class RoomRecordError extends Error {
  override name = 'RoomRecordError';
}

const isText = (v: unknown): v is string => typeof v === 'string' && v.length <= ROOM_RECORD_LIMITS.text;
const isCount = (v: unknown, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= max;

/** What is wrong with `v` as a room record (null: nothing). */
export function recordProblem(v: unknown, now = Date.now()): string | null {
  if (typeof v !== 'object' || v === null) return 'not an object';
  const r = v as Partial<RoomRecord>;
  if (r.v !== 1) return `version ${String(r.v)} is not 1`;
  if (typeof r.roomId !== 'string' || !/^[0-9a-f]{32}$/.test(r.roomId)) return 'roomId is not 32 hex digits';
  if (typeof r.peerToken !== 'string' || !/^[0-9a-z]{8,64}$/.test(r.peerToken)) return 'peerToken is not 8–64 of [0-9a-z]';
  const m = r.model;
  if (typeof m !== 'object' || m === null || !isText(m.id) || !isText(m.url) || !isText(m.name) || m.id === '') return 'model is not {id, url, name}';
  if (r.ctx !== undefined && !(isCount(r.ctx, 2 ** 24) && r.ctx > 0)) return 'ctx is not a positive whole number';
  if (r.memoryBudgetBytes !== undefined && !(typeof r.memoryBudgetBytes === 'number' && Number.isFinite(r.memoryBudgetBytes) && r.memoryBudgetBytes > 0)) return 'memoryBudgetBytes is not a positive number';
  if (typeof r.savedAt !== 'number' || !Number.isFinite(r.savedAt)) return 'savedAt is not a time';
  if (now - r.savedAt > ROOM_RECORD_MAX_AGE_MS || r.savedAt - now > 60_000) return 'the record is stale';
  if (r.leftAt !== undefined && !(typeof r.leftAt === 'number' && Number.isFinite(r.leftAt))) return 'leftAt is not a time';
  if (r.deal !== undefined) {
    const d = r.deal;
    if (typeof d !== 'object' || d === null || !Array.isArray(d.entries) || !(isCount(d.ctx, 2 ** 24) && d.ctx > 0)) return 'deal is not {entries, ctx}';
    if (d.manual !== undefined && typeof d.manual !== 'boolean') return 'deal.manual is not a boolean';
    if (d.entries.length === 0 || d.entries.length > ROOM_RECORD_LIMITS.dealEntries) return `deal has ${d.entries.length} entries (1–${ROOM_RECORD_LIMITS.dealEntries})`;
    for (const e of d.entries as unknown[]) {
      const entry = e as Partial<DealEntry>;
      if (typeof e !== 'object' || e === null || typeof entry.deviceId !== 'string' || !(entry.deviceId === HOST_ID || DEVICE_ID.test(entry.deviceId))) return 'a deal entry names no device';
      const range = entry.range;
      if (!Array.isArray(range) || range.length !== 2 || !isCount(range[0], ROOM_RECORD_LIMITS.layers) || !isCount(range[1], ROOM_RECORD_LIMITS.layers) || range[1] < range[0]) return 'a deal entry has no layer range';
    }
  }
  return null;
}
