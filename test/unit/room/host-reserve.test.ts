// Host memory kept out of the deal (a draft model on the host): the host's share shrinks to what is left,
// the room's tokens stay one device's, and a reservation that leaves the layers nowhere to go is refused.
import { afterEach, beforeAll, expect, test } from 'vitest';
import { layerCosts } from '../../../src/room/deal.ts';
import { DealError } from '../../../src/room/errors.ts';
import { caps, makeRoom, singleDeviceTokens, tinyFiles, until, type TestRoom } from './helpers.ts';

const PROMPT = [5, 17, 42, 99, 3, 250];
let files: Map<string, Uint8Array>;
let expected: number[];
let room: TestRoom | undefined;
beforeAll(async () => { files = tinyFiles(); expected = await singleDeviceTokens(files, PROMPT, 16); });
afterEach(async () => { await room?.close(); room = undefined; });

/** A host whose memory fits its fixed bytes and 3 of the 4 layers, and a guest fitting `guestLayers`. */
async function roomWith(guestLayers: number): Promise<{ room: TestRoom; layer: number }> {
  const probe = await makeRoom(files);
  const cost = probe.host.dealCost;
  await probe.close();
  const layer = Math.max(...layerCosts(cost));
  const scratch = cost.deviceFixedBytes ?? 0;   // what every device holding layers allocates besides them
  const r = await makeRoom(files, { caps: caps(cost.hostFixedBytes + scratch + 3.5 * layer) });
  r.addGuest('ga1111', { budget: scratch + (guestLayers + 0.5) * layer });
  await until(() => r.host.deviceList().length === 2, 'hello');
  await r.host.redeal();
  return { room: r, layer };
}

test('a reservation moves layers off the host, tokens unchanged; the same one again deals nothing; back to 0 restores the even deal', async () => {
  const made = await roomWith(4);
  room = made.room;
  const { layer } = made;
  const ranges = () => room!.host.currentDeal.map((e) => `${e.deviceId} ${e.range[0]}-${e.range[1]}`);
  expect(ranges()).toEqual(['host 0-2', 'ga1111 2-4']);

  // A draft model of 2.2 layers' bytes: the host keeps room for 1 layer only.
  await room.host.reserveHostMemory(Math.round(2.2 * layer));
  expect(ranges()).toEqual(['host 0-1', 'ga1111 1-4']);
  expect((await room.host.generate(PROMPT, { maxNewTokens: 16 })).ids).toEqual(expected);

  // The same reservation again: no new deal (the epoch stays).
  const epoch = room.host.currentEpoch;
  await room.host.reserveHostMemory(Math.round(2.2 * layer));
  expect(room.host.currentEpoch).toBe(epoch);

  expect(() => room!.host.reserveHostMemory(-1)).toThrow(/cannot reserve -1 bytes/);

  await room.host.reserveHostMemory(0);
  expect(ranges()).toEqual(['host 0-2', 'ga1111 2-4']);
  expect((await room.host.generate(PROMPT, { maxNewTokens: 16 })).ids).toEqual(expected);
});

test('a reservation that leaves the layers nowhere to go is refused by name: nothing reserved, the deal kept', async () => {
  const made = await roomWith(2);
  room = made.room;
  const ranges = () => room!.host.currentDeal.map((e) => `${e.deviceId} ${e.range[0]}-${e.range[1]}`);
  expect(ranges()).toEqual(['host 0-2', 'ga1111 2-4']);
  const epoch = room.host.currentEpoch;
  // The host would fit 1 layer and the guest holds 2: 3 of 4.
  expect(() => room!.host.reserveHostMemory(Math.round(2.2 * made.layer))).toThrow(DealError);
  expect(() => room!.host.reserveHostMemory(Math.round(2.2 * made.layer))).toThrow(/the room's memory (holds 3 of 4 layers|does not hold)/);
  expect(ranges()).toEqual(['host 0-2', 'ga1111 2-4']);
  await room.host.reserveHostMemory(0);   // nothing was reserved: no new deal
  expect(room.host.currentEpoch).toBe(epoch);
  expect((await room.host.generate(PROMPT, { maxNewTokens: 16 })).ids).toEqual(expected);
});
