// The room end to end in Node: host + guests over in-memory links, ReferenceEngines, a tiny checkpoint.
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { planWeights } from '../../../src/model/load-weights.ts';
import { PromptLookupDrafter } from '../../../src/model/speculative/prompt-lookup.ts';
import type { Drafter } from '../../../src/model/speculative/types.ts';
import { decodeFrame, type FrameOf } from '../../../src/room/protocol.ts';
import { WIRE_HEADER, type MessageLink } from '../../../src/room/wire.ts';
import { CountingMemorySource, makeRoom, singleDeviceTokens, tinyFiles, until, type TestRoom } from './helpers.ts';

const PROMPT = [17, 300, 5, 42, 99, 7, 250, 11, 3, 480, 64, 128, 1, 2, 200, 77, 31, 8, 150, 400, 9, 33, 260, 12];
let files: Map<string, Uint8Array>;
let expected: number[];
let room: TestRoom | undefined;

beforeAll(async () => {
  files = tinyFiles();
  expected = await singleDeviceTokens(files, PROMPT, 32);
  expect(new Set(expected).size).toBeGreaterThan(4); // not degenerate
});
afterEach(async () => { await room?.close(); room = undefined; });

async function dealt(r: TestRoom, deal: [string, [number, number]][], devices = r.guests.length + 1): Promise<void> {
  await until(() => r.host.deviceList().length === devices, 'guests to say hello');
  await r.host.setManualDeal(deal.map(([deviceId, range]) => ({ deviceId, range })));
}

