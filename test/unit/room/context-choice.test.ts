// The room deals the largest context its memory holds, up to the one wanted: the KV cache, the RoPE table
// and the rest grow with the context, every device's share stays within its offer, and a ?ctx= the room
// cannot hold is refused naming the one it can. The room (RoomHost) and `npm run plan` (planRoom) give
// the same answer: they are the same code.
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { contextNote, CONTEXT_STEP, dealLargestContext, largestContext } from '../../../src/room/context-choice.ts';
import { dealCost, dealLayers, shareTotal, type DealDevice } from '../../../src/room/deal.ts';
import { kvBytesPerLayer } from '../../../src/room/device-bytes.ts';
import { DealError } from '../../../src/room/errors.ts';
import { hostDealCost } from '../../../src/room/host-deal.ts';
import { planRoom } from '../../../src/room/plan.ts';
import type { EngineFactory } from '../../../src/room/guest.ts';
import type { ModelConfig } from '../../../src/model/types.ts';
import { caps, makeRoom, referenceFactory, tinyFiles, until, type TestRoom } from './helpers.ts';

const GiB = 2 ** 30;
/** Qwen3-8B's shape: 36 layers, 8 KV heads of 128: 144 KiB of f16 KV a token. */
const QWEN3_8B = {
  modelType: 'qwen3', hiddenSize: 4096, numLayers: 36, numHeads: 32, numKvHeads: 8, headDim: 128, intermediateSize: 12288,
  vocabSize: 151936, tieWordEmbeddings: false, ropeTheta: 1e6, rmsNormEps: 1e-6, maxPositionEmbeddings: 40960,
} as unknown as ModelConfig;
const dev = (id: string, gib: number): DealDevice => ({ id, name: id, memoryBudgetBytes: gib * GiB, speed: 1 });
const costAt = (ctx: number) => dealCost(QWEN3_8B, 'gguf', ctx);

describe('dealLargestContext', () => {
  test('the largest step that deals, and the next one does not; every share within its offer', () => {
    const devices = [dev('host', 4), dev('a', 2)];
    const d = dealLargestContext(devices, costAt, 32_768);
    expect(d.ctx).toBeLessThan(32_768);
    expect(d.ctx % CONTEXT_STEP).toBe(0);
    expect(d.ctx).toBeGreaterThan(0);
    expect(() => dealLayers(devices, costAt(d.ctx + CONTEXT_STEP))).toThrowError(DealError);
    d.entries.forEach((e, i) => expect(shareTotal(d.cost, e.range, i)).toBeLessThanOrEqual(devices[i]!.memoryBudgetBytes));
    expect(largestContext(devices, costAt, 32_768)).toBe(d.ctx);
  });

  test('the cost grows with the context by the KV and the RoPE table: f16 144 KiB a token a layer for 8B, q8_0 34/64 of it', () => {
    const a = costAt(4096), b = costAt(8192);
    expect(b.bytesPerLayer - a.bytesPerLayer).toBe(kvBytesPerLayer(QWEN3_8B, 4096));
    expect(kvBytesPerLayer(QWEN3_8B, 1)).toBe(2 * 8 * 128 * 2);
    expect(kvBytesPerLayer(QWEN3_8B, 1, 'q8_0')).toBe(2 * 8 * 4 * 34);
    expect(b.deviceFixedBytes! - a.deviceFixedBytes!).toBe(4096 * 128 * 4);   // RoPE cos/sin pairs, f32
  });

  test('a room that holds the context wanted deals it; one that cannot hold even the smallest step names what does not fit', () => {
    expect(dealLargestContext([dev('host', 64)], costAt, 16_384).ctx).toBe(16_384);
    expect(() => dealLargestContext([dev('host', 2)], costAt, 16_384)).toThrowError(/does not hold|holds \d+ of 36 layers/);
  });

  test('an exact context (?ctx=) the room cannot hold is refused with the one it can', () => {
    const devices = [dev('host', 4), dev('a', 2)];
    const holds = largestContext(devices, costAt, 32_768);
    expect(() => dealLargestContext(devices, costAt, 32_768, { exact: true }))
      .toThrowError(new RegExp(`holds a context of ${holds.toLocaleString('en-US')} tokens, not the 32,768 asked for`));
  });

  test('the meter says what the room holds and whether one more device like its guests would hold the rest', () => {
    const d = dealLargestContext([dev('host', 4), dev('a', 2)], costAt, 32_768);
    // A third device of 2 GiB: 36 × 4.5 GiB of KV at 32k (f16) does not fit in 2 GiB more.
    expect(d.oneMoreDeviceHolds).toBe(dealLargestContext([dev('host', 4), dev('a', 2), dev('b', 2)], costAt, 32_768).ctx === 32_768);
    expect(contextNote(d)).toBe(`context ${d.ctx.toLocaleString('en-US')} — what this room holds; ${d.oneMoreDeviceHolds ? 'add a device' : 'add devices or memory'} for 32,768`);
    expect(contextNote({ ctx: 8192, want: 8192, oneMoreDeviceHolds: false })).toBe('context 8,192');
    const near = dealLargestContext([dev('host', 6), dev('a', 4)], costAt, 32_768);
    if (near.ctx < 32_768) expect(near.oneMoreDeviceHolds).toBe(true);   // a third 4 GiB device holds 32k for 8B Q4_K_M
  });
});

