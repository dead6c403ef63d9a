// A host whose page reloads (RoomHost.goAway: no goodbye) and comes back as a new RoomHost of the same room
// with the deal it had (HostOptions.resumeDeal): the guest hears no "closed the room", reattaches, is dealt
// the same layers though the automatic deal would split otherwise, keeps its engine (nothing loaded again)
// and the room's tokens are those of one device. Close room (RoomHost.close) is a goodbye.
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { RoomHost } from '../../../src/room/host.ts';
import { RoomGuest, type GuestEvent } from '../../../src/room/guest.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { readModelConfig } from '../../../src/model/config.ts';
import { memoryLinkPair } from '../../../src/room/memory-link.ts';
import { MemoryByteStore } from '../../../src/room/weight-cache.ts';
import { ENGINES } from '../../../src/engines/table.ts';
import type { DealEntry } from '../../../src/room/deal.ts';
import { caps, CountingMemorySource, makeRoom, referenceFactory, ROOM_ID, singleDeviceTokens, tinyFiles, until, type TestRoom } from './helpers.ts';

const PROMPT = [17, 300, 5, 42, 99, 7, 250, 11, 3, 480, 64, 128, 1, 2, 200, 77];
const files = tinyFiles();
let expected: number[];
let room: TestRoom | undefined;
let reloaded: RoomHost | undefined;

beforeAll(async () => { expected = await singleDeviceTokens(files, PROMPT, 16); });
afterEach(async () => { await reloaded?.close(); reloaded = undefined; await room?.close(); room = undefined; });

/** The host of the same room after its page reloaded: a new RoomHost, dealing again on every join. */
async function hostAgain(resumeDeal?: { entries: DealEntry[]; ctx: number; manual?: boolean }): Promise<RoomHost> {
  const source = new CountingMemorySource(files);
  const { config } = await readModelConfig(source);
  const host = new RoomHost({
    roomId: ROOM_ID, name: 'Host', caps: caps(), config, format: 'safetensors', source, modelUrl: 'mem://tiny', modelKey: 'tiny-test', ctx: 256,
    loadWeights: (s, r) => loadWeights(s, r), createEngine: referenceFactory, store: new MemoryByteStore(), engines: ENGINES,
    ...(resumeDeal ? { resumeDeal } : {}),
  });
  void host.redeal().catch(() => undefined);   // the host alone first, as createHostRoom does
  return host;
}

const OLD_DEAL: DealEntry[] = [{ deviceId: 'host', range: [0, 1] }, { deviceId: 'ga1111', range: [1, 4] }];

