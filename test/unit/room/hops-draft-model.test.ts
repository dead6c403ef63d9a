// A draft model on the host of a real room (RoomHost, guests chained by direct hops over memory links):
// its drafts are checked in passes that cross the chain once; the tokens are one device's, with a
// smaller draft model of the same vocabulary and with the model as its own draft (every token kept).
import { afterEach, beforeAll, expect, test } from 'vitest';
import { readModelConfig } from '../../../src/model/config.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { DraftModelDrafter } from '../../../src/model/speculative/draft-model.ts';
import { vocabularyOf } from '../../../src/model/speculative/vocabulary.ts';
import { CountingMemorySource, makeRoom, singleDeviceTokens, tinyFiles, TINY, until, type TestRoom } from './helpers.ts';

const base = [17, 300, 5, 42, 99, 7, 250, 11, 3, 480, 64, 128];
const PROMPT = [...base, 1, 2, 200, 77, 31, 9];
let files: Map<string, Uint8Array>;
let room: TestRoom | undefined;
beforeAll(() => { files = tinyFiles(); });
afterEach(async () => { await room?.close(); room = undefined; });

async function drafterFrom(draftFiles: Map<string, Uint8Array>): Promise<DraftModelDrafter> {
  const source = new CountingMemorySource(draftFiles);
  const { config } = await readModelConfig(source);
  const weights = await loadWeights(source, { layers: [0, config.numLayers], embedding: true, head: true });
  const target = (await readModelConfig(new CountingMemorySource(files))).config;
  return new DraftModelDrafter(new ReferenceEngine(weights, { ctx: 256 }), { ctx: 256, vocabulary: { target: vocabularyOf(target), draft: vocabularyOf(config) } });
}

test.each([['a 2-layer draft model', { ...TINY, layers: 2, seed: 8 }], ['the model itself', TINY]] as const)('2 guests in one chain, %s drafting on the host: one device\'s tokens', async (name, draftModel) => {
  const expected = await singleDeviceTokens(files, PROMPT, 30);
  room = await makeRoom(files);
  for (const id of ['ga1111', 'gb2222']) room.addGuest(id);
  await until(() => room!.host.deviceList().length === 3, 'hellos');
  await room.host.setManualDeal([{ deviceId: 'host', range: [0, 1] }, { deviceId: 'ga1111', range: [1, 2] }, { deviceId: 'gb2222', range: [2, 4] }]);
  expect(room.host.chains).toEqual([['ga1111', 'gb2222']]);
  const drafter = await drafterFrom(tinyFiles(draftModel));
  const r = await room.host.generate(PROMPT, { maxNewTokens: 30, speculate: { drafter } });
  expect(r.ids).toEqual(expected);
  expect(r.stats.drafted).toBeGreaterThan(0);
  if (name === 'the model itself') expect(r.stats.accepted).toBe(r.stats.drafted);
  expect(drafter.failure).toBeUndefined();
});