describe('split generation equals the single device', () => {
  test.each([
    ['3-way', [['host', [0, 1]], ['ga1111', [1, 3]], ['gb2222', [3, 4]]]],
    ['2-way', [['host', [0, 2]], ['ga1111', [2, 4]]]],
    ['the host holds only layer 0 (the least it may: issue 12 item 7)', [['host', [0, 1]], ['ga1111', [1, 2]], ['gb2222', [2, 4]]]],
  ] as const)('%s: 32 greedy tokens are identical', async (_name, deal) => {
    room = await makeRoom(files);
    room.addGuest('ga1111');
    if (deal.some(([id]) => id === 'gb2222')) room.addGuest('gb2222');
    await dealt(room, deal.map(([id, r]) => [id, [r[0], r[1]]]));
    expect(room.host.deviceList().map((d) => [d.id, d.range, d.status])).toEqual(
      expect.arrayContaining(deal.map(([id, r]) => [id, [r[0], r[1]], 'ready'])),
    );
    const r1 = await room.host.generate(PROMPT, { maxNewTokens: 32 });
    expect(r1.finish).toBe('cap');
    expect(r1.ids).toEqual(expected);
    // again, with the prompt reused from every device's cache: same tokens, nothing recomputed
    const r2 = await room.host.generate([...PROMPT, ...r1.ids.slice(0, 8)], { maxNewTokens: 24 });
    expect(r2.ids).toEqual(expected.slice(8));
    expect([r2.stats.promptReused, r2.stats.promptComputed]).toEqual([PROMPT.length, 8]); // restored the answer checkpoint on every device
  });

  test.each([
    [0, 0],            // ckpt=0: no checkpoints at all, the pinned one included: everything is recomputed
    [1, PROMPT.length], // ckpt=1: the answer checkpoint at the end of the prompt is restored on every device
  ])('the host passes ckpt=%i to the room\'s generator (reused %i)', async (ckpt, reused) => {
    room = await makeRoom(files, { ckpt });
    room.addGuest('ga1111');
    await dealt(room, [['host', [0, 2]], ['ga1111', [2, 4]]]);
    const r1 = await room.host.generate(PROMPT, { maxNewTokens: 16, pinAt: 6 });
    expect(r1.ids).toEqual(expected.slice(0, 16));
    const r2 = await room.host.generate([...PROMPT, ...r1.ids.slice(0, 4)], { maxNewTokens: 4, pinAt: 6 });
    expect(r2.ids).toEqual(expected.slice(4, 8));
    expect(r2.stats.promptReused).toBe(reused);
    expect(r2.stats.promptComputed).toBe(PROMPT.length + 4 - reused);
  });

  test('speculative decoding over the links (3 devices): the single device\'s tokens, rejected drafts cut on every guest', async () => {
    room = await makeRoom(files);
    room.addGuest('ga1111');
    room.addGuest('gb2222');
    await dealt(room, [['host', [0, 1]], ['ga1111', [1, 3]], ['gb2222', [3, 4]]]);
    // The right answer with every third drafted token wrong: passes keep some and reject some.
    const drafter: Drafter = { name: 'test', draft: ({ context, max }) => {
      const at = context.length - PROMPT.length;
      return { tokens: expected.slice(at, at + max).map((t, i) => (i === 2 ? (t + 1) % 512 : t)) };
    } };
    const r1 = await room.host.generate(PROMPT, { maxNewTokens: 32, speculate: { drafter } });
    expect(r1.ids).toEqual(expected);
    expect(r1.stats.accepted).toBeGreaterThan(10);
    expect(r1.stats.drafted).toBeGreaterThan(r1.stats.accepted!);
    // The caches are plain decoding's: a continuation from them gives the same tokens again.
    const r2 = await room.host.generate([...PROMPT, ...expected.slice(0, 8)], { maxNewTokens: 24, speculate: { drafter: new PromptLookupDrafter() } });
    expect(r2.ids).toEqual(expected.slice(8));
    expect(r2.stats.promptComputed).toBe(8);
  });

  test('each device reports how fast it ran its layers; a device with no layers reports 0', async () => {
    room = await makeRoom(files);
    room.addGuest('ga1111');
    room.addGuest('gb2222');
    await dealt(room, [['host', [0, 1]], ['ga1111', [1, 4]], ['gb2222', [4, 4]]]);
    expect(room.host.deviceList().map((d) => d.tokensPerSecond)).toEqual([0, 0, 0]); // nothing ran yet
    await room.host.generate(PROMPT, { maxNewTokens: 8 });
    const speed = Object.fromEntries(room.host.deviceList().map((d) => [d.id, d.tokensPerSecond]));
    expect(speed.host).toBeGreaterThan(0);
    expect(speed.ga1111).toBeGreaterThan(0);
    expect(speed.gb2222).toBe(0);
    // One source: the guest's page shows the figure the host's card shows for it (its own layers' time).
    const [ga, gb] = room.guests;
    expect(Math.abs(ga!.speedThisDeal - speed.ga1111!) / speed.ga1111!).toBeLessThan(1e-3);
    expect(gb!.speedThisDeal).toBe(0);
  });

  test('pipelined prefill (micro-chunks of 4) and unpipelined give the same tokens', async () => {
    room = await makeRoom(files, { microChunk: 4 });
    room.addGuest('ga1111');
    await dealt(room, [['host', [0, 2]], ['ga1111', [2, 4]]]);
    expect((await room.host.generate(PROMPT, { maxNewTokens: 32 })).ids).toEqual(expected);
    room.host.engine!.microChunk = 0;
    await room.host.generate([1], { maxNewTokens: 1 }); // other prompt: resets the caches
    expect((await room.host.generate(PROMPT, { maxNewTokens: 32 })).ids).toEqual(expected);
  });

  test('hidden states past the forward bound travel in several forwards of at most that many rows, host → guest → guest: the same tokens', async () => {
    const H = 64, rows = 5;                     // TINY's hidden size; a bound of 5 rows (MAX_FORWARD_BYTES is 16 MiB)
    room = await makeRoom(files, { microChunk: 0, maxForwardBytes: rows * H * 4 });
    const counts: number[] = [];
    /** The guest's incoming forwards' row counts (each small frame is one wire message: header, then the frame). */
    const watch = (l: MessageLink): MessageLink => {
      const w: MessageLink = {
        send: (m) => l.send(m), bufferedAmount: () => l.bufferedAmount(), drained: () => l.drained(), isOpen: () => l.isOpen(), close: () => l.close(),
        onMessage: null, onClose: null,
      };
      l.onMessage = (m) => {
        if (m[3] === 1 && m[WIRE_HEADER] === 5) counts.push((decodeFrame(m.subarray(WIRE_HEADER)) as FrameOf<'forward'>).count);   // kind 5: forward
        w.onMessage?.(m);
      };
      l.onClose = (why) => w.onClose?.(why);
      return w;
    };
    room.addGuest('ga1111', { wrap: watch });
    room.addGuest('gb2222');
    await dealt(room, [['host', [0, 1]], ['ga1111', [1, 3]], ['gb2222', [3, 4]]]);
    expect((await room.host.generate(PROMPT, { maxNewTokens: 32 })).ids).toEqual(expected);
    expect(counts.slice(0, 5)).toEqual([5, 5, 5, 5, 4]);   // the 24-token prompt
    expect(Math.max(...counts)).toBeLessThanOrEqual(rows);
  });

  test('an automatic deal splits by speed and still matches', async () => {
    room = await makeRoom(files, { autoRedeal: true });
    room.addGuest('ga1111');
    await until(() => room!.host.deviceList().length === 2, 'hello');
    await room.host.whenReady();
    expect(room.host.currentDeal.map((e) => e.range)).toEqual([[0, 2], [2, 4]]);
    expect((await room.host.generate(PROMPT, { maxNewTokens: 32 })).ids).toEqual(expected);
  });
});

