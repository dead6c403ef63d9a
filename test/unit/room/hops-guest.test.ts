// A guest inside a chain (direct hops), driven frame by frame: its forwards come from its previous
// device, its checkpoints from the host, over two channels, so it puts them back in one order; a request
// that failed upstream reaches it as `skip`; what it holds early is bounded.
import { afterEach, beforeAll, expect, test } from 'vitest';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { RoomGuest, MAX_HELD_FRAMES } from '../../../src/room/guest.ts';
import { memoryLinkPair } from '../../../src/room/memory-link.ts';
import type { Frame } from '../../../src/room/protocol.ts';
import { MemoryByteStore } from '../../../src/room/weight-cache.ts';
import { FrameChannel } from '../../../src/room/wire.ts';
import { caps, CountingMemorySource, referenceFactory, ROOM_ID, slowFactory, tinyFiles, TINY, until } from './helpers.ts';
import type { EngineFactory } from '../../../src/room/index.ts';

const H = TINY.hidden!;
let files: Map<string, Uint8Array>;
let guest: RoomGuest | undefined;
beforeAll(() => { files = tinyFiles(); });
afterEach(async () => { await guest?.leave('test over'); guest = undefined; });

/** The guest "gb2222" holding layers [2, 4), last of a chain after "ga1111": the host and its previous device are raw channels. */
async function lastOfChain(createEngine: EngineFactory = referenceFactory): Promise<{ g: RoomGuest; host: FrameChannel; prev: FrameChannel; got: Frame[] }> {
  const source = new CountingMemorySource(files);
  const g = new RoomGuest({
    roomId: ROOM_ID, deviceId: 'gb2222', name: 'B', caps: caps(), store: new MemoryByteStore(),
    loadWeights: (s, r) => loadWeights(s, r), createEngine, resolveSource: async () => source,
  });
  guest = g;
  const [hostEnd, guestEnd] = memoryLinkPair();
  const host = new FrameChannel(hostEnd);
  const got: Frame[] = [];
  host.onFrame = (f) => { if (f.kind !== 'heartbeat') got.push(f); };
  g.attach(guestEnd);
  const [prevEnd, bEnd] = memoryLinkPair();
  g.acceptNeighbour(bEnd, 'ga1111');
  const prev = new FrameChannel(prevEnd);
  await host.send({ kind: 'assign', epoch: 1, model: 'mem://tiny', modelKey: 'tiny', range: [2, 4], ctx: 64, prev: 'ga1111', next: '' });
  await until(() => got.some((f) => f.kind === 'ready'), 'ready');
  return { g, host, prev, got };
}

const rows = (n: number, at = 0) => new Float32Array(n * H).map((_, i) => Math.cos((i + at) * 0.11));
const forward = (seq: number, position: number, count: number, work?: number[]): Frame => ({ kind: 'forward', epoch: 1, seq, range: [1, 4], position, count, hidden: rows(count, position), ...(work ? { work } : {}) });

test('a forward from the previous device that arrives before the host\'s earlier checkpoint waits for it', async () => {
  const { host, prev, got } = await lastOfChain();
  await prev.send(forward(1, 0, 3));
  await until(() => got.some((f) => f.kind === 'result'), 'result 1');
  // seq 3 (the forward after the cut) comes first from the previous device; seq 2 (cut to 1) from the host after it.
  await prev.send(forward(3, 1, 2));
  await new Promise((r) => setTimeout(r, 20));
  expect(got.filter((f) => f.kind === 'result').length).toBe(1);   // held: seq 2 has not come
  await host.send({ kind: 'checkpoint', epoch: 1, seq: 2, op: 'truncate', position: 1 });
  await until(() => got.filter((f) => f.kind === 'result').length === 2, 'result 3');
  const answers = got.filter((f) => f.kind === 'ack' || f.kind === 'result').map((f) => [f.kind, (f as { seq: number }).seq, (f as { kvLength: number }).kvLength]);
  expect(answers).toEqual([['result', 1, 3], ['ack', 2, 1], ['result', 3, 3]]);
  expect(got.filter((f) => f.kind === 'error')).toEqual([]);
});

