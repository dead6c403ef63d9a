// A Qwen3.5 hybrid in the room (issue 14): splits equal the single device, the pinned checkpoint is a
// snapshot on every device holding Gated DeltaNet layers (pin / restore / release frames), a guest's
// refusals come back named, a lying ack is caught, and the deal counts each layer's bytes with its state.
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { readModelConfig } from '../../../src/model/config.ts';
import { linearStateBytes, snapshotBytes, type ModelConfig } from '../../../src/model/types.ts';
import { dealCost, dealCostFromPlan, dealLayers, kvBytesPerLayer, shareTotal, snapshotsForCkpt } from '../../../src/room/deal.ts';
import { ProtocolError, RemoteDeviceError } from '../../../src/room/errors.ts';
import { decodeFrame, type Frame } from '../../../src/room/protocol.ts';
import { ChainEngine } from '../../../src/room/chain-engine.ts';
import { loadWeights, planWeights } from '../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { RoomGuest } from '../../../src/room/guest.ts';
import { memoryLinkPair } from '../../../src/room/memory-link.ts';
import { MemoryByteStore } from '../../../src/room/weight-cache.ts';
import { FrameChannel } from '../../../src/room/wire.ts';
import { caps, CountingMemorySource, makeRoom, ROOM_ID, singleDeviceTokens, tinyFiles, TINY, until, type TestRoom } from './helpers.ts';

const HYBRID = { ...TINY, hybrid: { linearKeyHeads: 2, linearValueHeads: 4, linearHeadDim: 16, fullAttentionInterval: 2 } };
const MOE = { ...HYBRID, seed: 4, moe: { experts: 4, topK: 2, intermediate: 32 } };
const PROMPT = [17, 300, 5, 42, 99, 7, 250, 11, 3, 480, 64, 128, 1, 2, 200, 77, 31, 8, 150, 400];
let room: TestRoom | undefined;
afterEach(async () => { await room?.close(); room = undefined; });

async function dealt(r: TestRoom, deal: [string, [number, number]][]): Promise<void> {
  await until(() => r.host.deviceList().length === r.guests.length + 1, 'guests to say hello');
  await r.host.setManualDeal(deal.map(([deviceId, range]) => ({ deviceId, range })));
}

describe.each([['dense', HYBRID], ['MoE', MOE]] as const)('a tiny %s hybrid (layers: linear, full, linear, full)', (_name, opts) => {
  let files: Map<string, Uint8Array>;
  let expected: number[];
  beforeAll(async () => {
    files = tinyFiles(opts);
    expected = await singleDeviceTokens(files, PROMPT, 32);
    expect(new Set(expected).size).toBeGreaterThan(8);
  });

  test.each([
    ['3-way', [['host', [0, 1]], ['ga1111', [1, 3]], ['gb2222', [3, 4]]]],
    // (The host keeps layer 0 in every deal, so at least one linear layer.)
    ['a guest holds only full attention, another a linear and a full layer', [['host', [0, 1]], ['ga1111', [1, 2]], ['gb2222', [2, 4]]]],
  ] as const)('%s: 32 greedy tokens equal the single device', async (_n, deal) => {
    room = await makeRoom(files);
    room.addGuest('ga1111');
    room.addGuest('gb2222');
    await dealt(room, deal.map(([id, r]) => [id, [r[0], r[1]]]));
    expect((await room.host.generate(PROMPT, { maxNewTokens: 32 })).ids).toEqual(expected);
  });

  test('the pinned checkpoint: every recurrent device snapshots there; a rewritten conversation computes only what follows', async () => {
    room = await makeRoom(files);
    room.addGuest('ga1111');
    room.addGuest('gb2222');
    await dealt(room, [['host', [0, 1]], ['ga1111', [1, 2]], ['gb2222', [2, 4]]]);
    const first = await room.host.generate(PROMPT, { maxNewTokens: 8, pinAt: 6 });
    expect(first.ids).toEqual(expected.slice(0, 8));
    const other = [...PROMPT.slice(0, 6), 90, 91, 92, 93, 94];
    const second = await room.host.generate(other, { maxNewTokens: 16, pinAt: 6 });
    expect(second.stats).toMatchObject({ promptReused: 6, promptComputed: other.length - 6 });
    expect(second.ids).toEqual(await singleDeviceTokens(files, other, 16));
    const { config } = await readModelConfig(new CountingMemorySource(files));
    const byId = Object.fromEntries(room.host.deviceList().map((d) => [d.id, d]));
    // host [0,1) and gb2222 [2,4) hold one linear layer each; ga1111 [1,2) holds only full attention.
    expect([byId.host!.snapshotBytes, byId.ga1111!.snapshotBytes, byId.gb2222!.snapshotBytes]).toEqual([linearStateBytes(config), 0, linearStateBytes(config)]);
    expect([byId.host!.snapshots, byId.ga1111!.snapshots, byId.gb2222!.snapshots]).toEqual([2, 0, 2]); // the pin and the answer checkpoint
  });
});

