// A GGUF Qwen3 MoE model in the room: split 2 and 3 ways (guests reading by "URL" or, with a local file
// on the host, over the channel with the model's file name and sizes), 32 greedy tokens identical to one
// device holding everything; the automatic deal weighs each layer by its bytes.
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { planWeights } from '../../../src/model/load-weights.ts';
import { tinyBpeVocab } from '../../../src/model/tiny/gguf-vocab.ts';
import { tinyGgufFiles } from '../../../src/model/tiny/tiny-gguf.ts';
import { CountingMemorySource, makeRoom, singleDeviceTokens, until, type TestRoom } from './helpers.ts';

const PROMPT = [17, 300, 5, 42, 99, 7, 250, 11, 3, 280, 64, 128, 1, 2, 200, 77];
let files: Map<string, Uint8Array>;
let file: string;
let expected: number[];
let room: TestRoom | undefined;

beforeAll(async () => {
  files = tinyGgufFiles({ layers: 4, hidden: 64, heads: 4, kvHeads: 2, headDim: 64, intermediate: 256, seed: 3, fileType: 'Q4_K_M',
    moe: { experts: 8, topK: 2, intermediate: 256, mlpOnlyLayers: [1] }, name: 'moe' }, tinyBpeVocab('{{ messages }}', 300));
  file = [...files.keys()][0]!;
  expected = await singleDeviceTokens(files, PROMPT, 32, file);
  expect(new Set(expected).size).toBeGreaterThan(4);
}, 120_000);
afterEach(async () => { await room?.close(); room = undefined; });

describe('a GGUF MoE model split across the room', () => {
  test.each([
    ['3-way, guests read the model themselves', 'mem://moe.gguf', [['host', [0, 1]], ['ga1111', [1, 3]], ['gb2222', [3, 4]]]],
    ['2-way, guests read the host\'s local file over the channel', '', [['host', [0, 2]], ['ga1111', [2, 4]]]],
  ] as const)('%s: 32 greedy tokens identical to one device', async (_n, modelUrl, deal) => {
    room = await makeRoom(files, { modelUrl, format: 'gguf' }, file);
    room.addGuest('ga1111');
    if (deal.length === 3) room.addGuest('gb2222');
    await until(() => room!.host.deviceList().length === deal.length, 'guests to say hello');
    await room.host.setManualDeal(deal.map(([deviceId, r]) => ({ deviceId, range: [r[0], r[1]] as [number, number] })));
    const r = await room.host.generate(PROMPT, { maxNewTokens: 32 });
    expect(r.finish).toBe('cap');
    expect(r.ids).toEqual(expected);
    if (modelUrl === '') expect(room.sources[1]!.bytesRead).toBe(0);   // the guest's own source was never used
  }, 120_000);

  test('the automatic deal weighs the dense layer less than the MoE layers', async () => {
    const plan = await planWeights(new CountingMemorySource(files, file), { layers: [0, 4] });
    const bytes = [0, 1, 2, 3].map((i) => plan.layerBytes.get(i)!);
    expect(bytes[1]).toBeLessThan(bytes[0]! / 2);
    const kv = 256 * 2 * 2 * 64 * 2;
    const weightsOf = (r: [number, number]) => bytes.slice(r[0], r[1]).reduce((a, b) => a + b + kv, 0);
    room = await makeRoom(files, { format: 'gguf', autoRedeal: true, weightBytes: { layerBytes: plan.layerBytes, fixedBytes: plan.fixedBytes } }, file);
    // A guest whose budget holds two MoE layers and no more (and the scratch every device holding layers needs), the host roomy: the guest's share fits.
    const scratch = room.host.dealCost.deviceFixedBytes ?? 0;
    const budget = bytes[2]! + bytes[3]! + 2 * kv + scratch;
    room.addGuest('ga1111', { budget });
    await until(() => room!.host.deviceList().length === 2, 'the guest to say hello');
    await room.host.redeal();
    const deal = room.host.currentDeal;
    const guest = deal.find((e) => e.deviceId === 'ga1111')!;
    expect(weightsOf(guest.range) + scratch).toBeLessThanOrEqual(budget);
    expect(guest.range[1] - guest.range[0]).toBeGreaterThan(0);
    expect((await room.host.generate(PROMPT, { maxNewTokens: 32 })).ids).toEqual(expected);
  }, 120_000);
});
