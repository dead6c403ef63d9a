// Issue 12, items 7–12: guests that lie, impersonate, stall, poison or flood. A hostile guest gets a
// named refusal or is dropped from the room, naming it; the room, its other guests and the request go on.
// Hostile guests here speak raw frames over a memory link (a real FrameChannel), as a modified page would.
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { dealLayers } from '../../../src/room/deal.ts';
import type { EngineFactory } from '../../../src/room/guest.ts';
import { memoryLinkPair } from '../../../src/room/memory-link.ts';
import { decodeFrame, encodeFrame, PROTOCOL_VERSION, type DeviceCaps, type Frame, type FrameOf } from '../../../src/room/protocol.ts';
import { ProtocolError } from '../../../src/room/errors.ts';
import { FrameChannel } from '../../../src/room/wire.ts';
import { caps, CountingMemorySource, makeRoom, ROOM_ID, singleDeviceTokens, tinyFiles, TINY, until, type TestRoom } from './helpers.ts';

const PROMPT = [17, 300, 5, 42, 99, 7, 250, 11, 3, 480, 64, 128];
let files: Map<string, Uint8Array>;
let expected: number[];
let room: TestRoom | undefined;
const raws: FrameChannel[] = [];

beforeAll(async () => {
  files = tinyFiles();
  expected = await singleDeviceTokens(files, PROMPT, 16);
});
afterEach(async () => {
  for (const ch of raws.splice(0)) ch.close();
  await room?.close();
  room = undefined;
});

interface RawGuest { ch: FrameChannel; got: Frame[] }

/**
 * A guest that speaks frames itself. It says hello (as `claimedId`, over a connection whose signaling
 * identity is `peerDeviceId`), answers heartbeats unless told not to, and otherwise does what `on` says.
 */
function rawGuest(r: TestRoom, o: {
  claimedId: string; peerDeviceId?: string; caps?: DeviceCaps; name?: string; heartbeats?: boolean;
  on?: (f: Frame, ch: FrameChannel) => void;
}): RawGuest {
  const [hostSide, guestSide] = memoryLinkPair();
  r.host.acceptLink(hostSide, { peerDeviceId: o.peerDeviceId ?? o.claimedId });
  const ch = new FrameChannel(guestSide);
  raws.push(ch);
  const got: Frame[] = [];
  ch.onFrame = (f) => {
    got.push(f);
    if (f.kind === 'heartbeat' && !f.reply && o.heartbeats !== false) ch.trySend({ kind: 'heartbeat', reply: true, sentAt: f.sentAt });
    o.on?.(f, ch);
  };
  ch.trySend({ kind: 'hello', protocol: PROTOCOL_VERSION, roomId: ROOM_ID, deviceId: o.claimedId, name: o.name ?? 'Evil', caps: o.caps ?? caps() });
  return { ch, got };
}

/** Ready at once for every assign (claims to have loaded), so it is dealt layers it will then misuse. */
const readyAtOnce = (f: Frame, ch: FrameChannel) => {
  if (f.kind === 'assign') ch.trySend({ kind: 'ready', epoch: f.epoch, networkBytes: 0, cacheBytes: 0, ms: 1 });
};

