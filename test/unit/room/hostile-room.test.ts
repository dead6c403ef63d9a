// Issue 39, items 1 and 3–5: a guest must not hold the room. A real RoomHost; the hostile guests speak raw
// frames over a memory link (a real FrameChannel), as a modified page would. Each test logs its time to
// refusal (ms from the attack's start to the host's answer) for the closing note, and checks that
// the model's files the host serves are the same bytes after the attack as before.
import { createHash } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { loadWeights } from '../../../src/model/load-weights.ts';
import type { LayerEngine } from '../../../src/model/engine-types.ts';
import { CARD_LIMITS } from '../../../src/room/card-limits.ts';
import { FRAME_BUDGET } from '../../../src/room/frame-budget.ts';
import { firstNonFinite } from '../../../src/room/finite-check.ts';
import { RoomGuest, type EngineFactory } from '../../../src/room/guest.ts';
import { memoryLinkPair } from '../../../src/room/memory-link.ts';
import { PROTOCOL_VERSION, type Frame } from '../../../src/room/protocol.ts';
import { MemoryByteStore } from '../../../src/room/weight-cache.ts';
import { FrameChannel } from '../../../src/room/wire.ts';
import { caps, CountingMemorySource, makeRoom, referenceFactory, ROOM_ID, singleDeviceTokens, tinyFiles, until, type TestRoom } from './helpers.ts';

const PROMPT = [17, 300, 5, 42, 99, 7, 250, 11, 3, 480, 64, 128];
let files: Map<string, Uint8Array>;
let expected: number[];
let before: string;
let room: TestRoom | undefined;
const raws: FrameChannel[] = [];
const timers: ReturnType<typeof setInterval>[] = [];

/** One hash over every file of the model: what the host serves must come out of an attack unchanged. */
const digest = (m: Map<string, Uint8Array>) => {
  const h = createHash('sha256');
  for (const [k, v] of [...m].sort(([a], [b]) => (a < b ? -1 : 1))) h.update(k).update(v);
  return h.digest('hex');
};

beforeAll(async () => {
  files = tinyFiles();
  before = digest(files);
  expected = await singleDeviceTokens(files, PROMPT, 8);
});
afterEach(async () => {
  for (const t of timers.splice(0)) clearInterval(t);
  for (const ch of raws.splice(0)) ch.close();
  await room?.close();
  room = undefined;
  expect(digest(files)).toBe(before);
});

/** A guest that speaks frames itself: says hello, answers heartbeats (unless `heartbeat` says otherwise), then does what `on` says. */
function rawGuest(r: TestRoom, o: { id: string; name: string; on?: (f: Frame, ch: FrameChannel) => void; heartbeat?: (f: Frame & { kind: 'heartbeat' }, ch: FrameChannel) => void }): { ch: FrameChannel; got: Frame[] } {
  const [hostSide, guestSide] = memoryLinkPair();
  r.host.acceptLink(hostSide, { peerDeviceId: o.id });
  const ch = new FrameChannel(guestSide);
  raws.push(ch);
  const got: Frame[] = [];
  ch.onFrame = (f) => {
    got.push(f);
    if (f.kind === 'heartbeat' && !f.reply) (o.heartbeat ?? ((h, c) => c.trySend({ kind: 'heartbeat', reply: true, sentAt: h.sentAt })))(f, ch);
    o.on?.(f, ch);
  };
  ch.trySend({ kind: 'hello', protocol: PROTOCOL_VERSION, roomId: ROOM_ID, deviceId: o.id, name: o.name, caps: caps() });
  return { ch, got };
}

/** A promise that fails the test (instead of hanging it) when `p` takes longer than `ms`. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([p, new Promise<T>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} did not finish in ${ms} ms`)), ms); })]).finally(() => clearTimeout(timer));
}

/** Records whether any engine it made was ever handed a non-finite value (what would enter its KV cache). */
function watchedFactory(poisonOut = false): { factory: EngineFactory; sawNonFinite: () => boolean; runs: () => number } {
  let saw = false, runs = 0;
  const factory: EngineFactory = async (weights, opts) => {
    const engine: LayerEngine = await referenceFactory(weights, opts);
    const run = engine.runLayers.bind(engine);
    engine.runLayers = async (range, start, hidden) => {
      runs++;
      if (firstNonFinite(hidden) >= 0) saw = true;
      const out = await run(range, start, hidden);
      if (poisonOut) out[5] = Number.NEGATIVE_INFINITY;
      return out;
    };
    return engine;
  };
  return { factory, sawNonFinite: () => saw, runs: () => runs };
}

