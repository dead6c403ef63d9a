// The room's KV cache type (?kv=q8_0, HostOptions.kv) reaches every device: the deal counts it, each
// guest's assign carries it, every engine is made with it, and a split room with q8_0 gives the tokens of
// one reference engine with a q8_0 cache (split against unsplit).
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { EngineFactory } from '../../../src/room/guest.ts';
import type { KvType } from '../../../src/room/device-bytes.ts';
import { makeRoom, referenceFactory, singleDeviceTokens, tinyFiles, until, type TestRoom } from './helpers.ts';

const PROMPT = [5, 17, 42, 9, 300];

describe('a q8_0 room', () => {
  let files: Map<string, Uint8Array>;
  let room: TestRoom | undefined;
  beforeAll(() => { files = tinyFiles(); });
  afterEach(async () => { await room?.close(); room = undefined; });

  test('host and guest engines are made with q8_0, the deal counts q8_0, and the split room equals one q8_0 engine', async () => {
    const made: (KvType | undefined)[] = [];
    const recording: EngineFactory = async (w, o) => { made.push(o.kv); return referenceFactory(w, o); };
    room = await makeRoom(files, { kv: 'q8_0', createEngine: recording });
    room.addGuest('ga1111');
    (room.guests[0]!.opts as { createEngine: EngineFactory }).createEngine = recording;
    await until(() => room!.host.deviceList().length === 2, 'hello');
    await room.host.redeal();
    expect(room.host.dealCost.kv).toBe('q8_0');
    expect(room.host.currentDeal.length).toBe(2);         // both devices hold layers
    expect(made.slice(-2)).toEqual(['q8_0', 'q8_0']);
    const out = await room.host.generate(PROMPT, { maxNewTokens: 16 });
    expect(out.finish).toBe('cap');
    expect(out.ids).toEqual(await singleDeviceTokens(files, PROMPT, 16, undefined, 'q8_0'));
  });
});
