// Test helpers for the room in Node: an in-memory tiny model source that counts bytes, a host and guests
// joined by memory links, and the single-device reference tokens to compare with.
import type { KvType } from '../../../src/room/device-bytes.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { Generator } from '../../../src/model/generator.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { tinySafetensorsFiles, type TinyModelOptions } from '../../../src/model/tiny/tiny-model.ts';
import { readModelConfig } from '../../../src/model/config.ts';
import type { ModelSource, ReadFileOptions } from '../../../src/model/types.ts';
import { FileTooLongError } from '../../../src/model/errors.ts';
import { RoomHost, type HostOptions } from '../../../src/room/host.ts';
import { RoomGuest, type EngineFactory } from '../../../src/room/guest.ts';
import { memoryLinkPair } from '../../../src/room/memory-link.ts';
import type { MessageLink } from '../../../src/room/wire.ts';
import { MemoryByteStore } from '../../../src/room/weight-cache.ts';
import { ENGINES } from '../../../src/engines/table.ts';
import type { EngineRow } from '../../../src/engines/contract.ts';
import type { DeviceCaps } from '../../../src/room/protocol.ts';

export const ROOM_ID = '0123456789abcdef0123456789abcdef';
export const TINY: TinyModelOptions = { layers: 4, hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 128, vocab: 512, seed: 3 };

/** A ModelSource over in-memory files that counts the bytes each read returns (`modelFile`: a GGUF). */
export class CountingMemorySource implements ModelSource {
  readonly label = 'memory:tiny';
  bytesRead = 0;
  readonly modelFile?: string;
  constructor(readonly files: Map<string, Uint8Array>, modelFile?: string) {
    if (modelFile) this.modelFile = modelFile;
  }
  async size(path: string): Promise<number> { return this.file(path).length; }
  private file(path: string): Uint8Array {
    const f = this.files.get(path);
    if (!f) throw new Error(`${path}: no such file`);
    return f;
  }
  async readFile(path: string, opts: ReadFileOptions = {}): Promise<Uint8Array> {
    const f = this.file(path);
    if (opts.maxBytes !== undefined && f.length > opts.maxBytes) throw new FileTooLongError(`is ${f.length} bytes`, { file: path }, opts.maxBytes);
    const b = f.slice(); this.bytesRead += b.length; return b;
  }
  async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    const b = this.file(path).slice(start, end); this.bytesRead += b.length; return b;
  }
  async exists(path: string): Promise<boolean> { return this.files.has(path); }
}

export function tinyFiles(opts: TinyModelOptions = TINY): Map<string, Uint8Array> {
  const empty = { 'tokenizer.json': new Uint8Array(0), 'tokenizer_config.json': new Uint8Array(0) };
  return tinySafetensorsFiles(opts, empty);
}

export const referenceFactory: EngineFactory = async (weights, { ctx, range, kv }) => new ReferenceEngine(weights, { ctx, range, kvType: kv ?? 'f16' });

/** A reference engine whose runLayers waits `ms` first: a slow device. */
export const slowFactory = (ms: number): EngineFactory => async (weights, opts) => {
  const engine = await referenceFactory(weights, opts);
  const run = engine.runLayers.bind(engine);
  engine.runLayers = async (range, start, hidden) => { await new Promise((r) => setTimeout(r, ms)); return run(range, start, hidden); };
  return engine;
};

export function caps(memoryBudgetBytes = 2 ** 30, speed = 1): DeviceCaps {
  return {
    adapter: 'test', engine: 'reference', isFallbackAdapter: true, shaderF16: false, maxStorageBufferBindingSize: 2 ** 27,
    maxBufferSize: 2 ** 30, deviceMemoryGiB: 8, memoryBudgetBytes, speed,
  };
}

/** Greedy tokens from one ReferenceEngine holding everything: what every split must reproduce. */
export async function singleDeviceTokens(files: Map<string, Uint8Array>, prompt: number[], n: number, modelFile?: string, kvType: KvType = 'f16'): Promise<number[]> {
  const src = new CountingMemorySource(files, modelFile);
  const { config } = await readModelConfig(src);
  const weights = await loadWeights(src, { layers: [0, config.numLayers], embedding: true, head: true });
  const gen = new Generator(new ReferenceEngine(weights, { ctx: 256, kvType }), { ctx: 256 });
  const r = await gen.generate(prompt, { maxNewTokens: n });
  if (r.finish !== 'cap') throw new Error(`reference run ended ${r.finish}: ${r.error?.message}`);
  return r.ids;
}