describe('item 1: a guest that trickles progress', () => {
  // Scaled down: a 400 ms grace and a rate no real share needs, so the deadline is ~0.4 s (the defaults, 60 s + 1 MiB/s, are in load-deadline.ts).
  test('item 1: is dropped at its share\'s deadline, named; the redeal goes on without it and the room answers', async () => {
    room = await makeRoom(files, { autoRedeal: true, loadGraceMs: 400, loadMinBytesPerSecond: 2 ** 40, loadStallMs: 60_000 });
    let assignedAt = 0;
    rawGuest(room, {
      id: 'trickle1', name: 'Trickle', on: (f, ch) => {
        if (f.kind !== 'assign') return;
        assignedAt ||= performance.now();
        // One byte more every 50 ms: it never stalls, it never finishes.
        let done = 0;
        timers.push(setInterval(() => { done++; ch.trySend({ kind: 'progress', epoch: f.epoch, bytesDone: done, bytesTotal: 10_000_000, tensorsDone: 0, tensorsTotal: 10, networkBytes: done, cacheBytes: 0 }); }, 50));
      },
    });
    const left: { name: string; why: string; at: number }[] = [];
    room.host.on((e) => { if (e.type === 'left') left.push({ name: e.device.name, why: e.why, at: performance.now() }); });
    await until(() => room!.host.deviceList().length === 2, 'the hello');
    await until(() => assignedAt > 0, 'its assign');
    const dealt = room.host.redeal(); // whoever asked for a deal while the trickler held it
    await within(dealt, 8000, 'the deal');   // resolves (not throws) once the room dealt again without it
    expect(left).toHaveLength(1);
    expect(left[0]!.name).toBe('Trickle');
    expect(left[0]!.why).toMatch(/still loading after \d+\.\d s, past its load deadline of 0\.4 s/);
    const refusal = left[0]!.at - assignedAt;
    console.log(`item 1: trickling guest dropped ${refusal.toFixed(0)} ms after its assign (deadline 400 ms)`);
    expect(refusal).toBeLessThan(3000);
    expect(room.host.deviceList().map((d) => d.id)).toEqual(['host']);
    expect((await within(room.host.generate(PROMPT, { maxNewTokens: 8 }), 10_000, 'generate')).ids).toEqual(expected);
  });
});

describe('item 1: the issue\'s run, scaled down (a 3 s stall limit, a 20 s total), without auto re-deals', () => {
  test('item 1: a trickler past the total load timeout: dropped, named, and the redeal that waited for it deals again and resolves', async () => {
    room = await makeRoom(files, { autoRedeal: false, loadStallMs: 300, loadTimeoutMs: 1000 });
    let assignedAt = 0;
    rawGuest(room, {
      id: 'trickle2', name: 'Trickle', on: (f, ch) => {
        if (f.kind !== 'assign' || f.range[1] <= f.range[0]) return;
        assignedAt ||= performance.now();
        let done = 0;
        timers.push(setInterval(() => { done++; ch.trySend({ kind: 'progress', epoch: f.epoch, bytesDone: done, bytesTotal: 10_000_000, tensorsDone: 0, tensorsTotal: 10, networkBytes: done, cacheBytes: 0 }); }, 100));
      },
    });
    const left: { name: string; why: string; at: number }[] = [];
    room.host.on((e) => { if (e.type === 'left') left.push({ name: e.device.name, why: e.why, at: performance.now() }); });
    await until(() => room!.host.deviceList().length === 2, 'the hello');
    const dealt = room.host.setManualDeal([{ deviceId: 'host', range: [0, 2] }, { deviceId: 'trickle2', range: [2, 4] }]);
    await within(dealt, 8000, 'the deal'); // today: rejects with "device "Trickle" left the room (still loading after 1 s)"
    console.log(`item 1 (no auto re-deal): trickler dropped ${(left[0]!.at - assignedAt).toFixed(0)} ms after its assign (total timeout 1000 ms)`);
    expect(left.map((l) => `${l.name}: ${l.why}`)).toEqual(['Trickle: still loading after 1 s']);
    expect(room.host.currentDeal).toEqual([{ deviceId: 'host', range: [0, 4] }]);
    expect((await within(room.host.generate(PROMPT, { maxNewTokens: 8 }), 10_000, 'generate')).ids).toEqual(expected);
  });
});