/** A promise that fails the test (instead of hanging it) when `p` takes longer than `ms`. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} did not finish in ${ms} ms`)), ms))]);
}

describe('item 7: a guest claiming a huge budget and speed', () => {
  test('item 7: the host keeps the embedding and layer 0; the guest never sees an embedding row; its share is capped', async () => {
    // The guest records every hidden state it is given, as a curious guest would.
    const seen: { range: [number, number]; hidden: Float32Array }[] = [];
    const recording: EngineFactory = async (weights, o) => {
      const engine = new ReferenceEngine(weights, o);
      const run = engine.runLayers.bind(engine);
      engine.runLayers = (range, positions, hidden) => { seen.push({ range: [...range] as [number, number], hidden: hidden.slice() }); return run(range, positions, hidden); };
      return engine;
    };
    room = await makeRoom(files, { autoRedeal: true });
    const greedy = caps(2 ** 45, 1e6); // 32 TiB and a million times the host's speed (the most the protocol lets through)
    const { RoomGuest } = await import('../../../src/room/guest.ts');
    const { MemoryByteStore } = await import('../../../src/room/weight-cache.ts');
    const guest = new RoomGuest({
      roomId: ROOM_ID, deviceId: 'greedy1', name: 'Greedy', caps: greedy, store: new MemoryByteStore(),
      loadWeights: (s, q) => loadWeights(s, q), createEngine: recording, resolveSource: async () => new CountingMemorySource(files),
    });
    const [a, b] = memoryLinkPair();
    room.host.acceptLink(a, { peerDeviceId: 'greedy1' });
    guest.attach(b);
    room.guests.push(guest);
    await until(() => room!.host.deviceList().length === 2, 'the hello');
    await room.host.whenReady();
    const deal = room.host.currentDeal;
    const hostRange = deal.find((e) => e.deviceId === 'host')!.range;
    const guestRange = deal.find((e) => e.deviceId === 'greedy1')!.range;
    expect(hostRange[0]).toBe(0);
    expect(hostRange[1]).toBeGreaterThanOrEqual(1);                                  // layer 0 stays home
    expect(guestRange[1] - guestRange[0]).toBeLessThanOrEqual(Math.floor(TINY.layers! * 0.75)); // capped share
    const r = await room.host.generate(PROMPT, { maxNewTokens: 16 });
    expect(r.ids).toEqual(expected);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => s.range[0] >= 1)).toBe(true);
    // Not one row the guest received is an embedding row of the prompt or of a sampled token.
    const embedding = await room.host.engine!.embed([...PROMPT, ...r.ids]);
    const H = TINY.hidden!;
    const rows = new Set(Array.from({ length: embedding.length / H }, (_, i) => Buffer.from(embedding.buffer, embedding.byteOffset + i * H * 4, H * 4).toString('hex')));
    for (const s of seen) {
      for (let i = 0; i < s.hidden.length / H; i++) expect(rows.has(Buffer.from(s.hidden.buffer, i * H * 4, H * 4).toString('hex'))).toBe(false);
    }
  });

  test('item 7: dealt by claims, a guest never gets more than 3/4 of the layers or layer 0, whatever it says', () => {
    const cost = { numLayers: 28, bytesPerLayer: 2 ** 27, hostFixedBytes: 2 ** 30 };
    const host = { id: 'host', name: 'Host', memoryBudgetBytes: 2 ** 31, speed: 1 };
    for (const [budget, speed] of [[2 ** 50, 1e12], [2 ** 40, 1], [2 ** 32, 1e6]] as const) {
      const deal = dealLayers([host, { id: 'g', name: 'G', memoryBudgetBytes: budget, speed }], cost);
      expect(deal[0]!.range[0]).toBe(0);
      expect(deal[0]!.range[1]).toBeGreaterThanOrEqual(7);
      expect(deal[1]!.range[1] - deal[1]!.range[0]).toBeLessThanOrEqual(21);
    }
    // the same when layers differ in size (dealing by bytes: a Q4_K_M mix, MoE layers)
    const MiB = 2 ** 20;
    const mixed = { numLayers: 8, bytesPerLayer: 300 * MiB, layerBytes: [...Array(4).fill(100 * MiB), ...Array(4).fill(300 * MiB)], hostFixedBytes: 200 * MiB };
    for (const [budget, speed] of [[2 ** 50, 1e12], [2 ** 40, 1], [2 ** 33, 1e6]] as const) {
      const deal = dealLayers([{ id: 'host', name: 'Host', memoryBudgetBytes: 2 ** 32, speed: 1 }, { id: 'g', name: 'G', memoryBudgetBytes: budget, speed }], mixed);
      expect(deal[0]!.range[0]).toBe(0);
      expect(deal[0]!.range[1]).toBeGreaterThanOrEqual(1);
      const guestBytes = mixed.layerBytes.slice(deal[1]!.range[0], deal[1]!.range[1]).reduce((a, b) => a + b, 0);
      expect(guestBytes).toBeLessThanOrEqual(0.75 * 1600 * MiB);
    }
    const starved = dealLayers([{ id: 'host', name: 'Host', memoryBudgetBytes: 200 * MiB, speed: 1 }, { id: 'g', name: 'G', memoryBudgetBytes: 2 ** 34, speed: 1 }], mixed);
    expect(starved[0]!.range).toEqual([0, 1]); // the host keeps layer 0 even with nothing left after the embedding
    // even a host whose budget holds no layer keeps layer 0
    const tiny = dealLayers([{ ...host, memoryBudgetBytes: 2 ** 30 }, { id: 'a', name: 'A', memoryBudgetBytes: 2 ** 33, speed: 1 }, { id: 'b', name: 'B', memoryBudgetBytes: 2 ** 33, speed: 1 }], cost);
    expect(tiny[0]!.range).toEqual([0, 1]);
  });

  test('item 7: a manual deal that gives layer 0 away is refused', async () => {
    room = await makeRoom(files);
    rawGuest(room, { claimedId: 'ga1111', on: readyAtOnce });
    await until(() => room!.host.deviceList().length === 2, 'the hello');
    expect(() => room!.host.setManualDeal([{ deviceId: 'ga1111', range: [0, 4] }])).toThrow(/the host keeps layer 0/);
  });
});

describe('item 8: a guest saying hello as another guest', () => {
  test('item 8: is refused; the victim keeps its place and its layers', async () => {
    room = await makeRoom(files);
    const victim = room.addGuest('victim1');
    await until(() => room!.host.deviceList().length === 2, 'the victim');
    await room.host.setManualDeal([{ deviceId: 'host', range: [0, 2] }, { deviceId: 'victim1', range: [2, 4] }]);
    const left: string[] = [];
    room.host.on((e) => { if (e.type === 'left') left.push(e.device.id); });
    const evil = rawGuest(room, { claimedId: 'victim1', peerDeviceId: 'attacker9' });
    await until(() => evil.got.some((f) => f.kind === 'bye'), 'the refusal');
    const refusal = evil.got.find((f): f is FrameOf<'error'> => f.kind === 'error')!;
    expect(refusal.code).toBe('join');
    expect(refusal.message).toMatch(/device id "victim1" does not belong to this connection \(attacker9\)/);
    expect(left).toEqual([]);
    expect(room.host.deviceList().map((d) => [d.id, d.status])).toEqual([['host', 'ready'], ['victim1', 'ready']]);
    expect(victim.assignedRange).toEqual([2, 4]);
    expect((await room.host.generate(PROMPT, { maxNewTokens: 16 })).ids).toEqual(expected);
  });

  test('item 8: the same device on a new connection with its own identity (a reload) still replaces the old one', async () => {
    room = await makeRoom(files);
    rawGuest(room, { claimedId: 'reload1' });
    await until(() => room!.host.deviceList().length === 2, 'first hello');
    const left: string[] = [];
    room.host.on((e) => { if (e.type === 'left') left.push(`${e.device.id}: ${e.why}`); });
    rawGuest(room, { claimedId: 'reload1' });
    await until(() => left.length === 1, 'the old connection to be replaced');
    expect(left).toEqual(['reload1: reconnected']);
    expect(room.host.deviceList().map((d) => d.id)).toEqual(['host', 'reload1']);
  });
});

describe('item 9: a guest that stalls', () => {
  test('item 9: one that never reports loading progress is dropped, naming it, and the room deals without it', async () => {
    room = await makeRoom(files, { autoRedeal: true, loadStallMs: 400 });
    const mute = rawGuest(room, { claimedId: 'mute0001', name: 'Mute' }); // answers heartbeats, ignores assign
    const left: string[] = [];
    room.host.on((e) => { if (e.type === 'left') left.push(`${e.device.name}: ${e.why}`); });
    await until(() => left.length === 1, 'the stalled guest to be dropped', 5000);
    expect(left[0]).toMatch(/^Mute: no loading progress for \d+ ms$/);
    await until(() => mute.got.some((f) => f.kind === 'bye' && /removed by the host: no loading progress/.test(f.reason)), 'the guest to be told');
    await within(room.host.whenReady(), 5000, 'the re-deal');
    expect((await room.host.generate(PROMPT, { maxNewTokens: 16 })).ids).toEqual(expected);
  });

  test('item 9: one that answers heartbeats but never a forward: the request ends stopped naming it, in bounded time', async () => {
    room = await makeRoom(files, { requestTimeoutMs: 500, requestTimeoutPerTokenMs: 10 });
    rawGuest(room, { claimedId: 'sloth001', name: 'Sloth', on: readyAtOnce });
    await until(() => room!.host.deviceList().length === 2, 'the hello');
    await room.host.setManualDeal([{ deviceId: 'host', range: [0, 2] }, { deviceId: 'sloth001', range: [2, 4] }]);
    const t0 = performance.now();
    const r = await within(room.host.generate(PROMPT, { maxNewTokens: 16 }), 10_000, 'generate');
    expect(r.finish).toBe('stopped');
    expect(r.note).toMatch(/device "Sloth".*did not answer "forward" seq 1 in \d+ ms/);
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(room.host.deviceList().map((d) => d.id)).toEqual(['host']);
  });

  test('item 9: a checkpoint request nobody answers also times out', async () => {
    room = await makeRoom(files, { requestTimeoutMs: 400, requestTimeoutPerTokenMs: 10 });
    let forwards = 0;
    rawGuest(room, {
      claimedId: 'half0001', name: 'Half', on: (f, ch) => {
        readyAtOnce(f, ch);
        // answers forwards with zeros of the right size (its results are fine), never a checkpoint
        if (f.kind === 'forward') { forwards++; ch.trySend({ kind: 'result', epoch: f.epoch, seq: f.seq, kvLength: f.position + f.count, hidden: new Float32Array(f.hidden.length) }); }
      },
    });
    await until(() => room!.host.deviceList().length === 2, 'the hello');
    await room.host.setManualDeal([{ deviceId: 'host', range: [0, 2] }, { deviceId: 'half0001', range: [2, 4] }]);
    await room.host.generate(PROMPT, { maxNewTokens: 2 });
    expect(forwards).toBeGreaterThan(0);
    const r = await within(room.host.generate([1, 2, 3], { maxNewTokens: 2 }), 10_000, 'generate'); // another prompt: truncates first
    expect(r.finish).toBe('stopped');
    expect(r.note).toMatch(/device "Half".*did not answer "checkpoint" seq \d+ in \d+ ms/);
  });
});

describe('item 10: numbers from a peer', () => {
  test.each([
    ['speed', 1e308], ['memoryBudgetBytes', 1e300], ['maxBufferSize', 2 ** 80], ['deviceMemoryGiB', 1e12], ['maxStorageBufferBindingSize', 2 ** 70],
  ] as const)('item 10: caps.%s = %d is refused by the decoder, naming the field', (field, value) => {
    const hello: Frame = { kind: 'hello', protocol: 1, roomId: ROOM_ID, deviceId: 'abc123', name: 'x', caps: { ...caps(), [field]: value } };
    expect(() => decodeFrame(encodeFrame(hello))).toThrow(ProtocolError);
    expect(() => decodeFrame(encodeFrame(hello))).toThrow(new RegExp(`caps\\.${field} .* out of range`));
  });

  test('item 10: a hello claiming a prefill step of 65,535 tokens is refused by name; the guest never joins the deal', async () => {
    room = await makeRoom(files);
    const evil = rawGuest(room, { claimedId: 'stepper1', caps: { ...caps(), step: 65535 } });
    await until(() => evil.got.some((f) => f.kind === 'error'), 'the refusal');
    const refusal = evil.got.find((f): f is FrameOf<'error'> => f.kind === 'error')!;
    expect(refusal.message).toMatch(/"hello" frame: caps\.step 65535 is more tokens a step than any device takes \(at most 512\)/);
    expect(room.host.deviceList().map((d) => d.id)).toEqual(['host']);
  });

  test('item 10: a deal from any finite claims covers every layer exactly once (no NaN ranges)', () => {
    const cost = { numLayers: 28, bytesPerLayer: 2 ** 27, hostFixedBytes: 2 ** 30 };
    const claims = [0, 1e-300, 1, 1e9, 1e308, Number.MAX_VALUE];
    for (const speedA of claims) {
      for (const speedB of claims) {
        const deal = dealLayers([
          { id: 'host', name: 'H', memoryBudgetBytes: 2 ** 33, speed: 1 },
          { id: 'a', name: 'A', memoryBudgetBytes: Number.MAX_VALUE, speed: speedA },
          { id: 'b', name: 'B', memoryBudgetBytes: 2 ** 33, speed: speedB },
        ], cost);
        let at = 0;
        for (const e of deal) {
          expect(Number.isInteger(e.range[0]) && Number.isInteger(e.range[1])).toBe(true);
          expect(e.range[0]).toBe(at);
          at = e.range[1];
        }
        expect(at).toBe(28);
      }
    }
  });

  test('item 10: progress and ready with absurd numbers are protocol errors, not state', () => {
    const bad: Frame[] = [
      { kind: 'progress', epoch: 1, bytesDone: 2 ** 60, bytesTotal: 2 ** 61, tensorsDone: 0, tensorsTotal: 1, networkBytes: 0, cacheBytes: 0 },
      { kind: 'progress', epoch: 1, bytesDone: 10, bytesTotal: 5, tensorsDone: 0, tensorsTotal: 1, networkBytes: 0, cacheBytes: 0 },
      { kind: 'ready', epoch: 1, networkBytes: 0, cacheBytes: 0, ms: 1e300 },
    ];
    for (const f of bad) expect(() => decodeFrame(encodeFrame(f))).toThrow(ProtocolError);
  });
});

describe('item 11: activations that are not numbers', () => {
  test.each([['NaN', Number.NaN], ['Infinity', Number.POSITIVE_INFINITY]])('item 11: %s from a guest ends the request naming the device', async (_name, poison) => {
    room = await makeRoom(files);
    rawGuest(room, {
      claimedId: 'poison01', name: 'Poisoner', on: (f, ch) => {
        readyAtOnce(f, ch);
        if (f.kind === 'forward') {
          const hidden = f.hidden.slice();
          hidden[3] = poison;
          ch.trySend({ kind: 'result', epoch: f.epoch, seq: f.seq, kvLength: f.position + f.count, hidden });
        }
      },
    });
    await until(() => room!.host.deviceList().length === 2, 'the hello');
    await room.host.setManualDeal([{ deviceId: 'host', range: [0, 2] }, { deviceId: 'poison01', range: [2, 4] }]);
    const r = await within(room.host.generate(PROMPT, { maxNewTokens: 4 }), 10_000, 'generate');
    expect(r.finish).toBe('stopped');
    expect(r.note).toMatch(new RegExp(`device "Poisoner".*sent ${_name} in its activations \\(value 3 of \\d+, "forward" seq 1\\)`));
    expect(room.host.deviceList().map((d) => d.id)).toEqual(['host']);
  });
});

describe('item 12: model reads from a guest', () => {
  /** The host's source, counting reads in flight at once and bytes read. */
  class Watched extends CountingMemorySource {
    inFlight = 0;
    maxInFlight = 0;
    override async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      try { await new Promise((r) => setTimeout(r, 2)); return await super.readRange(path, start, end); } finally { this.inFlight--; }
    }
  }

  test('item 12: a flood of 8 MiB reads: at most 4 at once per guest, a bounded queue, the rest refused by name', async () => {
    const big = new Map(files);
    big.set('padding.bin', new Uint8Array(9 * 2 ** 20));
    const source = new Watched(big);
    room = await makeRoom(big, { modelUrl: '', source });
    const answers: FrameOf<'data'>[] = [];
    const evil = rawGuest(room, { claimedId: 'reader01', name: 'Reader', on: (f) => { if (f.kind === 'data') answers.push(f); } });
    await until(() => room!.host.deviceList().length === 2, 'the hello');
    for (let id = 1; id <= 100; id++) evil.ch.trySend({ kind: 'read', id, op: 'range', path: 'padding.bin', start: 0, end: 8 * 2 ** 20 });
    await until(() => answers.length === 100, 'every read to be answered or refused', 20_000);
    expect(source.maxInFlight).toBeLessThanOrEqual(4);
    const refused = answers.filter((a) => !a.ok);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.message).toMatch(/too many reads at once/);
    expect(answers.filter((a) => a.ok).every((a) => a.bytes.length === 8 * 2 ** 20)).toBe(true);
  });

  test('item 12: a whole-file read of a file over the slice limit is refused before reading it', async () => {
    const big = new Map(files);
    big.set('huge.bin', new Uint8Array(9 * 2 ** 20));
    const source = new CountingMemorySource(big);
    room = await makeRoom(big, { modelUrl: '', source });
    const answers: FrameOf<'data'>[] = [];
    const evil = rawGuest(room, { claimedId: 'reader02', on: (f) => { if (f.kind === 'data') answers.push(f); } });
    await until(() => room!.host.deviceList().length === 2, 'the hello');
    const before = source.bytesRead;
    evil.ch.trySend({ kind: 'read', id: 1, op: 'file', path: 'huge.bin', start: 0, end: 0 });
    await until(() => answers.length === 1, 'the answer');
    expect(answers[0]!.ok).toBe(false);
    expect(answers[0]!.message).toMatch(/huge\.bin.*read it in ranges/);
    expect(source.bytesRead - before).toBe(0);
  });

  test('item 12: an honest guest loading over the channel stays within the limits and gets the same tokens', async () => {
    const source = new Watched(files);
    room = await makeRoom(files, { modelUrl: '', source });
    room.addGuest('honest01');
    await until(() => room!.host.deviceList().length === 2, 'the hello');
    await room.host.setManualDeal([{ deviceId: 'host', range: [0, 2] }, { deviceId: 'honest01', range: [2, 4] }]);
    expect((await room.host.generate(PROMPT, { maxNewTokens: 16 })).ids).toEqual(expected);
  });
});