describe('checkpoint frames', () => {
  let files: Map<string, Uint8Array>;
  beforeAll(() => { files = tinyFiles(HYBRID); });

  test('a guest refuses a restore with no snapshot (named, nothing changed) and a pin off its cache length', async () => {
    room = await makeRoom(files);
    room.addGuest('ga1111');
    await dealt(room, [['host', [0, 2]], ['ga1111', [2, 4]]]);
    await room.host.generate(PROMPT, { maxNewTokens: 2 });           // ckpt 4: the answer checkpoint at 20 is pinned everywhere
    const guest = room.host.engine!.stages[1] as ChainEngine;
    expect(guest.recurrent).toBe(true);
    const kv = guest.kvLength();
    const err = (await guest.truncate(7).then(() => null, (e: unknown) => e)) as RemoteDeviceError;
    expect(err).toBeInstanceOf(RemoteDeviceError);
    expect(err.message).toMatch(/Guest ga1111.*no recurrent-state snapshot at position 7 \(snapshots at 20; the state is at 21\)/);
    expect(err.code).toBe('snapshot-missing');
    expect(guest.kvLength()).toBe(kv);                                  // the host's mirror did not move either
    const sent: Frame[] = [];
    const real = room.links[0]![0];
    const spy = real.send.bind(real);
    real.send = (m: Uint8Array) => {
      const whole = (m[3]! & 1) === 1 && new DataView(m.buffer, m.byteOffset).getUint32(8, true) === 0;   // a one-message frame
      if (whole) sent.push(decodeFrame(m.subarray(16)));
      return spy(m);
    };
    const again = await room.host.generate([...PROMPT, 1, 2], { maxNewTokens: 2 });
    expect(again.stats.promptReused).toBe(PROMPT.length);             // restored its answer checkpoint (a restore op)
    expect(sent.filter((f) => f.kind === 'checkpoint').map((f) => (f as { op: string }).op)).toEqual(['restore', 'pin']);
  });
});

test('with ckpt=1 an evicted answer checkpoint is released on the guest (a release op)', async () => {
  room = await makeRoom(tinyFiles(HYBRID), { ckpt: 1 });
  room.addGuest('ga1111');
  await dealt(room, [['host', [0, 1]], ['ga1111', [1, 4]]]);
  const ops: string[] = [];
  const link = room.links[0]![0];
  const send = link.send.bind(link);
  link.send = (m: Uint8Array) => {
    if ((m[3]! & 1) === 1 && new DataView(m.buffer, m.byteOffset).getUint32(8, true) === 0) {
      const f = decodeFrame(m.subarray(16));
      if (f.kind === 'checkpoint') ops.push(`${f.op}@${f.position}`);
    }
    return send(m);
  };
  const first = await room.host.generate(PROMPT, { maxNewTokens: 2, pinAt: 6 });
  // The next turn extends the cache (the live end is reused): its answer checkpoint evicts the first one.
  const next = await room.host.generate([...PROMPT, first.ids[0]!, 9, 9], { maxNewTokens: 2, pinAt: 6 });
  expect(next.stats).toMatchObject({ promptReused: 21, promptComputed: 2 });
  // Going back to the pin drops the snapshots past it on the guest itself: no release is needed for those.
  await room.host.generate([...PROMPT.slice(0, 6), 5, 6, 7], { maxNewTokens: 2, pinAt: 6 });
  expect(ops).toEqual(['pin@6', 'pin@20', 'pin@23', 'release@20', 'restore@6', 'pin@9']);
  expect(room.host.deviceList().find((d) => d.id === 'ga1111')!.snapshots).toBe(2);
});

