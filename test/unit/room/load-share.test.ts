// A device whose engine loads its own weights (ShareLoadFn: the app's WASM engine in its worker reads its
// share itself) joins a room like any other: the host's share and a guest's go through loadShare with
// the model's URL, cache key, layers and context, the byte counts it reports are added to the device's,
// and the split room gives one device's tokens.
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { loadWeights } from '../../../src/model/load-weights.ts';
import type { ShareLoadFn, ShareRequest } from '../../../src/room/guest.ts';
import { makeRoom, referenceFactory, singleDeviceTokens, tinyFiles, until, type TestRoom } from './helpers.ts';

const PROMPT = [5, 17, 42, 9, 300];

describe('a room whose devices load through loadShare', () => {
  let files: Map<string, Uint8Array>;
  let room: TestRoom | undefined;
  beforeAll(() => { files = tinyFiles(); });
  afterEach(async () => { await room?.close(); room = undefined; });

  test('host and guest shares are loaded by it, its counts are the device\'s, and the tokens are one device\'s', async () => {
    const asked: Omit<ShareRequest, 'source'>[] = [];
    const loadShare: ShareLoadFn = async (share) => {
      const { source, ...rest } = share;
      asked.push({ ...rest, request: { layers: share.request.layers, ...(share.request.head ? { head: true } : {}) } });
      const weights = await loadWeights(source, share.request);
      const engine = await referenceFactory(weights, { ctx: share.ctx, range: share.request.layers });
      return { engine, hiddenSize: weights.config.hiddenSize, counts: { networkBytes: 1000, cacheBytes: 7 } };
    };
    room = await makeRoom(files, { loadShare, createEngine: () => { throw new Error('createEngine is not used with loadShare'); } });
    const guest = room.addGuest('ga1111');
    (guest.opts as { loadShare?: ShareLoadFn }).loadShare = loadShare;
    await until(() => room!.host.deviceList().length === 2, 'hello');
    await room.host.redeal();
    expect(room.host.currentDeal.length).toBe(2);
    const [hostShare, guestShare] = [asked.find((a) => a.request.head), asked.find((a) => !a.request.head)];
    expect(hostShare).toMatchObject({ model: 'mem://tiny', modelKey: 'tiny-test', ctx: 256 });
    expect(guestShare).toMatchObject({ model: 'mem://tiny', modelKey: 'tiny-test', ctx: 256 });
    expect(guestShare!.request.layers[1]).toBe(4);
    expect(guest.stats.networkBytes).toBeGreaterThanOrEqual(1000);   // the page's own reads + the 1000 it reported
    expect(guest.stats.cacheBytes).toBeGreaterThanOrEqual(7);
    const out = await room.host.generate(PROMPT, { maxNewTokens: 16 });
    expect(out.ids).toEqual(await singleDeviceTokens(files, PROMPT, 16));
  });
});
