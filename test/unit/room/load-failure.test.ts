// A guest whose load of its deal fails (a truncated or unreadable file at its site) is marked failed on
// the host at once, naming the cause, not after the 120 s load deadline; the deal says why it failed.
import { afterEach, expect, test } from 'vitest';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { RoomGuest } from '../../../src/room/guest.ts';
import { memoryLinkPair } from '../../../src/room/memory-link.ts';
import { MemoryByteStore } from '../../../src/room/weight-cache.ts';
import { CountingMemorySource, ROOM_ID, caps, makeRoom, referenceFactory, tinyFiles, until, type TestRoom } from './helpers.ts';

let room: TestRoom | undefined;
afterEach(async () => { await room?.close(); room = undefined; });

/** A source whose ranged reads fail: the guest can read the headers, never a tensor. */
class FailingRanges extends CountingMemorySource {
  override async readRange(): Promise<Uint8Array> { throw new Error('the server closed the connection mid-file'); }
}

test("a guest's failed load reaches the host as the device's failure, naming its cause, within moments", async () => {
  const files = tinyFiles();
  room = await makeRoom(files, { loadStallMs: 120_000 });   // the deadline this must not wait for
  const guest = new RoomGuest({
    roomId: ROOM_ID, deviceId: 'broken1', name: 'Broken', caps: caps(), store: new MemoryByteStore(),
    loadWeights: (s, r) => loadWeights(s, r), createEngine: referenceFactory, resolveSource: async () => new FailingRanges(files),
  });
  const pair = memoryLinkPair();
  room.host.acceptLink(pair[0]);
  guest.attach(pair[1]);
  room.guests.push(guest);
  await until(() => room!.host.deviceList().length === 2, 'the guest to join');
  const t0 = Date.now();
  const dealt = room.host.redeal().then(() => null, (e: Error) => e);
  await until(() => room!.host.deviceList().find((d) => d.id === 'broken1')?.status === 'failed', 'the guest to be marked failed', 5_000);
  expect(Date.now() - t0).toBeLessThan(5_000);
  const info = room.host.deviceList().find((d) => d.id === 'broken1')!;
  expect(info.error).toMatch(/mid-file/);
  const err = await dealt;
  expect(err?.message).toMatch(/mid-file/);
});
