// Direct hops (issue 15 item 1): guests holding consecutive layers pass hidden states straight to each
// other, host → A → B → host. Counted on the wire: N + 1 frames of activations per decode token for N
// guests (2N with direct hops off). Exactness against one device, a chain member lost or a hop broken
// mid-request (stopped, named), re-wired by the next deal, and what a chain guest refuses.
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { ChainEngine } from '../../../src/room/chain-engine.ts';
import type { HostEvent } from '../../../src/room/host.ts';
import { chunkFrame, WIRE_HEADER, FrameChannel, type MessageLink } from '../../../src/room/wire.ts';
import { encodeFrame, PROTOCOL_VERSION } from '../../../src/room/protocol.ts';
import { memoryLinkPair } from '../../../src/room/memory-link.ts';
import { caps, CountingMemorySource, makeRoom, ROOM_ID, singleDeviceTokens, tinyFiles, TINY, until, type TestRoom } from './helpers.ts';

const PROMPT = [17, 300, 5, 42, 99, 7, 250, 11, 3, 480, 64, 128, 1, 2, 200, 77, 31, 8, 150, 400, 9, 33, 260, 12];
const FORWARD = 5, RESULT = 6;   // frame kind codes (protocol.ts)
let files: Map<string, Uint8Array>;
let expected: number[];
let room: TestRoom | undefined;

beforeAll(async () => {
  files = tinyFiles();
  expected = await singleDeviceTokens(files, PROMPT, 32);
});
afterEach(async () => { await room?.close(); room = undefined; });

/** Counts frames carrying activations (forward, result) on the links it wraps: what crosses the network. */
class HopCounter {
  frames = 0;
  private count(m: Uint8Array): void {
    const first = new DataView(m.buffer, m.byteOffset).getUint32(8, true) === 0;   // chunk 0 of its frame
    if (first && (m[WIRE_HEADER] === FORWARD || m[WIRE_HEADER] === RESULT)) this.frames++;
  }
  /** Every frame a guest sends, and (on its host link) every frame it receives: each frame is counted once. */
  wrap(inner: MessageLink, countIncoming: boolean): MessageLink {
    const counter = this;
    return {
      send(m) { counter.count(m); inner.send(m); },
      bufferedAmount: () => inner.bufferedAmount(),
      drained: () => inner.drained(),
      isOpen: () => inner.isOpen(),
      close: () => inner.close(),
      get onMessage() { return inner.onMessage; },
      set onMessage(fn) { inner.onMessage = fn && ((m) => { if (countIncoming) counter.count(m); fn(m); }); },
      get onClose() { return inner.onClose; },
      set onClose(fn) { inner.onClose = fn; },
    };
  }
}

const ids = ['ga1111', 'gb2222', 'gc3333'];
/** Host [0, 1), then the guests share layers 1..4 in order. */
function dealFor(n: number): { deviceId: string; range: [number, number] }[] {
  const cuts = n === 1 ? [1, 4] : n === 2 ? [1, 2, 4] : [1, 2, 3, 4];
  return [{ deviceId: 'host', range: [0, 1] }, ...ids.slice(0, n).map((deviceId, i) => ({ deviceId, range: [cuts[i]!, cuts[i + 1]!] as [number, number] }))];
}

async function roomOf(n: number, opts: { directHops?: boolean; counter?: HopCounter; dial?: (id: string) => boolean } = {}): Promise<TestRoom> {
  const r = await makeRoom(files, opts.directHops === false ? { directHops: false } : {});
  // A guest's host link is wrapped on the guest's side (it counts what it receives and sends); its
  // direct channels count what it sends.
  for (const id of ids.slice(0, n)) {
    r.addGuest(id, { dial: opts.dial?.(id) ?? true, ...(opts.counter ? { wrap: wrapFor(opts.counter) } : {}) });
  }
  await until(() => r.host.deviceList().length === n + 1, 'guests to say hello');
  await r.host.setManualDeal(dealFor(n));
  return r;
}
function wrapFor(counter: HopCounter): (l: MessageLink) => MessageLink {
  let first = true;   // helpers wrap the host link first, then each dialed channel
  return (l) => { const w = counter.wrap(l, first); first = false; return w; };
}

/** Frames per decode token, measured between consecutive tokens (prefill excluded). */
async function hopsPerToken(r: TestRoom, counter: HopCounter, n = 12): Promise<{ ids: number[]; perToken: number[] }> {
  const perToken: number[] = [];
  let last = -1;
  const out = await r.host.generate(PROMPT, {
    maxNewTokens: n,
    onToken: () => { if (last >= 0) perToken.push(counter.frames - last); last = counter.frames; },
  });
  return { ids: out.ids, perToken };
}