describe('the room outlives a host reload', () => {
  test('no goodbye; the guest rejoins, is dealt the same layers, keeps its engine, and the tokens are the same', async () => {
    room = await makeRoom(files);
    const guest = room.addGuest('ga1111');
    await until(() => room!.host.deviceList().length === 2, 'hello');
    await room.host.setManualDeal(OLD_DEAL);
    expect((await room.host.generate(PROMPT, { maxNewTokens: 16 })).ids).toEqual(expected);
    const readBefore = room.sources[1]!.bytesRead;
    expect(readBefore).toBeGreaterThan(0);
    const events: GuestEvent[] = [];
    guest.on((e) => events.push(e));

    room.host.goAway();   // the page reloads
    await until(() => events.some((e) => e.type === 'host-lost'), 'the guest to notice the host is gone');
    expect(events.some((e) => e.type === 'removed')).toBe(false);

    reloaded = await hostAgain({ entries: OLD_DEAL, ctx: 256, manual: true });   // it was the person's manual deal
    expect(reloaded.manualDeal).toBeNull();   // not until its devices are back
    const pair = memoryLinkPair();
    reloaded.acceptLink(pair[0]);
    guest.attach(pair[1]);   // what GuestRoom.reconnect does over PeerJS
    await until(() => reloaded!.deviceList().some((d) => d.id === 'ga1111' && d.status === 'ready') && reloaded!.currentDeal.length === 2, 'the deal with the guest back', 10_000);
    await reloaded.whenReady();
    expect(reloaded.currentDeal).toEqual(OLD_DEAL);
    expect(reloaded.manualDeal).toEqual(OLD_DEAL);   // still manual: the room panel says so, not "automatic deal"
    expect(reloaded.resuming).toBe(false);
    const ready = events.filter((e): e is Extract<GuestEvent, { type: 'ready' }> => e.type === 'ready').at(-1)!;
    expect([ready.networkBytes, ready.cacheBytes]).toEqual([0, 0]);   // the engine was kept: not even the cache was read
    expect(room.sources[1]!.bytesRead).toBe(readBefore);
    expect((await reloaded.generate(PROMPT, { maxNewTokens: 16 })).ids).toEqual(expected);
  });

  test('without the kept deal the automatic one splits otherwise (what the test above would otherwise see)', async () => {
    room = await makeRoom(files);
    const guest = room.addGuest('ga1111');
    await until(() => room!.host.deviceList().length === 2, 'hello');
    room.host.goAway();
    reloaded = await hostAgain();
    const pair = memoryLinkPair();
    reloaded.acceptLink(pair[0]);
    guest.attach(pair[1]);
    await until(() => reloaded!.currentDeal.length === 2, 'the deal with the guest', 10_000);
    await reloaded.whenReady();
    expect(reloaded.currentDeal).not.toEqual(OLD_DEAL);
  });

  test('a newcomer beside the returning guest: the kept deal is dropped for a fresh one', async () => {
    room = await makeRoom(files);
    const guest = room.addGuest('ga1111');
    await until(() => room!.host.deviceList().length === 2, 'hello');
    room.host.goAway();
    reloaded = await hostAgain({ entries: OLD_DEAL, ctx: 256 });
    const pair = memoryLinkPair();
    reloaded.acceptLink(pair[0]);
    guest.attach(pair[1]);
    await until(() => reloaded!.currentDeal.length === 2, 'the kept deal', 10_000);
    const other = memoryLinkPair();
    reloaded.acceptLink(other[0]);
    const newcomer = new RoomGuest({ roomId: ROOM_ID, deviceId: 'gc3333', name: 'C', caps: caps(), store: new MemoryByteStore(), loadWeights: (s, r) => loadWeights(s, r), createEngine: referenceFactory, resolveSource: async () => new CountingMemorySource(files) });
    newcomer.attach(other[1]);
    await until(() => reloaded!.currentDeal.length === 3, 'a deal with the newcomer', 10_000);
    expect(reloaded.resuming).toBe(false);
    expect(reloaded.manualDeal).toBeNull();   // an automatic deal kept is not made manual
    await newcomer.leave('test over');
  });

  test('a guest that comes back offering less memory than its old share needs is dealt afresh', async () => {
    reloaded = await hostAgain({ entries: OLD_DEAL, ctx: 256 });
    const pair = memoryLinkPair();
    reloaded.acceptLink(pair[0]);
    const small = new RoomGuest({ roomId: ROOM_ID, deviceId: 'ga1111', name: 'A', caps: caps(64 * 1024), store: new MemoryByteStore(), loadWeights: (s, r) => loadWeights(s, r), createEngine: referenceFactory, resolveSource: async () => new CountingMemorySource(files) });
    small.attach(pair[1]);
    await until(() => reloaded!.deviceList().length === 2 && reloaded!.currentDeal.length === 2, 'the deal with the guest back', 10_000);
    await reloaded.whenReady();
    expect(reloaded.currentDeal).not.toEqual(OLD_DEAL);
    await small.leave('test over');
  });

  test('Close room is a goodbye: the guest is told the host closed the room', async () => {
    room = await makeRoom(files);
    const guest = room.addGuest('ga1111');
    await until(() => room!.host.deviceList().length === 2, 'hello');
    const events: GuestEvent[] = [];
    guest.on((e) => events.push(e));
    await room.host.close();
    await until(() => events.some((e) => e.type === 'removed'), 'the goodbye');
    expect(events.find((e) => e.type === 'removed')).toEqual({ type: 'removed', reason: 'the host closed the room' });
  });
});