test('a guest validates every checkpoint frame from the host: pin off the cache length, too many snapshots, restore with none', async () => {
  const files = tinyFiles(HYBRID);
  const [hostEnd, guestEnd] = memoryLinkPair();
  const guest = new RoomGuest({
    roomId: ROOM_ID, deviceId: 'guest01', name: 'Guest', caps: caps(), store: new MemoryByteStore(),
    loadWeights: (src, r) => loadWeights(src, r), resolveSource: async () => new CountingMemorySource(files),
    createEngine: async (w, { ctx, range }) => new ReferenceEngine(w, { ctx, range, maxSnapshots: 2 }),
  });
  const host = new FrameChannel(hostEnd);
  const got: Frame[] = [];
  host.onFrame = (f) => { if (f.kind !== 'heartbeat') got.push(f); };
  guest.attach(guestEnd);
  await until(() => got.some((f) => f.kind === 'hello'), 'hello');
  await host.send({ kind: 'assign', epoch: 1, model: 'mem', modelKey: 'k', range: [0, 2], ctx: 64, prev: '', next: '' });
  await until(() => got.some((f) => f.kind === 'ready'), 'ready');
  let seq = 0;
  const answer = async (f: Frame) => {
    const n = got.length;
    await host.send(f);
    await until(() => got.length > n, `an answer to ${f.kind}`);
    return got[got.length - 1]!;
  };
  const cp = (op: 'pin' | 'restore' | 'release', position: number) => answer({ kind: 'checkpoint', epoch: 1, seq: ++seq, op, position });
  const fwd = (position: number) => answer({ kind: 'forward', epoch: 1, seq: ++seq, range: [0, 2], position, count: 1, hidden: new Float32Array(64).fill(0.01 * (position + 1)) });
  expect(await cp('pin', 3)).toMatchObject({ kind: 'error', code: 'out-of-order', message: expect.stringMatching(/cannot pin at 3, the cache holds 0/) });
  for (const p of [0, 1]) {
    expect(await fwd(p)).toMatchObject({ kind: 'result', kvLength: p + 1 });
    expect(await cp('pin', p + 1)).toEqual({ kind: 'ack', epoch: 1, seq, kvLength: p + 1 });
  }
  expect(await fwd(2)).toMatchObject({ kind: 'result', kvLength: 3 });
  expect(await cp('pin', 3)).toMatchObject({ kind: 'error', code: 'snapshot-limit', message: expect.stringMatching(/at most 2 recurrent-state snapshots/) });
  expect(await cp('restore', 2)).toMatchObject({ kind: 'ack', kvLength: 2 });
  expect(await cp('restore', 1)).toMatchObject({ kind: 'ack', kvLength: 1 });
  expect(await cp('release', 1)).toMatchObject({ kind: 'ack', kvLength: 1 });
  expect(await fwd(1)).toMatchObject({ kind: 'result', kvLength: 2 });
  expect(await cp('restore', 1)).toMatchObject({ kind: 'error', code: 'snapshot-missing' });
  await guest.leave('done');
});

test('the host refuses an ack that reports the wrong cache length', async () => {
  const sent: Frame[] = [];
  const remote = new ChainEngine([{ device: { id: 'liar00', name: 'Liar' }, range: [0, 2], send: async (f) => { sent.push(f); }, recurrent: true }], 1, 8);
  const pin = remote.snapshot(0);
  await until(() => sent.length === 1, 'the pin frame');
  expect(sent[0]).toMatchObject({ kind: 'checkpoint', op: 'pin', position: 0 });
  expect(remote.handle('liar00', { kind: 'ack', epoch: 1, seq: 1, kvLength: 5 })).toBeInstanceOf(ProtocolError);
  await expect(pin).rejects.toThrow(/acknowledged pin seq 1 with cache 5, expected 0/);
  // A dense guest is never sent snapshot frames at all.
  const dense = new ChainEngine([{ device: { id: 'dense0', name: 'Dense' }, range: [0, 2], send: async (f) => { sent.push(f); } }], 1, 8);
  await dense.snapshot(0);
  await dense.releaseSnapshot(0);
  expect(sent).toHaveLength(1);
});

describe('dealing a hybrid by bytes', () => {
  let config: ModelConfig;
  let plan: Awaited<ReturnType<typeof planWeights>>;
  beforeAll(async () => {
    const src = new CountingMemorySource(tinyFiles(HYBRID));
    config = (await readModelConfig(src)).config;
    plan = await planWeights(src, { layers: [0, 4], embedding: true, head: true });
  });

  test('a Gated DeltaNet layer weighs its state live and per snapshot, an attention layer its KV', () => {
    const s = snapshotsForCkpt(4);
    expect(s).toBe(5);
    const cost = dealCostFromPlan(config, plan.layerBytes, plan.fixedBytes, 256, s);
    const state = linearStateBytes(config);
    expect(state).toBe(((4 - 1) * (2 * 2 * 16 + 4 * 16) + 4 * 16 * 16) * 4);
    expect(cost.layerBytes).toEqual([0, 1, 2, 3].map((i) => plan.layerBytes.get(i)! + (i % 2 === 0 ? 6 * state : kvBytesPerLayer(config, 256))));
    expect(snapshotBytes(config, [0, 4])).toBe(2 * state);
    // The estimate from the config alone (no plan) is within a few percent of the exact bytes.
    const est = dealCost(config, 'safetensors', 256, s).layerBytes!;
    est.forEach((b, i) => expect(Math.abs(b - cost.layerBytes![i]!) / cost.layerBytes![i]!).toBeLessThan(0.05));
  });

  test('the cuts follow those bytes: a device whose budget fits only the two cheaper layers gets them', () => {
    const cost = dealCostFromPlan(config, plan.layerBytes, plan.fixedBytes, 4096, 5);
    const b = cost.layerBytes!;
    expect(b[0]).not.toBe(b[1]);
    const devices = [
      { id: 'host', name: 'host', memoryBudgetBytes: shareTotal(cost, [0, 2], 0), speed: 1 },
      { id: 'a', name: 'a', memoryBudgetBytes: 1e12, speed: 1 },
    ];
    expect(dealLayers(devices, cost).map((e) => e.range)).toEqual([[0, 2], [2, 4]]);
  });
});