describe('item 3: activations checked where they cross a boundary', () => {
  test('item 3: a guest that passes NaN to the next guest of its chain: the next refuses them before its cache, the request stops naming the sender', async () => {
    room = await makeRoom(files, { autoRedeal: false });
    const watched = watchedFactory();
    const b = new RoomGuest({
      roomId: ROOM_ID, deviceId: 'gb2222', name: 'Honest', caps: caps(), store: new MemoryByteStore(),
      loadWeights: (s, q) => loadWeights(s, q), createEngine: watched.factory, resolveSource: async () => new CountingMemorySource(files),
    });
    const [hb, gb] = memoryLinkPair();
    room.host.acceptLink(hb, { peerDeviceId: 'gb2222' });
    b.attach(gb);
    room.guests.push(b);
    let hop: FrameChannel | null = null;
    let sentAt = 0;
    rawGuest(room, {
      id: 'ga1111', name: 'Poisoner', on: (f, ch) => {
        if (f.kind === 'assign') {
          if (f.next === 'gb2222') {
            const [mine, theirs] = memoryLinkPair();
            b.acceptNeighbour(theirs, 'ga1111');
            hop = new FrameChannel(mine);
            raws.push(hop);
          }
          ch.trySend({ kind: 'ready', epoch: f.epoch, networkBytes: 0, cacheBytes: 0, ms: 1 });
        }
        if (f.kind === 'forward' && hop) {
          const hidden = f.hidden.slice();
          hidden[7] = Number.NaN;
          sentAt ||= performance.now();
          void hop.send({ ...f, hidden, work: [1] });
        }
      },
    });
    await until(() => room!.host.deviceList().length === 3, 'both hellos');
    await room.host.setManualDeal([{ deviceId: 'host', range: [0, 1] }, { deviceId: 'ga1111', range: [1, 2] }, { deviceId: 'gb2222', range: [2, 4] }]);
    expect(room.host.chains).toEqual([['ga1111', 'gb2222']]);
    const r = await within(room.host.generate(PROMPT, { maxNewTokens: 4 }), 10_000, 'generate');
    const refusal = performance.now() - sentAt;
    console.log(`item 3: NaN passed down a chain refused and its sender named within ${refusal.toFixed(0)} ms`);
    expect(r.finish).toBe('stopped');
    expect(r.note).toMatch(/device "Poisoner".*non-finite activations to "Honest"/);
    expect(watched.sawNonFinite()).toBe(false); // no engine ran them: nothing entered a KV cache
    expect(room.host.deviceList().map((d) => d.id)).toEqual(['host', 'gb2222']);
  });

  test('item 3: a stage whose own result is not finite (the host\'s engine here) stops the request naming it; the guest after it never runs the rows', async () => {
    const host = watchedFactory(true);
    room = await makeRoom(files, { autoRedeal: false, createEngine: host.factory });
    const guest = watchedFactory();
    const g = new RoomGuest({
      roomId: ROOM_ID, deviceId: 'gc3333', name: 'After', caps: caps(), store: new MemoryByteStore(),
      loadWeights: (s, q) => loadWeights(s, q), createEngine: guest.factory, resolveSource: async () => new CountingMemorySource(files),
    });
    const [h, gl] = memoryLinkPair();
    room.host.acceptLink(h, { peerDeviceId: 'gc3333' });
    g.attach(gl);
    room.guests.push(g);
    await until(() => room!.host.deviceList().length === 2, 'the hello');
    await room.host.setManualDeal([{ deviceId: 'host', range: [0, 2] }, { deviceId: 'gc3333', range: [2, 4] }]);
    const t0 = performance.now();
    const r = await within(room.host.generate(PROMPT, { maxNewTokens: 4 }), 10_000, 'generate');
    console.log(`item 3: a stage's non-finite result stopped the request in ${(performance.now() - t0).toFixed(0)} ms`);
    expect(r.finish).toBe('stopped');
    expect(r.note).toMatch(/device "Host" sent -Infinity in its activations \(value 5 of \d+, layers \[0, 2\) at position 0\)/);
    expect(host.runs()).toBeGreaterThan(0);
    expect(guest.sawNonFinite()).toBe(false);
  });
});

