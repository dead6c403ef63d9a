// Issue 25, acceptance 2: a streamed load (openWeights → createWebGPUEngine) writes each piece into its
// GPU buffer as it is read, so the JS memory a load holds is bounded by LOAD_IN_FLIGHT_BYTES whatever the
// share's size. Shown three ways:
//   - the bytes land where they belong: every GGUF golden streamed through the WebGPU row gives its
//     golden greedy tokens (the engine conformance suite, test/helpers/engine-conformance.ts);
//   - a 2-layer share at Qwen3-30B-A3B dimensions (a sparse GGUF of the real file's layout, ~700 MB of
//     tensors) loads with the loader's own count of bytes in flight ≤ LOAD_IN_FLIGHT_BYTES (exact), and
//     the process's JS memory (heapUsed + arrayBuffers, sampled on a timer) rising by at most the bound
//     plus STREAM_OVERHEAD_BYTES, a sanity bound with margin: pieces already consumed but not yet
//     collected (V8 frees an ArrayBuffer at its next GC, which it starts once ~64 MiB of them is garbage), the
//     header, the norms, the engine's own objects — far under the share, which the whole-share loader
//     held in JS (about 1.1 GiB at the peak for this share);
//   - a tiny safetensors share streamed gives bit-equal hidden states and logits to the same share loaded whole;
//   - a file that ends inside a tensor fails the load by naming the tensor, and leaves no buffer allocated.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebGPUEngine } from '../../src/gpu/create-engine.ts';
import { TruncatedFileError } from '../../src/model/errors.ts';
import { LOAD_IN_FLIGHT_BYTES } from '../../src/model/load-stream.ts';
import { loadWeights, openWeights, planWeights } from '../../src/model/load-weights.ts';
import { resolveModelSource } from '../../src/model/sources/resolve.ts';
import type { ModelSource } from '../../src/model/types.ts';
import { GGUF_GOLDEN_MODELS } from '../goldens/gguf-golden-setup.ts';
import { writeFullSizeGguf } from '../helpers/full-size-models.ts';
import { tinyGgufModel, tinyModelDir } from '../helpers/tiny-model.ts';
import { testDevice } from './helpers.ts';

const CTX = 64;
/** What the process may hold beyond the pieces in flight while a share streams (see the header). */
const STREAM_OVERHEAD_BYTES = 128 * 2 ** 20;

/** Counts the device's live buffer bytes (each createBuffer's size, less each destroy). */
function countBuffers(device: GPUDevice): { live: () => number } {
  const sizes = new Map<GPUBuffer, number>();
  let live = 0;
  const create = device.createBuffer.bind(device);
  device.createBuffer = (desc: GPUBufferDescriptor): GPUBuffer => {
    const b = create(desc);
    sizes.set(b, desc.size);
    live += desc.size;
    const destroy = b.destroy.bind(b);
    b.destroy = () => { const s = sizes.get(b); if (s !== undefined) { sizes.delete(b); live -= s; } destroy(); };
    return b;
  };
  return { live: () => live };
}

/** Peak of heapUsed + arrayBuffers above the level when it started, sampled every 2 ms (and at stop). */
function sampleJsMemory(): { stop: () => number } {
  const now = () => { const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers; };
  const base = now();
  let peak = base;
  const timer = setInterval(() => { peak = Math.max(peak, now()); }, 2);
  return { stop: () => { clearInterval(timer); peak = Math.max(peak, now()); return peak - base; } };
}

const MiB = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;

// every GGUF golden streamed through the row: the engine conformance suite's (test/helpers/engine-conformance.ts)
it('a tiny safetensors Qwen3 (BF16, 4 layers, embedding and head) streamed: the same hidden states and logits as loaded whole', async () => {
  const source = await resolveModelSource(await tinyModelDir({ layers: 4 }));
  const req = { layers: [0, 4] as [number, number], embedding: true, head: true };
  const streamed = await openWeights(source, req);
  expect(streamed.pending?.tensors.size).toBeGreaterThan(0);
  const device = await testDevice(false);
  const a = await createWebGPUEngine(streamed, { device, ctx: CTX, useF16: false, tuning: 'default' });
  const b = await createWebGPUEngine(await loadWeights(source, req), { device, ctx: CTX, useF16: false, tuning: 'default' });
  try {
    const ids = [1, 17, 400, 9000, 151000];
    const [ha, hb] = [await a.runLayers([0, 4], 0, await a.embed(ids)), await b.runLayers([0, 4], 0, await b.embed(ids))];
    expect([...ha]).toEqual([...hb]);
    const H = ha.length / ids.length;
    expect([...await a.logits(ha.subarray(-H))]).toEqual([...await b.logits(hb.subarray(-H))]);
  } finally {
    await a.dispose();
    await b.dispose();
    device.destroy();
  }
});