export interface TestRoom {
  host: RoomHost;
  guests: RoomGuest[];
  links: ReturnType<typeof memoryLinkPair>[];
  /** Direct channels between guests: [from, to, pair] (pair[0] is the dialer's end). */
  hops: [string, string, ReturnType<typeof memoryLinkPair>][];
  /** A guest vanishes (a killed tab): its channel to the host and its direct channels go silent. */
  vanish(id: string): void;
  sources: CountingMemorySource[];
  stores: MemoryByteStore[];
  /** dial: false = the guest cannot open direct channels (every hop then goes through the host). */
  /** slowMs: the guest's layers take this much longer per call (a slow device). */
  /** engine: the guest runs this engine row (its kind in the hello, its loadShare), else the reference engine's two steps. */
  /** step: the prefill step its hello reports (caps.step). */
  addGuest(id: string, opts?: { store?: MemoryByteStore; budget?: number; dial?: boolean; wrap?: (l: MessageLink) => MessageLink; slowMs?: number; engine?: EngineRow; step?: number }): RoomGuest;
  close(): Promise<void>;
}

export async function makeRoom(files: Map<string, Uint8Array>, hostOpts: Partial<HostOptions> = {}, modelFile?: string): Promise<TestRoom> {
  const hostSource = new CountingMemorySource(files, modelFile);
  const { config } = await readModelConfig(hostSource);
  const host = new RoomHost({
    roomId: ROOM_ID, name: 'Host', caps: caps(), config, format: 'safetensors', source: hostSource,
    modelUrl: 'mem://tiny', modelKey: 'tiny-test', ctx: 256, loadWeights: (s, r) => loadWeights(s, r),
    createEngine: referenceFactory, store: new MemoryByteStore(), autoRedeal: false, ...hostOpts, engines: hostOpts.engines ?? ENGINES,
  });
  const room: TestRoom = {
    host, guests: [], links: [], hops: [], sources: [hostSource], stores: [],
    addGuest(id, o = {}) {
      const store = o.store ?? new MemoryByteStore();
      const source = new CountingMemorySource(files, modelFile);
      const wrap = o.wrap ?? ((l: MessageLink) => l);
      const guest = new RoomGuest({
        roomId: ROOM_ID, deviceId: id, name: `Guest ${id}`, caps: { ...caps(o.budget ?? 2 ** 30), ...(o.engine ? { engine: o.engine.kind } : {}), ...(o.step !== undefined ? { step: o.step } : {}) }, store,
        ...(o.engine ? { loadShare: o.engine.loadShare({}) }
          : { loadWeights: (s, r) => loadWeights(s, r), createEngine: o.slowMs ? slowFactory(o.slowMs) : referenceFactory }),
        resolveSource: async () => source,
        ...(o.dial === false ? {} : {
          dial: async (to: string) => {
            const target = room.guests.find((g) => g.opts.deviceId === to);
            if (!target) throw new Error(`no guest "${to}" in this test room`);
            const pair = memoryLinkPair();
            room.hops.push([id, to, pair]);
            target.acceptNeighbour(pair[1], id);
            return wrap(pair[0]);
          },
        }),
      });
      const pair = memoryLinkPair();
      host.acceptLink(pair[0]);
      guest.attach(wrap(pair[1]));
      room.guests.push(guest); room.links.push(pair); room.sources.push(source); room.stores.push(store);
      return guest;
    },
    vanish(id) {
      const i = room.guests.findIndex((g) => g.opts.deviceId === id);
      room.links[i]![1].vanish();
      for (const [from, to, pair] of room.hops) {
        if (from === id) pair[0].vanish();
        if (to === id) pair[1].vanish();
      }
    },
    async close() {
      await host.close();
      await Promise.all(room.guests.map((g) => g.leave('test over')));
    },
  };
  return room;
}

/** Wait until `cond` holds (polling), or fail naming `what`. */
export async function until(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