test('item 12: an honest guest never asks for more than 4 reads at once, however large its read', async () => {
  const { PeerModelSource, READ_SLICE } = await import('../../../src/room/peer-source.ts');
  let inFlight = 0, most = 0;
  const source: InstanceType<typeof PeerModelSource> = new PeerModelSource('host', async (f) => {
    inFlight++;
    most = Math.max(most, inFlight);
    setTimeout(() => { inFlight--; source.answer({ kind: 'data', id: f.id, ok: true, message: '', bytes: new Uint8Array(f.end - f.start) }); }, 1);
  });
  const bytes = await source.readRange('model.safetensors', 0, 6 * READ_SLICE + 5);
  expect(bytes.length).toBe(6 * READ_SLICE + 5);
  expect(most).toBe(4);
});

describe('item 13: a relayed signaling disconnect', () => {
  test('item 13: for a guest that still answers, it drops nobody (a forged or passing event)', async () => {
    room = await makeRoom(files);
    room.addGuest('alive001');
    await until(() => room!.host.deviceList().length === 2, 'the hello');
    const left: string[] = [];
    room.host.on((e) => { if (e.type === 'left') left.push(e.device.id); });
    room.host.signalingDisconnect('alive001');
    await new Promise((r) => setTimeout(r, 1200));
    expect(left).toEqual([]);
    expect(room.host.deviceList().map((d) => d.id)).toEqual(['host', 'alive001']);
  });

  test('item 13: for a guest that is really gone, it is acted on within the probe (well before heartbeats would)', async () => {
    room = await makeRoom(files, { lossTimeoutMs: 10_000 }); // so only the relay can catch it quickly
    room.addGuest('gone0001');
    await until(() => room!.host.deviceList().length === 2, 'the hello');
    const left: string[] = [];
    room.host.on((e) => { if (e.type === 'left') left.push(`${e.device.id}: ${e.why}`); });
    room.links[0]![1].vanish();
    const t0 = performance.now();
    room.host.signalingDisconnect('gone0001');
    await until(() => left.length === 1, 'the loss', 3000);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(left).toEqual(['gone0001: its signaling connection closed and it stopped answering']);
  });
});
