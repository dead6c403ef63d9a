// The host's room record (a reload re-opens the same room): written, read back as written, refused and
// removed when it is not one this app wrote, bounded, stale after a day, cleared on a real close.
import { describe, expect, test } from 'vitest';
import { clearRoomRecord, markRoomLeft, readRoomRecord, recordProblem, ROOM_RECORD_KEY, ROOM_RECORD_LIMITS, ROOM_RECORD_MAX_AGE_MS, RoomRecordError, saveRoomRecord } from '../../../src/app/room-record.ts';

/** A Storage of this test's own (the sessions use the tab's sessionStorage). */
function memoryStorage(): Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return { map, getItem: (k) => map.get(k) ?? null, setItem: (k, v) => void map.set(k, v), removeItem: (k) => void map.delete(k) };
}

const ROOM = '0123456789abcdef0123456789abcdef';
const NOW = 1_800_000_000_000;
const base = {
  roomId: ROOM, peerToken: 'k3j4h5g6f7d8s9a0', model: { id: 'tiny', url: '/models/tiny', name: 'tiny test model' }, ctx: 2048, memoryBudgetBytes: 8 * 2 ** 30,
  deal: { entries: [{ deviceId: 'host', range: [0, 2] as [number, number] }, { deviceId: 'abc123def4', range: [2, 4] as [number, number] }], ctx: 2048 },
};

describe('room record', () => {
  test('written, then read back as written', () => {
    const s = memoryStorage();
    saveRoomRecord(base, s, NOW);
    expect(readRoomRecord(s, NOW + 5000)).toEqual({ v: 1, ...base, savedAt: NOW });
  });

  test('cleared: nothing to read back (the Close room action)', () => {
    const s = memoryStorage();
    saveRoomRecord(base, s, NOW);
    clearRoomRecord(s);
    expect(s.map.size).toBe(0);
    expect(readRoomRecord(s, NOW)).toBeUndefined();
  });

  test('a later save replaces the one record (the deal as it changes)', () => {
    const s = memoryStorage();
    saveRoomRecord(base, s, NOW);
    saveRoomRecord({ ...base, deal: { entries: [{ deviceId: 'host', range: [0, 4] }], ctx: 1024 } }, s, NOW + 1);
    expect(s.map.size).toBe(1);
    expect(readRoomRecord(s, NOW + 2)?.deal).toEqual({ entries: [{ deviceId: 'host', range: [0, 4] }], ctx: 1024 });
    saveRoomRecord({ ...base, deal: { ...base.deal, manual: true } }, s, NOW + 3);   // the person's manual deal stays manual
    expect(readRoomRecord(s, NOW + 4)?.deal?.manual).toBe(true);
  });

  test('marked when the hosting page goes away, unmarked when it stays after all; a save (the page hosting) unmarks it', () => {
    const s = memoryStorage();
    saveRoomRecord(base, s, NOW);
    expect(readRoomRecord(s, NOW)?.leftAt).toBeUndefined();
    markRoomLeft(true, s, NOW + 10);
    expect(readRoomRecord(s, NOW + 20)).toEqual({ v: 1, ...base, savedAt: NOW, leftAt: NOW + 10 });
    markRoomLeft(false, s, NOW + 30);
    expect(readRoomRecord(s, NOW + 40)?.leftAt).toBeUndefined();
    markRoomLeft(true, s, NOW + 50);
    saveRoomRecord(base, s, NOW + 60);
    expect(readRoomRecord(s, NOW + 70)?.leftAt).toBeUndefined();
    clearRoomRecord(s);
    markRoomLeft(true, s, NOW + 80);   // nothing to mark
    expect(s.map.size).toBe(0);
  });

  test('stale after a day: refused and removed', () => {
    const s = memoryStorage();
    saveRoomRecord(base, s, NOW);
    expect(readRoomRecord(s, NOW + ROOM_RECORD_MAX_AGE_MS - 1)).toBeDefined();
    expect(readRoomRecord(s, NOW + ROOM_RECORD_MAX_AGE_MS + 1)).toBeUndefined();
    expect(s.map.has(ROOM_RECORD_KEY)).toBe(false);
  });

  test.each([
    ['not JSON', '{"v":1,'],
    ['another version', JSON.stringify({ v: 2, ...base, savedAt: NOW })],
    ['a room id that is not 32 hex digits', JSON.stringify({ v: 1, ...base, roomId: 'abc', savedAt: NOW })],
    ['a model without an id', JSON.stringify({ v: 1, ...base, model: { url: 'x', name: 'x' }, savedAt: NOW })],
    ['a deal entry with a backwards range', JSON.stringify({ v: 1, ...base, deal: { entries: [{ deviceId: 'host', range: [3, 1] }], ctx: 1 }, savedAt: NOW })],
    ['a deal whose manual flag is not a boolean', JSON.stringify({ v: 1, ...base, deal: { ...base.deal, manual: 'yes' }, savedAt: NOW })],
    ['a deal entry naming no device', JSON.stringify({ v: 1, ...base, deal: { entries: [{ deviceId: 'Bad Id\n', range: [0, 1] }], ctx: 1 }, savedAt: NOW })],
    ['a signaling token with odd characters', JSON.stringify({ v: 1, ...base, peerToken: 'a b&c=d', savedAt: NOW })],
    ['a negative context', JSON.stringify({ v: 1, ...base, ctx: -5, savedAt: NOW })],
    ['too big', JSON.stringify({ v: 1, ...base, model: { ...base.model, name: 'x'.repeat(ROOM_RECORD_LIMITS.bytes) }, savedAt: NOW })],
  ])('%s: refused and removed', (_what, text) => {
    const s = memoryStorage();
    s.map.set(ROOM_RECORD_KEY, text);
    expect(readRoomRecord(s, NOW)).toBeUndefined();
    expect(s.map.has(ROOM_RECORD_KEY)).toBe(false);
  });

  test('bounded: a deal of more entries than the bound is not written', () => {
    const s = memoryStorage();
    const entries = Array.from({ length: ROOM_RECORD_LIMITS.dealEntries + 1 }, (_, i) => ({ deviceId: `device${String(i).padStart(3, '0')}`, range: [i, i + 1] as [number, number] }));
    expect(() => saveRoomRecord({ ...base, deal: { entries, ctx: 2048 } }, s, NOW)).toThrow(RoomRecordError);
    expect(s.map.size).toBe(0);
  });

  test('what is wrong is named', () => {
    expect(recordProblem({ v: 1, ...base, roomId: 'nope', savedAt: NOW }, NOW)).toBe('roomId is not 32 hex digits');
    expect(recordProblem({ v: 1, ...base, savedAt: NOW }, NOW)).toBeNull();
  });

  test('storage that throws (refused by privacy settings) reads as no record', () => {
    const throwing = { getItem: () => { throw new Error('denied'); }, setItem: () => { throw new Error('denied'); }, removeItem: () => { throw new Error('denied'); } };
    expect(() => saveRoomRecord(base, throwing, NOW)).not.toThrow();
    expect(readRoomRecord(throwing, NOW)).toBeUndefined();
  });
});