describe('direct hops: host → A → B → host', () => {
  test.each([2, 3])('%i guests in one chain: 32 greedy tokens identical to one device; prompt reused from every cache', async (n) => {
    room = await roomOf(n);
    expect(room.host.chains).toEqual([ids.slice(0, n)]);
    const chain = room.host.engine!.stages[1] as ChainEngine;
    expect([chain.depth, chain.range]).toEqual([n, [1, 4]]);
    const r1 = await room.host.generate(PROMPT, { maxNewTokens: 32 });
    expect([r1.finish, r1.ids]).toEqual(['cap', expected]);
    const r2 = await room.host.generate([...PROMPT, ...r1.ids.slice(0, 8)], { maxNewTokens: 24 });
    expect(r2.ids).toEqual(expected.slice(8));
    expect([r2.stats.promptReused, r2.stats.promptComputed]).toEqual([PROMPT.length, 8]); // a truncate reached every device of the chain
    expect(room.guests.map((g) => g.route)).toEqual(ids.slice(0, n).map((_, i) => ({ prev: ids[i - 1] ?? '', next: i < n - 1 ? ids[i + 1] : '' })));
  });

  test.each([1, 2, 3])('%i guest(s): N + 1 frames of activations per decode token (2N through the host)', async (n) => {
    const direct = new HopCounter();
    room = await roomOf(n, { counter: direct });
    const a = await hopsPerToken(room, direct);
    expect(a.ids).toEqual(expected.slice(0, 12));
    expect(a.perToken).toEqual(new Array(11).fill(n + 1));
    // The route the room panel shows is the one the frames took.
    const names = ids.slice(0, n).map((id) => `Guest ${id}`);
    expect(room.host.route).toEqual({ stops: ['Host', ...names, 'Host'], hops: a.perToken[0] });
    await room.close();
    const relayed = new HopCounter();
    room = await roomOf(n, { counter: relayed, directHops: false });
    expect(room.host.chains).toEqual(ids.slice(0, n).map((id) => [id]));
    const b = await hopsPerToken(room, relayed);
    expect(b.ids).toEqual(expected.slice(0, 12));
    expect(room.host.route).toEqual({ stops: ['Host', ...names.flatMap((g) => [g, 'Host'])], hops: b.perToken[0] });
    expect(b.perToken).toEqual(new Array(11).fill(2 * n));
  });

  test('each guest of a chain reports its own layers\' time: a slow device in the middle shows as the slow one', async () => {
    room = await makeRoom(files);
    room.addGuest('ga1111');
    room.addGuest('gb2222', { slowMs: 25 });
    room.addGuest('gc3333');
    await until(() => room!.host.deviceList().length === 4, 'hellos');
    await room.host.setManualDeal(dealFor(3));
    expect((await room.host.generate(PROMPT, { maxNewTokens: 12 })).ids).toEqual(expected.slice(0, 12));
    const speed = Object.fromEntries(room.host.deviceList().map((d) => [d.id, d.tokensPerSecond]));
    expect(speed['gb2222']).toBeGreaterThan(0);
    expect(speed['ga1111']).toBeGreaterThan(3 * speed['gb2222']!);
    expect(speed['gc3333']).toBeGreaterThan(3 * speed['gb2222']!);
  });

  test('a batch of k + 1 rows runs through the chain at once, and truncate cuts every device back', async () => {
    room = await roomOf(3);
    const chain = room.host.engine!.stages[1] as ChainEngine;
    const src = new CountingMemorySource(files);
    const alone = new ReferenceEngine(await loadWeights(src, { layers: [1, 4] }), { ctx: 256, range: [1, 4] });
    const H = TINY.hidden!;
    const rows = new Float32Array(5 * H).map((_, i) => Math.sin(i * 0.37));
    const want = await alone.runLayers([1, 4], 0, rows);
    expect(Array.from(await chain.runLayers([1, 4], 0, rows))).toEqual(Array.from(want));
    await Promise.all([chain.truncate(2), alone.truncate(2)]);     // reject 3 of 5 drafted rows
    expect(chain.kvLength()).toBe(2);
    const again = rows.subarray(2 * H);
    expect(Array.from(await chain.runLayers([1, 4], 2, again))).toEqual(Array.from(await alone.runLayers([1, 4], 2, again)));
    expect(chain.sent).toEqual({ forward: 2, checkpoint: 3 }); // a checkpoint frame went to each device directly
  });

  test('several requests in flight at once (pipelined chunks) and a cut ordered right behind them come out in order', async () => {
    room = await roomOf(3);
    const chain = room.host.engine!.stages[1] as ChainEngine;
    const src = new CountingMemorySource(files);
    const alone = new ReferenceEngine(await loadWeights(src, { layers: [1, 4] }), { ctx: 256, range: [1, 4] });
    const H = TINY.hidden!;
    const rows = new Float32Array(12 * H).map((_, i) => Math.cos(i * 0.23));
    const chunk = (c: number) => rows.subarray(c * 3 * H, (c + 1) * 3 * H);
    // Four chunks sent before any answer, then a cut to 7 and two rows again, none awaited in between.
    const outs = [0, 1, 2, 3].map((c) => chain.runLayers([1, 4], c * 3, chunk(c)));
    const cut = chain.truncate(7);
    const redo = chain.runLayers([1, 4], 7, rows.subarray(7 * H, 9 * H));
    expect(chain.inFlight).toBe(6);
    const got = await Promise.all(outs);
    await cut;
    const want = [];
    for (let c = 0; c < 4; c++) want.push(Array.from(await alone.runLayers([1, 4], c * 3, chunk(c))));
    expect(got.map((g) => Array.from(g))).toEqual(want);
    await alone.truncate(7);
    expect(Array.from(await redo)).toEqual(Array.from(await alone.runLayers([1, 4], 7, rows.subarray(7 * H, 9 * H))));
  });
});

