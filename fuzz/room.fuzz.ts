// Room frame fuzz: hostile wire messages (random bytes, valid headers over random payloads, valid frames
// mutated: bit flips, truncation, appended bytes, lying lengths, swapped kinds; src/room/fuzz.ts) go
//  1. through the wire decoder, which may only return a frame or throw a ProtocolError;
//  2. to a live host from a hostile peer in its room (reconnected when a mutated goodbye drops it);
//  3. into a live guest, where the host's messages arrive;
//  4. into the same guest over a direct channel another device of the room opened to it (direct hops:
//     that device is not its previous hop, so everything it sends must be refused by name).
// Every error the host or the guest reports must be a named room or engine error. Every 1,000 messages
// (and at the end) the room must still work: re-dealt, it generates the same tokens as before the storm.
// A mutation that happens to be a valid goodbye (to the hostile peer, or "removed" to the guest) is
// obeyed; the device then joins again.
// With `hybrid`, the model is a tiny Qwen3.5 (linear, full, linear, full): the host's layers and the
// guest's both hold Gated DeltaNet layers, so mutated pin / restore / release frames reach real
// recurrent-state snapshots (a restore with none there, more pins than the engine keeps).
import { ENGINES } from '../src/engines/table.ts';
import { readModelConfig } from '../src/model/config.ts';
import { ModelFileError } from '../src/model/errors.ts';
import { loadWeights } from '../src/model/load-weights.ts';
import { EngineError } from '../src/model/engine-errors.ts';
import { ReferenceEngine } from '../src/model/reference/reference-engine.ts';
import { tinySafetensorsFiles } from '../src/model/tiny/tiny-model.ts';
import type { ModelSource } from '../src/model/types.ts';
import { RoomError } from '../src/room/errors.ts';
import { fuzzMessages, sampleFrames } from '../src/room/fuzz.ts';
import { RoomGuest, type EngineFactory } from '../src/room/guest.ts';
import { RoomHost } from '../src/room/host.ts';
import { memoryLinkPair } from '../src/room/memory-link.ts';
import { decodeFrame, PROTOCOL_VERSION, type DeviceCaps } from '../src/room/protocol.ts';
import { MemoryByteStore } from '../src/room/weight-cache.ts';
import { FrameChannel, Reassembler } from '../src/room/wire.ts';
import { bounded, crashed, newReport, refusedWith, type FuzzReport } from './report.ts';

const ROOM_ID = 'f0220f0220f0220f0220f0220f0220f0';
const PROMPT = [17, 300, 5, 42, 99, 7, 250, 11];
const CHECK_EVERY = 1_000;
const H = 64;

class MemorySource implements ModelSource {
  readonly label = 'fuzz:tiny';
  constructor(private readonly files: Map<string, Uint8Array>) {}
  async readFile(path: string): Promise<Uint8Array> { return this.files.get(path)!.slice(); }
  async readRange(path: string, start: number, end: number): Promise<Uint8Array> { return this.files.get(path)!.slice(start, end); }
  async exists(path: string): Promise<boolean> { return this.files.has(path); }
}

const caps: DeviceCaps = {
  adapter: 'fuzz', engine: 'reference', isFallbackAdapter: true, shaderF16: false, maxStorageBufferBindingSize: 2 ** 27,
  maxBufferSize: 2 ** 30, deviceMemoryGiB: 8, memoryBudgetBytes: 2 ** 30, speed: 1,
};
const named = (e: unknown) => e instanceof RoomError || e instanceof EngineError || e instanceof ModelFileError;

const HYBRID = { linearKeyHeads: 2, linearValueHeads: 4, linearHeadDim: 16, fullAttentionInterval: 2 };