describe('devices leaving', () => {
  test('a guest that vanishes mid-generation: stopped within 2 s naming it; after re-deal the same tokens', async () => {
    room = await makeRoom(files);
    room.addGuest('ga1111');
    room.addGuest('gb2222');
    await dealt(room, [['host', [0, 1]], ['ga1111', [1, 3]], ['gb2222', [3, 4]]]);
    let vanishedAt = 0;
    const result = room.host.generate(PROMPT, {
      maxNewTokens: 200,
      onToken: (_id, ids) => { if (ids.length === 5) { vanishedAt = performance.now(); room!.links[1]![1].vanish(); } },
    });
    const r = await result;
    const noticedMs = performance.now() - vanishedAt;
    expect(r.finish).toBe('stopped');
    expect(r.note).toMatch(/device "Guest gb2222" left the room \(no answer for \d+ ms\)/);
    expect(noticedMs).toBeLessThan(2000);
    expect(room.host.deviceList().map((d) => d.id)).toEqual(['host', 'ga1111']);
    await room.host.setManualDeal(null);
    const again = await room.host.generate(PROMPT, { maxNewTokens: 32 });
    expect(again.ids).toEqual(expected);
    expect(again.stats.promptComputed).toBe(PROMPT.length); // recomputed what was lost
  });

  test('a goodbye is noticed at once, and removing a device tells it', async () => {
    room = await makeRoom(files);
    const a = room.addGuest('ga1111');
    room.addGuest('gb2222');
    await until(() => room!.host.deviceList().length === 3, 'hello');
    const left: string[] = [];
    room.host.on((e) => { if (e.type === 'left') left.push(`${e.device.id}: ${e.why}`); });
    const removed: string[] = [];
    a.on((e) => { if (e.type === 'removed') removed.push(e.reason); });
    room.host.remove('ga1111');
    await room.guests[1]!.leave('pagehide');
    await until(() => left.length === 2, 'both departures');
    expect(left).toEqual(['ga1111: removed by the host', 'gb2222: said goodbye: pagehide']);
    await until(() => removed.length === 1, 'the removed guest to hear it');
    expect(removed).toEqual(['removed by the host']);
  });
});

describe('loading', () => {
  test('each guest reads only its layers; a rejoining guest reads 0 bytes', async () => {
    room = await makeRoom(files);
    const storeA = room.addGuest('ga1111') && room.stores[0]!;
    room.addGuest('gb2222');
    await dealt(room, [['host', [0, 1]], ['ga1111', [1, 3]], ['gb2222', [3, 4]]]);
    const planner = new CountingMemorySource(files);
    const planA = await planWeights(planner, { layers: [1, 3] });
    const planB = await planWeights(planner, { layers: [3, 4] });
    const total = [...files.values()].reduce((a, f) => a + f.length, 0);
    expect(room.sources[1]!.bytesRead).toBe(planA.dataBytes + planA.metadataBytes);
    expect(room.sources[2]!.bytesRead).toBe(planB.dataBytes + planB.metadataBytes);
    expect(room.sources[1]!.bytesRead).toBeLessThan(total / 2);
    const info = room.host.deviceList().find((d) => d.id === 'ga1111')!;
    expect(info.networkBytes).toBe(room.sources[1]!.bytesRead);
    // "reload": the same device id comes back with its cache
    await room.guests[0]!.leave('reload');
    await until(() => room!.host.deviceList().length === 2, 'the leave');
    room.addGuest('ga1111', { store: storeA });
    await dealt(room, [['host', [0, 1]], ['ga1111', [1, 3]], ['gb2222', [3, 4]]], 3);
    expect(room.sources[3]!.bytesRead).toBe(0);
    const back = room.host.deviceList().find((d) => d.id === 'ga1111')!;
    expect([back.networkBytes, back.cacheBytes]).toEqual([0, planA.dataBytes + planA.metadataBytes]);
    expect((await room.host.generate(PROMPT, { maxNewTokens: 32 })).ids).toEqual(expected);
  });

  test('with a local folder on the host, guests load over the channel', async () => {
    room = await makeRoom(files, { modelUrl: '' });
    room.addGuest('ga1111');
    await dealt(room, [['host', [0, 2]], ['ga1111', [2, 4]]]);
    expect(room.sources[1]!.bytesRead).toBe(0); // the guest's own URL source was never used
    expect(room.host.deviceList().find((d) => d.id === 'ga1111')!.networkBytes).toBeGreaterThan(0);
    expect((await room.host.generate(PROMPT, { maxNewTokens: 32 })).ids).toEqual(expected);
  });
});

describe('re-dealing', () => {
  test('a deal asked for while another is still loading supersedes it instead of waiting forever', async () => {
    room = await makeRoom(files);
    room.addGuest('ga1111');
    await until(() => room!.host.deviceList().length === 2, 'hello');
    const first = room.host.setManualDeal([{ deviceId: 'host', range: [0, 1] }, { deviceId: 'ga1111', range: [1, 4] }]);
    const second = room.host.setManualDeal([{ deviceId: 'host', range: [0, 3] }, { deviceId: 'ga1111', range: [3, 4] }]);
    await expect(first).rejects.toThrow(/superseded/);
    await second;
    expect(room.host.currentDeal.map((e) => e.range)).toEqual([[0, 3], [3, 4]]);
    expect((await room.host.generate(PROMPT, { maxNewTokens: 32 })).ids).toEqual(expected);
  });
});
