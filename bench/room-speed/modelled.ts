// Modelled devices for the room bench: the real RoomEngine and Generator run over LayerEngines whose
// time follows a stated profile, on a virtual clock (so a run is fast, repeatable and free of the shared
// machine's noise). The numbers they compute come from an inner engine (a real reference engine on a
// tiny model, for exactness, or the corpus target), the time they take from the profile:
//   - a device is busy for (layers · layer bytes ÷ bandwidth) · max(1, rows ÷ 8) per call (decoding is
//     memory bound: a batch of ≤ 8 rows reads the weights once, like one row), plus the head's bytes for
//     calls that score rows, plus a fixed read-back cost per call that returns data to the CPU;
//   - a frame between devices takes the link's one-way delay plus its bytes ÷ the link rate, and frames
//     on one link queue behind each other.
import type { DecodeRequest, LayerEngine, LayerRange, RowCandidates, RowSampling } from '../../src/model/engine-types.ts';
import { runTokens as runTokensOf } from '../../src/model/engine-types.ts';
import { pickRow } from '../../src/model/sampler.ts';

export interface DeviceProfile {
  name: string;
  layers: number;
  layerBytes: number;          // weights read per layer and call
  headBytes: number;           // final norm + LM head
  bandwidth: number;           // bytes / s
  freeRows: number;            // rows a call runs for the price of one
  readbackMs: number;          // per call returning data to the CPU (a map of a GPU buffer)
  wireBytesPerRow: number;     // hidden row on the wire (f32)
  linkBytesPerSecond: number;
}

// Qwen3-8B: hidden 4096, intermediate 12288, 36 layers, 32 query / 8 KV heads of 128, vocabulary 151936.
// Per layer q, o 4096² each, k, v 4096·1024 each, gate, up, down 4096·12288 each: 192.9 M weights; at
// 4.5 bits each (4-bit groups of 32 with an f16 scale) 108.5 MB. The head is 151936·4096 weights.
const Q4_BYTES_PER_WEIGHT = 4.5 / 8;
const LAYER_WEIGHTS = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 12288;
export const QWEN3_8B_Q4_100GBS: DeviceProfile = {
  name: 'Qwen3-8B Q4 layers at 100 GB/s',
  layers: 36,
  layerBytes: LAYER_WEIGHTS * Q4_BYTES_PER_WEIGHT,
  headBytes: 151936 * 4096 * Q4_BYTES_PER_WEIGHT,
  bandwidth: 100e9,
  freeRows: 8,
  readbackMs: 0.2,
  wireBytesPerRow: 4096 * 4,
  linkBytesPerSecond: 50e6,      // ≈ 400 Mbit/s Wi-Fi
};

/** A clock that jumps to the next timer when nothing else can run (everything modelled is on it). */
export class VirtualClock {
  now = 0;                      // ms
  private timers: { at: number; seq: number; resolve: () => void }[] = [];
  private seq = 0;
  private scheduled = false;

  sleepUntil(at: number): Promise<void> {
    if (at <= this.now) return Promise.resolve();
    return new Promise((resolve) => {
      this.timers.push({ at, seq: this.seq++, resolve });
      this.schedule();
    });
  }

  /** Advance once every promise chain that can move has moved (two turns: a message port's too). */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => setImmediate(() => {
      this.scheduled = false;
      if (this.timers.length === 0) return;
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers.shift()!;
      this.now = Math.max(this.now, next.at);
      next.resolve();
      if (this.timers.length > 0) this.schedule();
    }));
  }
}

/** Where modelled time went (ms, summed over calls and frames): what a decode pass is made of. */
export interface TimeBreakdown {
  hostLayers: number;
  guestLayers: number;
  head: number;                // final norm + LM head (scoring rows, sampling)
  readbacks: number;
  hopDelay: number;            // one-way delay of each frame
  hopBytes: number;            // each frame's rows at the link rate
}

/** The clock and the profile the modelled room runs on, the frames it sent and where the time went. */
export class Meter {
  hops = 0;
  /** Hidden rows sent, summed over frames. */
  rowsSent = 0;
  readonly time: TimeBreakdown = { hostLayers: 0, guestLayers: 0, head: 0, readbacks: 0, hopDelay: 0, hopBytes: 0 };
  constructor(readonly clock: VirtualClock, readonly profile: DeviceProfile) {}
}

/** A device: the inner engine's numbers, the profile's time; calls run one at a time. */
export class ModelledDevice implements LayerEngine {
  readonly range: LayerRange;
  readonly hasEmbedding: boolean;
  readonly hasHead: boolean;
  readbacks = 0;
  private freeAt = 0;

  /** hiddenSize: values per row of the inner engine's hidden states. */
  constructor(readonly inner: LayerEngine, private readonly meter: Meter, readonly hiddenSize: number) {
    this.range = inner.range;
    this.hasEmbedding = inner.hasEmbedding;
    this.hasHead = inner.hasHead;
  }

  get recurrent(): boolean { return this.inner.recurrent; }
  kvLength(): number { return this.inner.kvLength(); }
  truncate(length: number): Promise<void> { return this.inner.truncate(length); }
  snapshot(position: number): Promise<void> { return this.inner.snapshot(position); }
  releaseSnapshot(position: number): Promise<void> { return this.inner.releaseSnapshot(position); }