test('a request that failed upstream arrives as skip: the next frames do not wait for it', async () => {
  const { host, prev, got } = await lastOfChain();
  await prev.send({ kind: 'skip', epoch: 1, seq: 1 });
  await host.send({ kind: 'checkpoint', epoch: 1, seq: 2, op: 'truncate', position: 0 });
  await prev.send(forward(3, 0, 2));
  await until(() => got.some((f) => f.kind === 'result'), 'the result after the skip');
  expect(got.filter((f) => f.kind === 'ack' || f.kind === 'result' || f.kind === 'error').map((f) => [f.kind, (f as { seq: number }).seq])).toEqual([['ack', 2], ['result', 3]]);
});

test('early frames are held up to a bound; past it each is refused by name', async () => {
  const { host, got } = await lastOfChain();
  // checkpoints 2.. from the host while seq 1 (a forward from the previous device) never comes
  for (let seq = 2; seq <= MAX_HELD_FRAMES + 3; seq++) await host.send({ kind: 'checkpoint', epoch: 1, seq, op: 'truncate', position: 0 });
  await until(() => got.filter((f) => f.kind === 'error').length === 2, 'the refusals');
  const errors = got.filter((f): f is Extract<Frame, { kind: 'error' }> => f.kind === 'error');
  expect(errors.map((e) => e.seq)).toEqual([MAX_HELD_FRAMES + 2, MAX_HELD_FRAMES + 3]);
  expect(errors[0]!.message).toMatch(new RegExp(`already holding ${MAX_HELD_FRAMES} early frames .* waiting for seq 1`));
  expect(got.filter((f) => f.kind === 'ack')).toEqual([]);
});

test('a guest that is last refuses a forward whose layers end past its own, and one that is a duplicate', async () => {
  const { prev, got } = await lastOfChain();
  await prev.send({ kind: 'forward', epoch: 1, seq: 1, range: [1, 5], position: 0, count: 1, hidden: rows(1) });
  await until(() => got.some((f) => f.kind === 'error'), 'the refusal');
  expect((got.find((f) => f.kind === 'error') as { message: string }).message).toMatch(/layers \[1,5\] are not a request for this device's \[2,4\] \(after another device, last\)/);
  await prev.send(forward(1, 0, 1));
  await until(() => got.filter((f) => f.kind === 'error').length === 2, 'the second refusal');
  expect((got.filter((f) => f.kind === 'error')[1] as { message: string }).message).toMatch(/"forward" seq 1 does not follow seq 1/);
});

test('a forward of the old deal still queued when a new deal arrives is dropped, not refused against the new neighbours', async () => {
  // Seen in a room: a guest's forward was queued behind a running one when the host re-dealt (its next
  // device had left); the new assign changed the guest's neighbours at once, the queued forward then failed
  // the new deal's checks, and its error, reaching the host while the guest loaded, failed the new deal.
  const { host, prev, got } = await lastOfChain(slowFactory(150));
  await prev.send(forward(1, 0, 2, [1]));
  await prev.send(forward(2, 2, 1, [1]));
  await new Promise((r) => setTimeout(r, 30));       // seq 1 runs (150 ms), seq 2 waits behind it
  await host.send({ kind: 'assign', epoch: 2, model: 'mem://tiny', modelKey: 'tiny', range: [2, 4], ctx: 64, prev: '', next: '' });
  await until(() => got.some((f) => f.kind === 'ready' && f.epoch === 2), 'ready for deal 2');
  await new Promise((r) => setTimeout(r, 50));
  expect(got.filter((f) => f.kind === 'error')).toEqual([]);
  expect(got.filter((f) => f.kind === 'result')).toEqual([]);   // superseded work answers nobody
  // the new deal works: the guest is first now and runs a forward from the host
  await host.send({ kind: 'forward', epoch: 2, seq: 1, range: [2, 4], position: 0, count: 2, hidden: rows(2) });
  await until(() => got.some((f) => f.kind === 'result' && f.epoch === 2), 'result in deal 2');
  expect(got.filter((f) => f.kind === 'error')).toEqual([]);
});