/**
 * `inner` as a server whose copy of the file is cut at `cut` once the header has been read (a mirror
 * that changed mid-load, or a download that breaks): reads of tensor data (from `dataStart`) past the cut fail.
 */
function cutSource(inner: ModelSource, file: string, dataStart: number, cut: number): ModelSource {
  return {
    label: `${inner.label} (cut at ${cut})`, modelFile: inner.modelFile!,
    readFile: (p, o) => inner.readFile(p, o), exists: (p) => inner.exists(p), size: (p) => inner.size!(p),
    async readRange(p, start, end) {
      if (p === file && start >= dataStart && end > cut) throw new TruncatedFileError(`needs bytes [${start}, ${end}) but the file is only ${cut} bytes long`, { file: p, fileSize: cut });
      return inner.readRange(p, start, end);
    },
  };
}

it('a file that ends inside a tensor: the load names the tensor and leaves nothing allocated', async () => {
  const m = await tinyGgufModel(GGUF_GOLDEN_MODELS['moe-Q4_K_M']);
  const inner = await resolveModelSource(m.path);
  const plan = await planWeights(inner, { layers: [0, 4], embedding: true, head: true });
  const last = plan.reads[plan.reads.length - 1]!;
  const source = cutSource(inner, inner.modelFile!, Math.min(...plan.reads.map((r) => r.start)), last.end - 100);
  const weights = await openWeights(source, { layers: [0, 4], embedding: true, head: true });
  const device = await testDevice(false);
  const counted = countBuffers(device);
  try {
    const err = await createWebGPUEngine(weights, { device, ctx: CTX, useF16: false }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(TruncatedFileError);
    expect((err as TruncatedFileError).tensor).toBe(last.tensors[last.tensors.length - 1]);
    expect(counted.live()).toBe(0);
  } finally {
    device.destroy();
  }
});

describe('a 2-layer share at Qwen3-30B-A3B dimensions streams', () => {
  let dir = '';
  let path = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pooled-stream-'));
    path = (await writeFullSizeGguf(dir, '30b-a3b')).path;     // sparse: the real header, a hole for the tensors
  });
  afterAll(async () => { if (dir) await rm(dir, { recursive: true, force: true }); });

  it(`JS memory while loading stays within LOAD_IN_FLIGHT_BYTES (+ ${MiB(STREAM_OVERHEAD_BYTES)} of process slack)`, async () => {
    const source = await resolveModelSource(path);
    const range: [number, number] = [1, 3];
    const plan = await planWeights(source, { layers: range });
    expect(plan.dataBytes).toBeGreaterThan(650e6);               // ~700 MB of tensors: ten times the bound
    const device = await testDevice(false);
    const counted = countBuffers(device);
    const sample = sampleJsMemory();
    const weights = await openWeights(source, { layers: range });
    const engine = await createWebGPUEngine(weights, { device, ctx: 4096, useF16: false, tuning: 'default' });
    const rose = sample.stop();
    try {
      const inFlight = weights.pending!.peakInFlightBytes;
      console.log(`A3B 2-layer share: ${MiB(plan.dataBytes)} of tensors; peak in flight ${MiB(inFlight)}; JS memory rose ${MiB(rose)}; GPU buffers ${MiB(counted.live())}`);
      expect(inFlight).toBeLessThanOrEqual(LOAD_IN_FLIGHT_BYTES);
      expect(inFlight).toBeGreaterThan(0);
      expect(rose).toBeLessThan(LOAD_IN_FLIGHT_BYTES + STREAM_OVERHEAD_BYTES);
      expect(counted.live()).toBeGreaterThan(plan.dataBytes);    // the share is on the device, not in JS
    } finally {
      await engine.dispose();
      device.destroy();
    }
  }, 600_000);   // ~700 MB through lavapipe's writeBuffer on a busy 2-core box
});