  /** Layers × rows (and the head × rows) in ms, the read-back included; counted in the meter's breakdown. */
  private cost(layers: number, rows: number, headRows: number): number {
    const p = this.meter.profile;
    const factor = (n: number) => (n === 0 ? 0 : Math.max(1, n / p.freeRows));
    const layerMs = (layers * p.layerBytes * factor(rows) / p.bandwidth) * 1000;
    const headMs = (p.headBytes * factor(headRows) / p.bandwidth) * 1000;
    const t = this.meter.time;
    if (this.hasEmbedding) t.hostLayers += layerMs; else t.guestLayers += layerMs;
    t.head += headMs;
    t.readbacks += p.readbackMs;
    return layerMs + headMs + p.readbackMs;
  }

  private async busy<T>(ms: number, work: () => Promise<T>): Promise<T> {
    const result = await work();
    this.readbacks++;
    const clock = this.meter.clock;
    this.freeAt = Math.max(clock.now, this.freeAt) + ms;
    await clock.sleepUntil(this.freeAt);
    return result;
  }

  embed(ids: number[]): Promise<Float32Array> { return this.busy(this.cost(0, 0, 0), () => this.inner.embed(ids)); }
  runLayers(range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array> {
    const rows = hidden.length / this.hiddenSize;
    return this.busy(this.cost(range[1] - range[0], rows, 0), () => this.inner.runLayers(range, start, hidden));
  }
  runTokens(ids: number[], range: LayerRange, start: number): Promise<Float32Array> {
    return this.busy(this.cost(range[1] - range[0], ids.length, 0), () => runTokensOf(this.inner, ids, range, start));
  }
  /**
   * As the WebGPU engine costs it: a fed token and its pick in one call; a pass's rows as runTokens,
   * then the rows' candidates (two read-backs); the prompt's row, the head alone.
   */
  async decode(request: DecodeRequest): Promise<RowCandidates[]> {
    const layers = this.range[1] - this.range[0], rows = request.rows.length, { tokens } = request;
    if (tokens && rows > 1) {
      const hidden = await this.busy(this.cost(layers, rows, 0), () => runTokensOf(this.inner, [...tokens], this.range, this.inner.kvLength()));
      return this.busy(this.cost(0, 0, rows), () => this.inner.decode({ hidden, rows: request.rows }));
    }
    return this.busy(this.cost(tokens ? layers : 0, tokens ? 1 : 0, rows), () => this.inner.decode(request));
  }
  sampleAndRun(hidden: Float32Array, row: RowSampling, range: LayerRange): Promise<{ token: number; candidates: RowCandidates; hidden: Float32Array }> {
    return this.busy(this.cost(range[1] - range[0], 1, 1), async () => {
      const [candidates] = await this.inner.decode({ hidden, rows: [row] });
      const token = pickRow(candidates!, row.opts, row.constraint);
      return { token, candidates: candidates!, hidden: await runTokensOf(this.inner, [token], range, this.inner.kvLength()) };
    });
  }
  dispose(): Promise<void> { return this.inner.dispose(); }
}

/** One direction between two devices: frames queue at the link rate, then take the one-way delay. */
export class Link {
  private freeAt = 0;
  constructor(private readonly meter: Meter, readonly oneWayMs: number) {}

  async send(rows: number): Promise<void> {
    const { clock, profile } = this.meter;
    const bytesMs = (rows * profile.wireBytesPerRow / profile.linkBytesPerSecond) * 1000;
    this.meter.hops++;
    this.meter.rowsSent += rows;
    this.meter.time.hopDelay += this.oneWayMs;
    this.meter.time.hopBytes += bytesMs;
    this.freeAt = Math.max(clock.now, this.freeAt) + bytesMs;
    await clock.sleepUntil(this.freeAt + this.oneWayMs);
  }
}

/**
 * Guests in a chain as one stage: the host sends to the first, each passes its output to the next, the
 * last answers the host (host → A → B → host: N + 1 hops for N guests; a single guest is a chain of one).
 * Chunks flow through it as through a pipeline (each device takes the next chunk when it is free).
 */
export class ModelledChain implements LayerEngine {
  readonly range: LayerRange;
  readonly hasEmbedding = false;
  readonly hasHead = false;
  /** Devices a chunk passes through in turn (RoomEngine's chunk choice reads it). */
  readonly depth: number;
  private readonly links: Link[];

  constructor(readonly devices: readonly ModelledDevice[], meter: Meter, oneWayMs: number) {
    this.range = [devices[0]!.range[0], devices[devices.length - 1]!.range[1]];
    this.depth = devices.length;
    this.links = Array.from({ length: devices.length + 1 }, () => new Link(meter, oneWayMs));
  }

  get recurrent(): boolean { return this.devices.some((d) => d.recurrent); }
  kvLength(): number { return Math.min(...this.devices.map((d) => d.kvLength())); }
  async truncate(length: number): Promise<void> { await Promise.all(this.devices.map((d) => d.truncate(length))); }
  async snapshot(position: number): Promise<void> { await Promise.all(this.devices.map((d) => d.snapshot(position))); }
  async releaseSnapshot(position: number): Promise<void> { await Promise.all(this.devices.map((d) => d.releaseSnapshot(position))); }
  embed(): Promise<Float32Array> { throw new Error('a chain of guests holds no embedding'); }
  decode(): Promise<RowCandidates[]> { throw new Error('a chain of guests holds no head'); }
  dispose(): Promise<void> { return Promise.all(this.devices.map((d) => d.dispose())).then(() => undefined); }

  async runLayers(range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array> {
    const rows = hidden.length / this.devices[0]!.hiddenSize;
    let h = hidden;
    await this.links[0]!.send(rows);
    for (const [i, d] of this.devices.entries()) {
      const sub: LayerRange = [Math.max(range[0], d.range[0]), Math.min(range[1], d.range[1])];
      if (sub[1] > sub[0]) h = await d.runLayers(sub, start, h);
      await this.links[i + 1]!.send(rows);
    }
    return h;
  }
}