describe('losing a chain member', () => {
  test('the middle guest of 3 vanishes mid-generation: noticed within 2 s, stopped naming it; re-dealt, re-wired, same tokens', async () => {
    room = await roomOf(3);
    const left: HostEvent[] = [];
    room.host.on((e) => { if (e.type === 'left') left.push(e); });
    let vanishedAt = 0;
    const r = await room.host.generate(PROMPT, {
      maxNewTokens: 200,
      onToken: (_id, got) => { if (got.length === 5) { vanishedAt = performance.now(); room!.vanish('gb2222'); } },
    });
    expect(r.finish).toBe('stopped');
    expect(r.note).toMatch(/device "Guest gb2222" left the room/);
    const gone = left.find((e) => e.type === 'left' && e.device.id === 'gb2222') as Extract<HostEvent, { type: 'left' }>;
    expect(gone.detectedAt - vanishedAt).toBeLessThan(2000);
    expect(room.host.deviceList().map((d) => d.id)).toEqual(['host', 'ga1111', 'gc3333']);
    await room.host.setManualDeal([{ deviceId: 'host', range: [0, 1] }, { deviceId: 'ga1111', range: [1, 3] }, { deviceId: 'gc3333', range: [3, 4] }]);
    expect(room.host.chains).toEqual([['ga1111', 'gc3333']]);
    expect(room.guests[0]!.route).toEqual({ prev: '', next: 'gc3333' });
    const again = await room.host.generate(PROMPT, { maxNewTokens: 32 });
    expect(again.ids).toEqual(expected);
    expect(again.stats.promptComputed).toBe(PROMPT.length);
  });

  test('a direct channel that closes while both guests stay: stopped naming the hop, nobody dropped; the next deal re-wires it', async () => {
    room = await roomOf(2);
    const r = await room.host.generate(PROMPT, {
      maxNewTokens: 200,
      onToken: (_id, got) => { if (got.length === 5) room!.hops.find(([from]) => from === 'ga1111')![2][0].close(); },
    });
    expect(r.finish).toBe('stopped');
    expect(r.note).toMatch(/direct hop "Guest ga1111" → "Guest gb2222" closed while both devices are still here/);
    expect(room.host.deviceList().map((d) => d.id)).toEqual(['host', 'ga1111', 'gb2222']);
    await room.host.redeal();
    expect(room.host.chains).toEqual([['ga1111', 'gb2222']]);
    expect((await room.host.generate(PROMPT, { maxNewTokens: 32 })).ids).toEqual(expected);
  });

  test('a hop that cannot be opened is dealt through the host instead: same tokens', async () => {
    const counter = new HopCounter();
    room = await roomOf(3, { counter, dial: (id) => id !== 'gb2222' });   // B cannot open its channel to C
    expect(room.host.chains).toEqual([['ga1111', 'gb2222'], ['gc3333']]);
    const { ids: got, perToken } = await hopsPerToken(room, counter, 32);
    expect(got).toEqual(expected);
    expect(new Set(perToken)).toEqual(new Set([5]));   // host → A → B → host → C → host
    expect(room.host.route).toEqual({ stops: ['Host', 'Guest ga1111', 'Guest gb2222', 'Host', 'Guest gc3333', 'Host'], hops: 5 });
  });
});

