// Speculative decoding through a room whose guests are chained by direct hops (real RoomHost, guests over
// memory links): a verification pass of k + 1 rows crosses the chain once; rejections truncate every guest.
import { afterEach, beforeAll, expect, test } from 'vitest';
import { PromptLookupDrafter } from '../../../src/model/speculative/prompt-lookup.ts';
import { makeRoom, singleDeviceTokens, tinyFiles, until, type TestRoom } from './helpers.ts';

const base = [17, 300, 5, 42, 99, 7, 250, 11, 3, 480, 64, 128];
const PROMPT = [...base, 1, 2, ...base.slice(0, 7), 200, 77, ...base.slice(0, 6)];
let files: Map<string, Uint8Array>;
let room: TestRoom | undefined;
beforeAll(() => { files = tinyFiles(); });
afterEach(async () => { await room?.close(); room = undefined; });

test.each([2, 3])('%i guests in one chain: prompt-lookup speculation gives plain decoding\'s tokens', async (n) => {
  const expected = await singleDeviceTokens(files, PROMPT, 40);
  room = await makeRoom(files);
  const ids = ['ga1111', 'gb2222', 'gc3333'].slice(0, n);
  for (const id of ids) room.addGuest(id);
  await until(() => room!.host.deviceList().length === n + 1, 'hellos');
  const cuts = n === 2 ? [1, 2, 4] : [1, 2, 3, 4];
  await room.host.setManualDeal([{ deviceId: 'host', range: [0, 1] }, ...ids.map((deviceId, i) => ({ deviceId, range: [cuts[i]!, cuts[i + 1]!] as [number, number] }))]);
  expect(room.host.chains).toEqual([ids]);
  const r = await room.host.generate(PROMPT, { maxNewTokens: 40, speculate: { drafter: new PromptLookupDrafter() } });
  expect(r.ids).toEqual(expected);
  console.log(`[spec] ${n} guests: drafted ${r.stats.drafted} accepted ${r.stats.accepted} passes ${r.stats.passes}`);
  expect(r.stats.drafted).toBeGreaterThan(0);
  const again = await room.host.generate(PROMPT, { maxNewTokens: 40 });
  expect(again.ids).toEqual(expected);
});
