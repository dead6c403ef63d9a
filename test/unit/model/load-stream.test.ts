// The streamed load (src/model/load-stream.ts) without a GPU: it delivers every streamed byte exactly
// once, in pieces of at most LOAD_SLICE_BYTES with at most LOAD_IN_FLIGHT_BYTES in flight; loadWeights
// (openWeights + materializeWeights) gives the bytes the file holds; and the reference engine's load of
// a 2-layer share at Qwen3-30B-A3B dimensions (issue 25, acceptance 2) peaks at its resident weights
// plus the bound (+ the same process slack as test/gpu/streamed-load.test.ts), never the weights twice.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOAD_IN_FLIGHT_BYTES, LOAD_SLICE_BYTES, materializeWeights, streamedHolders } from '../../../src/model/load-stream.ts';
import { loadWeights, openWeights, planWeights } from '../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { resolveModelSource } from '../../../src/model/sources/resolve.ts';
import { cachedGgufModel } from '../../../src/model/formats/gguf/gguf-read.ts';
import { LOAD_PEAK_BYTES } from '../../../src/room/device-bytes.ts';
import type { ModelSource } from '../../../src/model/types.ts';
import { writeFullSizeGguf } from '../../helpers/full-size-models.ts';
import { tinyGgufModel } from '../../helpers/tiny-model.ts';

const MOE = { layers: 4, seed: 2, fileType: 'Q4_K_M', moe: { experts: 8, topK: 2 } } as const;
const STREAM_OVERHEAD_BYTES = 128 * 2 ** 20;   // as in test/gpu/streamed-load.test.ts, and why
const MiB = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;

it('the deal counts the load\'s peak as the streamed load\'s bound: one constant', () => {
  expect(LOAD_PEAK_BYTES).toBe(LOAD_IN_FLIGHT_BYTES);
  expect(LOAD_IN_FLIGHT_BYTES % LOAD_SLICE_BYTES).toBe(0);
});

it('a streamed GGUF delivers each streamed tensor\'s bytes once, as the file holds them, and only once', async () => {
  const m = await tinyGgufModel(MOE);
  const source = await resolveModelSource(m.path);
  const file = new Uint8Array(await readFile(m.path));
  const model = await cachedGgufModel(source, source.modelFile!);
  const w = await openWeights(source, { layers: [0, 4], embedding: true, head: true });
  const pending = w.pending!;
  const got = new Map([...pending.tensors].map(([n, b]) => [n, new Uint8Array(b)]));
  const seen = new Map<string, number>();
  await pending.run((p) => {
    got.get(p.tensor)!.set(p.bytes, p.offset);
    seen.set(p.tensor, (seen.get(p.tensor) ?? 0) + p.bytes.byteLength);
    expect(p.bytes.byteLength).toBeLessThanOrEqual(LOAD_SLICE_BYTES);
  });
  for (const [name, bytes] of got) {
    const t = model.tensors.get(name)!;
    expect(seen.get(name)).toBe(t.end - t.start);
    expect(Buffer.compare(bytes, file.subarray(t.start, t.end))).toBe(0);
  }
  await expect(pending.run(() => undefined)).rejects.toThrow(/once/);
  expect(() => new ReferenceEngine(w)).toThrow(/streamed/);
});

it('loadWeights fills every streamed tensor (no stream refs left) and a reference engine runs on it', async () => {
  const m = await tinyGgufModel(MOE);
  const w = await loadWeights(await resolveModelSource(m.path), { layers: [0, 4], embedding: true, head: true });
  expect(w.pending).toBeUndefined();
  expect(streamedHolders(w)).toEqual([]);
  const e = new ReferenceEngine(w, { ctx: 16 });
  const h = await e.embed([1, 2, 3]);
  const out = await e.runLayers([0, 4], 0, h);
  expect(out.every(Number.isFinite)).toBe(true);
});

it('an abort stops a streamed load between reads', async () => {
  const m = await tinyGgufModel(MOE);
  const ac = new AbortController();
  const w = await openWeights(await resolveModelSource(m.path), { layers: [0, 4], signal: ac.signal });
  let pieces = 0;
  await expect(w.pending!.run(() => { if (++pieces === 1) ac.abort(); })).rejects.toThrow(/abort/i);
});

describe('a 2-layer share at Qwen3-30B-A3B dimensions into the reference engine', () => {
  let dir = '';
  let source: ModelSource;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pooled-stream-ref-'));
    source = await resolveModelSource((await writeFullSizeGguf(dir, '30b-a3b')).path);
  }, 120_000);
  afterAll(async () => { if (dir) await rm(dir, { recursive: true, force: true }); });

  it('peaks at its resident weights + LOAD_IN_FLIGHT_BYTES (+ process slack), not the weights twice', async () => {
    const range: [number, number] = [1, 3];
    const plan = await planWeights(source, { layers: range });
    const now = () => { const u = process.memoryUsage(); return u.heapUsed + u.arrayBuffers; };
    const base = now();
    let peak = base;
    const timer = setInterval(() => { peak = Math.max(peak, now()); }, 2);
    const w = await openWeights(source, { layers: range });
    const pending = w.pending!;
    await materializeWeights(w);
    const engine = new ReferenceEngine(w, { ctx: 4096, range });
    clearInterval(timer);
    peak = Math.max(peak, now());
    // What the engine holds: every tensor's bytes, each once.
    const resident = plan.dataBytes;
    console.log(`reference, A3B 2-layer share: ${MiB(resident)} resident; peak in flight ${MiB(pending.peakInFlightBytes)}; JS memory rose ${MiB(peak - base)} at the peak`);
    expect(pending.peakInFlightBytes).toBeLessThanOrEqual(LOAD_IN_FLIGHT_BYTES);
    expect(peak - base).toBeLessThan(resident + LOAD_IN_FLIGHT_BYTES + STREAM_OVERHEAD_BYTES);
    expect(engine.range).toEqual(range);
  }, 300_000);   // 770 MB read from a sparse file and copied once, on a busy 2-core box
});

it('a slow link: progress counts bytes as they arrive, before a whole slice is in, and never goes back or past the total', async () => {
  const m = await tinyGgufModel(MOE);
  const { startRangeServer } = await import('../../helpers/range-server.ts');
  const { dirname, basename } = await import('node:path');
  const size = (await readFile(m.path)).byteLength;
  // About 1.5 s for the file: the first slice is in only at the end, so 0% until then without arrival counts.
  const server = await startRangeServer(dirname(m.path), { bytesPerSecond: Math.ceil(size / 1.5) });
  try {
    const source = await resolveModelSource(`${server.url}/${basename(m.path)}`);
    const seen: { bytesDone: number; bytesTotal: number; delivered: number }[] = [];
    let delivered = 0;
    const w = await openWeights(source, { layers: [0, 4], embedding: true, head: true, onProgress: (p) => seen.push({ ...p, delivered }) });
    await w.pending!.run((p) => { delivered += p.bytes.byteLength; });
    const total = seen.at(-1)!.bytesTotal;
    expect(seen.at(-1)!.bytesDone).toBe(total);
    // Before the first piece reached the engine, progress already counted arriving bytes.
    expect(seen.some((p) => p.delivered === 0 && p.bytesDone > 0)).toBe(true);
    for (let i = 1; i < seen.length; i++) {
      expect(seen[i]!.bytesDone).toBeGreaterThanOrEqual(seen[i - 1]!.bytesDone);
      expect(seen[i]!.bytesDone).toBeLessThanOrEqual(total);
    }
  } finally {
    await server.close();
  }
}, 60_000);   // a throttled local server: ~1.5 s of transfer, slower on a busy CI