describe('item 4: numbers on a device card', () => {
  test('item 4: a heartbeat reply with sentAt −1e308 is refused, named; the card never shows an impossible round trip', async () => {
    room = await makeRoom(files);
    const errors: { id: string | null; message: string; at: number }[] = [];
    room.host.on((e) => { if (e.type === 'frame-error') errors.push({ id: e.deviceId, message: e.error.message, at: performance.now() }); });
    let firstLie = 0;
    rawGuest(room, { id: 'liar0001', name: 'Liar', heartbeat: (_f, ch) => { firstLie ||= performance.now(); ch.trySend({ kind: 'heartbeat', reply: true, sentAt: -1e308 }); } });
    await until(() => errors.length > 0, 'the refusal');
    console.log(`item 4: a lying heartbeat refused ${(errors[0]!.at - firstLie).toFixed(1)} ms after it was sent`);
    expect(errors[0]).toMatchObject({ id: 'liar0001' });
    expect(errors[0]!.message).toMatch(/heartbeat reply with sentAt -1e\+308, a time this host never sent/);
    const card = room.host.deviceList().find((d) => d.id === 'liar0001')!;
    expect(card.rttMs).toBeGreaterThanOrEqual(0);
    expect(card.rttMs).toBeLessThanOrEqual(CARD_LIMITS.rttMs);
    expect(card.badFrames).toBeGreaterThan(0);
  });
});

describe('item 5: a guest that floods refused frames', () => {
  // 50,000 frames through a memory link and the host's decoder: about a second on a busy 2-core machine.
  test('item 5: 50,000 refused frames: answered at most the budget\'s worth, then the guest is dropped, named', { timeout: 30_000 }, async () => {
    room = await makeRoom(files);
    const left: { name: string; why: string; at: number }[] = [];
    room.host.on((e) => { if (e.type === 'left') left.push({ name: e.device.name, why: e.why, at: performance.now() }); });
    const evil = rawGuest(room, { id: 'flood001', name: 'Flood' });
    await until(() => room!.host.deviceList().length === 2, 'the hello');
    const t0 = performance.now();
    // A host does not accept "assign" frames: each one is refused.
    for (let i = 0; i < 50_000; i++) evil.ch.trySend({ kind: 'assign', epoch: 1, model: 'x', modelKey: 'x', range: [0, 1], ctx: 64, prev: '', next: '' });
    await until(() => left.length === 1, 'the flood to be dropped', 20_000);
    console.log(`item 5: flooding guest dropped ${(left[0]!.at - t0).toFixed(0)} ms after its first refused frame`);
    expect(left[0]!.name).toBe('Flood');
    expect(left[0]!.why).toMatch(new RegExp(`^${FRAME_BUDGET.max + 1} refused frames within 10 s \\(the last: a host does not accept "assign" frames\\)$`));
    await new Promise((r) => setTimeout(r, 300)); // whatever was still queued arrives
    const answers = evil.got.filter((f) => f.kind === 'error').length;
    expect(answers).toBeLessThanOrEqual(FRAME_BUDGET.max);
    expect(evil.got.some((f) => f.kind === 'bye' && /removed by the host: \d+ refused frames/.test(f.reason))).toBe(true);
    expect(room.host.deviceList().map((d) => d.id)).toEqual(['host']);
  });
});
