// A device that leaves mid-request (issue 38): the room deals its layers again by itself and says so, and the
// agent runs the stopped answer again from the last pinned point, without the user sending it again.
// RoomHost.recover waits for that re-deal (bounded) and says over how many devices the room now runs, or
// exactly why it cannot run again.
import { afterEach, beforeAll, expect, test } from 'vitest';
import { caps, makeRoom, singleDeviceTokens, tinyFiles, until, type TestRoom } from './helpers.ts';

const PROMPT = [17, 300, 5, 42, 99, 7, 250, 11, 3, 480, 64, 128, 1, 2, 200, 77];
let files: Map<string, Uint8Array>;
let expected: number[];
let room: TestRoom | undefined;

beforeAll(async () => {
  files = tinyFiles();
  expected = await singleDeviceTokens(files, PROMPT, 24);
});
afterEach(async () => { await room?.close(); room = undefined; });

/** A room whose host holds too little memory for the whole model, so the guests hold layers. */
async function splitRoom(autoRedeal: boolean): Promise<TestRoom> {
  const r = await makeRoom(files, { autoRedeal, caps: caps(2 ** 30) });
  r.addGuest('ga1111');
  r.addGuest('gb2222');
  await until(() => r.host.deviceList().length === 3, 'both guests joined');
  await r.host.setManualDeal([{ deviceId: 'host', range: [0, 1] }, { deviceId: 'ga1111', range: [1, 3] }, { deviceId: 'gb2222', range: [3, 4] }]);
  await r.host.setManualDeal(null);   // back to automatic: the deal the room makes again after a loss
  return r;
}

test('a holder vanishes mid-answer: recover waits for the re-deal without it and the answer runs again to the same tokens', async () => {
  room = await splitRoom(true);
  const holder = room.host.currentDeal.find((e) => e.deviceId !== 'host' && e.range[1] > e.range[0])!.deviceId;
  const r = await room.host.generate(PROMPT, {
    maxNewTokens: 200,
    onToken: (_id, got) => { if (got.length === 4) room!.vanish(holder); },
  });
  expect(r.finish).toBe('stopped');
  expect(r.note).toMatch(new RegExp(`"Guest ${holder}" left the room`));
  const t0 = performance.now();
  const outcome = await room.host.recover();
  const holders = room.host.currentDeal.filter((e) => e.deviceId === 'host' || e.range[1] > e.range[0]).length;
  expect(outcome).toEqual({ ok: true, text: `the room dealt its layers again over ${holders} device${holders === 1 ? '' : 's'}` });
  expect(room.host.currentDeal.some((e) => e.deviceId === holder)).toBe(false);
  expect(performance.now() - t0).toBeLessThan(30_000);
  expect((await room.host.generate(PROMPT, { maxNewTokens: 24 })).ids).toEqual(expected);
}, 60_000);   // three tiny-model loads on the reference engine and a re-deal, on a busy CI

test('automatic re-deal off: recover says exactly what to do instead of waiting', async () => {
  room = await splitRoom(false);
  const outcome = await room.host.recover();
  expect(outcome).toEqual({ ok: false, text: 'Re-deal the layers over the devices still in the room, then send the request again' });
}, 60_000);

test('Stop while the room deals again ends the wait at once', async () => {
  room = await splitRoom(true);
  const stop = new AbortController();
  const holder = room.host.currentDeal.find((e) => e.deviceId !== 'host' && e.range[1] > e.range[0])!.deviceId;
  room.vanish(holder);
  const waiting = room.host.recover(stop.signal);
  stop.abort();
  expect(await waiting).toEqual({ ok: false, text: 'stopped while the room dealt its layers again' });
}, 60_000);