describe('a chain that stalls', () => {
  test('a guest that never passes rows on: stopped naming the chain; next deal its hops go through the host, and it is named and dropped', async () => {
    room = await makeRoom(files, { requestTimeoutMs: 300, requestTimeoutPerTokenMs: 10 });
    // "Sloth" says it is ready for every deal and then never does anything with a forward.
    const [hostSide, slothSide] = memoryLinkPair();
    room.host.acceptLink(hostSide, { peerDeviceId: 'sloth001' });
    const sloth = new FrameChannel(slothSide);
    sloth.onFrame = (f) => {
      if (f.kind === 'heartbeat' && !f.reply) sloth.trySend({ kind: 'heartbeat', reply: true, sentAt: f.sentAt });
      if (f.kind === 'assign') sloth.trySend({ kind: 'ready', epoch: f.epoch, networkBytes: 0, cacheBytes: 0, ms: 1 });
    };
    sloth.trySend({ kind: 'hello', protocol: PROTOCOL_VERSION, roomId: ROOM_ID, deviceId: 'sloth001', name: 'Sloth', caps: caps() });
    room.addGuest('gb2222');
    await until(() => room!.host.deviceList().length === 3, 'hellos');
    const deal = [{ deviceId: 'host', range: [0, 1] as [number, number] }, { deviceId: 'sloth001', range: [1, 2] as [number, number] }, { deviceId: 'gb2222', range: [2, 4] as [number, number] }];
    await room.host.setManualDeal(deal);
    expect(room.host.chains).toEqual([['sloth001', 'gb2222']]);
    const r = await room.host.generate(PROMPT, { maxNewTokens: 4 });
    expect(r.finish).toBe('stopped');
    expect(r.note).toMatch(/chain "Sloth" → "Guest gb2222": the chain did not answer "forward" seq \d+ in \d+ ms; its hops go through the host from the next deal/);
    await room.host.setManualDeal(deal);
    expect(room.host.chains).toEqual([['sloth001'], ['gb2222']]);
    const named = await room.host.generate(PROMPT, { maxNewTokens: 4 });
    expect(named.finish).toBe('stopped');
    expect(named.note).toMatch(/device "Sloth" left the room \(it did not answer "forward" seq \d+ in \d+ ms\)/);
    sloth.close();
  });
});

describe('what a chain guest accepts', () => {
  test('a forward from a device that is not its previous hop, or from the host to a guest that is not first, is refused by name', async () => {
    room = await roomOf(2);
    const errors: string[] = [];
    room.host.on((e) => { if (e.type === 'frame-error') errors.push(e.error.message); });
    const b = room.guests[1]!;
    const [evil, bSide] = memoryLinkPair();
    b.acceptNeighbour(bSide, 'evil0001');
    const ch = new FrameChannel(evil);
    const hidden = new Float32Array(TINY.hidden!);
    await ch.send({ kind: 'forward', epoch: room.host.currentEpoch, seq: 1, range: [2, 4], position: 0, count: 1, hidden });
    await until(() => errors.length > 0, 'the refusal');
    expect(errors[0]).toMatch(/"forward" frame from device "evil0001", which is not this device's previous hop \("ga1111"\)/);
    // The host's own channel to B may carry checkpoints, never a forward: in this deal B's come from A.
    b.frameChannel!.receive(chunkFrame(encodeFrame({ kind: 'forward', epoch: room.host.currentEpoch, seq: 1, range: [2, 4], position: 0, count: 1, hidden }), 99)[0]!);
    await until(() => errors.length > 1, 'the second refusal');
    expect(errors.join('\n')).toMatch(/"forward" seq 1 came from the host; in this deal it comes from device "ga1111"/);
    // The room is unharmed: the same tokens.
    expect((await room.host.generate(PROMPT, { maxNewTokens: 8 })).ids).toEqual(expected.slice(0, 8));
    expect(b.stats.badFrames).toBe(2);
  });

  test('forged forwards from a stranger, with every seq a request could have, fail no request', async () => {
    room = await roomOf(2);
    const [evil, bSide] = memoryLinkPair();
    room.guests[1]!.acceptNeighbour(bSide, 'evil0001');
    const ch = new FrameChannel(evil);
    const hidden = new Float32Array(TINY.hidden!);
    const epoch = room.host.currentEpoch;
    const r = await room.host.generate(PROMPT, {
      maxNewTokens: 24,
      onToken: (_id, got) => {
        if (got.length !== 3) return;
        for (let seq = 1; seq <= 60; seq++) ch.trySend({ kind: 'forward', epoch, seq, range: [2, 4], position: 0, count: 1, hidden });
      },
    });
    expect([r.finish, r.ids]).toEqual(['cap', expected.slice(0, 24)]);
    expect(room.guests[1]!.stats.badFrames).toBe(60);
  });

  test('a peer opening direct channels in a loop never pushes out the channel from the previous device', async () => {
    room = await roomOf(2);
    const b = room.guests[1]!;
    for (let i = 0; i < 12; i++) b.acceptNeighbour(memoryLinkPair()[1], `loop${String(i).padStart(4, '0')}`);
    expect((await room.host.generate(PROMPT, { maxNewTokens: 8 })).ids).toEqual(expected.slice(0, 8));
  });
});