export async function run(seed: number, count: number, opts: { hybrid?: boolean } = {}): Promise<FuzzReport> {
  const report = newReport(opts.hybrid ? 'room-hybrid' : 'room', seed);
  const t0 = performance.now();
  const files = tinySafetensorsFiles({ layers: 4, hidden: H, heads: 4, kvHeads: 2, headDim: 16, intermediate: 128, vocab: 512, seed: 3, ...(opts.hybrid ? { hybrid: HYBRID } : {}) },
    { 'tokenizer.json': new Uint8Array(0), 'tokenizer_config.json': new Uint8Array(0) });
  const source = new MemorySource(files);
  const { config } = await readModelConfig(source);
  const factory: EngineFactory = async (weights, o) => new ReferenceEngine(weights, o);
  const host = new RoomHost({
    roomId: ROOM_ID, name: 'Host', caps, config, format: 'safetensors', source, modelUrl: 'mem://tiny', modelKey: 'tiny',
    ctx: 256, loadWeights: (s, r) => loadWeights(s, r), createEngine: factory, store: new MemoryByteStore(), autoRedeal: false, engines: ENGINES,
    loadStallMs: Number(process.env.FUZZ_LOAD_STALL_MS ?? 120_000),
  });
  const guest = new RoomGuest({
    roomId: ROOM_ID, deviceId: 'guest001', name: 'Guest', caps, store: new MemoryByteStore(),
    loadWeights: (s, r) => loadWeights(s, r), createEngine: factory, resolveSource: async () => source,
  });
  let n = 0; // the case being fed, for reports
  const report404 = (where: string) => (e: Error) => { if (named(e)) refusedWith(report, e); else crashed(report, n, new Error(`${where}: ${e.name}: ${e.message}`)); };
  host.on((e) => { if (e.type === 'frame-error') report404('host')(e.error); });
  guest.on((e) => { if (e.type === 'frame-error') report404('guest')(e.error); });
  // A mutated frame can be a valid goodbye from the host ("you were removed"), which a guest obeys:
  // then it joins again, as a person would (same device id, a new connection).
  const attachGuest = () => {
    const [hostSide, guestSide] = memoryLinkPair();
    host.acceptLink(hostSide, { peerDeviceId: 'guest001' });
    guest.attach(guestSide);
  };
  attachGuest();

  // The hostile peer: a device in the room that sends the storm. A mutated goodbye may drop it: then it comes back.
  let hostile = null as FrameChannel | null;
  const connectHostile = () => {
    const [a, b] = memoryLinkPair();
    host.acceptLink(a, { peerDeviceId: 'hostile1' });
    hostile = new FrameChannel(b);
    hostile.trySend({ kind: 'hello', protocol: PROTOCOL_VERSION, roomId: ROOM_ID, deviceId: 'hostile1', name: 'Hostile', caps });
  };
  connectHostile();

  // The hostile neighbour: a direct channel into the guest from a device that is not its previous hop.
  let neighbour = null as FrameChannel | null;
  const connectNeighbour = () => {
    const [a, b] = memoryLinkPair();
    guest.acceptNeighbour(b, 'hostile2');
    neighbour = new FrameChannel(a);
  };
  connectNeighbour();

  const settle = async () => { for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0)); };
  for (let i = 0; i < 200 && host.deviceList().length < 3; i++) await new Promise((r) => setTimeout(r, 5));
  const deal = () => host.setManualDeal([{ deviceId: 'host', range: [0, 2] }, { deviceId: 'guest001', range: [2, 4] }]);
  await deal();
  const expected = (await host.generate(PROMPT, { maxNewTokens: 8 })).ids;

  const check = async (): Promise<void> => {
    const alive = await bounded((async () => {
      await settle();
      if (!guest.frameChannel?.isOpen()) attachGuest();
      while (!host.deviceList().some((d) => d.id === 'guest001')) await new Promise((r) => setTimeout(r, 5));
      await host.redeal();
      return host.generate(PROMPT, { maxNewTokens: 8 });
    })(), 20_000);
    if (alive === 'hang') {
      const devices = host.deviceList().map((d) => `${d.id} ${d.status} [${d.range}]`).join(', ');
      report.hangs.push({ case: n, what: `the room did not re-deal and generate within 20 s (devices: ${devices}; busy ${host.busy}; guest on deal ${guest.currentEpoch} [${guest.assignedRange}], host on ${host.currentEpoch})` });
      return;
    }
    if (alive.finish !== 'cap' || alive.ids.join() !== expected.join()) {
      crashed(report, n, new Error(`after the storm the room generated ${alive.finish} [${alive.ids}] instead of [${expected}] (${alive.error?.message ?? alive.note ?? ''})`));
    }
  };

  const reassembler = new Reassembler();
  // Not a valid goodbye into the guest: "you were removed" is an order a guest must obey.
  const toGuest = fuzzMessages(seed * 2 + 1, count, sampleFrames(H).filter((f) => f.kind !== 'bye'), 2_000_000);
  const toHost = fuzzMessages(seed * 2, count, sampleFrames(H), 1_000_000);
  const toNeighbour = fuzzMessages(seed * 2 + 7, count, sampleFrames(H), 3_000_000);
  for (n = 0; n < count; n++) {
    report.cases++;
    // 1. the decoder alone
    try {
      const bytes = reassembler.push(toHost[n]!);
      reassembler.takeDropped();
      if (bytes) { decodeFrame(bytes); report.accepted++; }
    } catch (e) {
      if (e instanceof RoomError) refusedWith(report, e); else crashed(report, n, e);
    }
    // 2. the host, from the hostile peer (the link delivers asynchronously, in order)
    if (!hostile || !hostile.isOpen()) connectHostile();
    try { hostile!.link.send(toHost[n]!); } catch { connectHostile(); }
    // 3. the guest, where the host's messages arrive
    if (!guest.frameChannel?.isOpen()) attachGuest();
    guest.frameChannel!.receive(toGuest[n]!);
    // 4. the guest, from a neighbour that is not its previous hop
    if (!neighbour?.isOpen()) connectNeighbour();
    try { neighbour!.link.send(toNeighbour[n]!); } catch { connectNeighbour(); }
    if (n % 100 === 99) await settle();
    if (n % CHECK_EVERY === CHECK_EVERY - 1) await check();
  }
  await check();
  neighbour?.close();
  await host.close();
  await guest.leave('fuzz over');
  report.ms = performance.now() - t0;
  return report;
}