describe('the room deals the context it holds', () => {
  let files: Map<string, Uint8Array>;
  let room: TestRoom | undefined;
  beforeAll(() => { files = tinyFiles(); });
  afterEach(async () => { await room?.close(); room = undefined; });

  /** Engines made, with the context each was made for. */
  function recording(): { factory: EngineFactory; made: { ctx: number; range: [number, number] }[] } {
    const made: { ctx: number; range: [number, number] }[] = [];
    return { made, factory: async (w, o) => { made.push({ ctx: o.ctx, range: o.range }); return referenceFactory(w, o); } };
  }

  test('alone, the host deals the context its memory holds; a guest joins and the room deals the one wanted, on every engine', async () => {
    const want = 8 * CONTEXT_STEP;
    const probe = await makeRoom(files, { ctx: want });
    const holdsHalf = shareTotal(hostDealCost(probe.host.opts, want / 2), [0, 4], 0);
    await probe.close();
    const rec = recording();
    room = await makeRoom(files, { ctx: want, caps: caps(holdsHalf), createEngine: rec.factory });
    await room.host.redeal();
    // One more device of the host's size: what npm run plan says of two such devices.
    const twoHold = planRoom(room.host.opts, [holdsHalf, holdsHalf], { want }).ctx === want;
    expect(room.host.currentContext).toEqual({ ctx: want / 2, want, oneMoreDeviceHolds: twoHold });
    expect(planRoom(room.host.opts, [holdsHalf], { want }).ctx).toBe(want / 2);          // npm run plan says the same
    expect(rec.made.at(-1)).toEqual({ ctx: want / 2, range: [0, 4] });
    const guestEngines = recording();
    room.addGuest('ga1111', { budget: GiB });
    (room.guests[0]!.opts as { createEngine: EngineFactory }).createEngine = guestEngines.factory;
    await until(() => room!.host.deviceList().length === 2, 'hello');
    await room.host.redeal();
    expect(room.host.currentContext.ctx).toBe(want);
    expect([...rec.made, ...guestEngines.made].slice(-2).map((m) => m.ctx)).toEqual([want, want]);
    const out = await room.host.generate([5, 17, 42], { maxNewTokens: 4 });
    expect([out.finish, out.ids.length]).toEqual(['cap', 4]);
  });

  test('an exact ?ctx= the host alone cannot hold is refused naming the context it can', async () => {
    const want = 8 * CONTEXT_STEP;
    const probe = await makeRoom(files, { ctx: want });
    const holdsHalf = shareTotal(hostDealCost(probe.host.opts, want / 2), [0, 4], 0);
    await probe.close();
    room = await makeRoom(files, { ctx: want, ctxExact: true, caps: caps(holdsHalf) });
    await expect(room.host.redeal()).rejects.toThrowError(/holds a context of 4,096 tokens, not the 8,192 asked for/);
  });
});
