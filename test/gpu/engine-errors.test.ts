// The engine's contract at its edges: a layer-range engine (what a guest holds), and bad input answered
// with the shared named errors (class, code, message naming the problem) without disturbing the cache.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createWebGPUEngine } from '../../src/gpu/create-engine.ts';
import { GpuResourceError } from '../../src/gpu/errors.ts';
import { EngineUsageError, PositionError, SamplingError } from '../../src/model/engine-errors.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import { allowOnly } from '../../src/model/sampler.ts';
import { syntheticWeights, weightsSubset } from '../unit/model/reference/synthetic-model.ts';
import { relErr, testDevice } from './helpers.ts';
import { sampleNext } from '../../src/model/engine-types.ts';

let device: GPUDevice;
beforeAll(async () => { device = await testDevice(false); });
afterAll(() => device?.destroy());

const weights = syntheticWeights({ layers: 3, seed: 4, dtype: 'q4f16_1' });

it('a guest engine holding layers [1, 3) only runs those layers like the reference', async () => {
  const part = weightsSubset(weights, 1, 3, { embedding: false, head: false });
  const gpu = await createWebGPUEngine(part, { device, ctx: 32 });
  const ref = new ReferenceEngine(part, { ctx: 32 });
  expect([gpu.range, gpu.hasEmbedding, gpu.hasHead]).toEqual([[1, 3], false, false]);
  const H = weights.config.hiddenSize;
  const hidden = Float32Array.from({ length: 3 * H }, (_, i) => Math.sin(i) * 0.1);
  expect(relErr(await gpu.runLayers([1, 3], 0, hidden), await ref.runLayers([1, 3], 0, hidden))).toBeLessThan(1e-5);
  await expect(gpu.embed([1])).rejects.toBeInstanceOf(EngineUsageError);
  await expect(gpu.logits(hidden)).rejects.toThrow(/no final norm and head/);
  await expect(gpu.runLayers([0, 3], 3, hidden.subarray(0, H))).rejects.toBeInstanceOf(PositionError);
  await gpu.dispose();
});

it('bad input gets a named error and leaves the cache as it was', async () => {
  const e = await createWebGPUEngine(weights, { device, ctx: 8 });
  const H = weights.config.hiddenSize;
  const V = weights.config.vocabSize;
  await expect(e.embed([V])).rejects.toThrow(new RegExp(`token id ${V} outside the vocabulary`));
  const x = await e.embed([1, 2, 3]);
  await e.runLayers([0, 3], 0, x);
  await expect(e.runLayers([0, 3], 5, x.subarray(0, H))).rejects.toMatchObject({ name: 'PositionError', code: 'bad-position' });
  await expect(e.runLayers([0, 3], 2, x.subarray(0, 2 * H))).rejects.toBeInstanceOf(PositionError);
  await expect(e.runLayers([0, 3], 3, new Float32Array(6 * H))).rejects.toMatchObject({ name: 'ContextFullError', code: 'context-full' });
  expect(e.kvLength()).toBe(3);
  await expect(sampleNext(e, x, { temperature: 0 }, allowOnly([], V))).rejects.toBeInstanceOf(SamplingError);
  await expect(e.runLayers([0, 3], 3, x.subarray(0, 2))).rejects.toBeInstanceOf(EngineUsageError);
  expect(e.kvLength()).toBe(3);
  await e.dispose();
  await expect(e.embed([1])).rejects.toThrow(/disposed/);
});

it('a context whose KV cache cannot fit one binding is refused up front, naming ctx', async () => {
  await expect(createWebGPUEngine(weights, { device, ctx: 4096, maxBindingBytes: 4096 }))
    .rejects.toSatisfy((err: unknown) => err instanceof GpuResourceError && /choose a smaller ctx/.test((err as Error).message));
  const small = await createWebGPUEngine(weights, { device, ctx: 4, maxBindingBytes: 4096 });
  expect(small.stats().ctx).toBe(4);
  await small.dispose();
});

it('reports upload progress: bytes rise to the total, one report per layer, embedding and head', async () => {
  const seen: { bytesDone: number; bytesTotal: number; tensorsDone: number }[] = [];
  const untied = syntheticWeights({ layers: 2, seed: 9, dtype: 'BF16', tied: false });
  const e = await createWebGPUEngine(untied, { device, ctx: 8, onProgress: (p) => seen.push({ ...p }) });
  expect(seen).toHaveLength(4);
  expect(seen.map((p) => p.tensorsDone)).toEqual([1, 2, 3, 4]);
  for (let i = 1; i < seen.length; i++) expect(seen[i]!.bytesDone).toBeGreaterThan(seen[i - 1]!.bytesDone);
  expect(seen.at(-1)!.bytesDone).toBe(seen.at(-1)!.bytesTotal);
  expect(e.stats().weightBytes).toBe(seen.at(-1)!.bytesTotal);
  await e.dispose();
});

it('a constraint that asks is told when the mask overrules the model: greedy and top-k picks unchanged, reference agrees', async () => {
  const gpu = await createWebGPUEngine(weights, { device, ctx: 8 });
  const ref = new ReferenceEngine(weights, { ctx: 8 });
  const V = weights.config.vocabSize;
  const x = await gpu.embed([1, 2, 3]);
  const hidden = (await gpu.runLayers([0, 3], 0, x)).subarray(2 * weights.config.hiddenSize);
  const top = await sampleNext(gpu, hidden, { temperature: 0 });
  const others = Array.from({ length: V }, (_, id) => id).filter((id) => id !== top && id % 3 === 0);
  for (const sampling of [{ temperature: 0 }, { temperature: 0.8, topK: 5, seed: 7 }]) {
    for (const [ids, expectReport] of [[others, true], [[top, ...others], false]] as const) {
      let gpuReports = 0;
      let refReports = 0;
      const plain = await sampleNext(gpu, hidden, sampling, allowOnly(ids, V));
      const told = await sampleNext(gpu, hidden, sampling, { ...allowOnly(ids, V), overruled: () => gpuReports++ });
      const byRef = await sampleNext(ref, hidden, sampling, { ...allowOnly(ids, V), overruled: () => refReports++ });
      expect(told).toBe(plain);
      expect(byRef).toBe(plain);
      expect([gpuReports, refReports]).toEqual(expectReport ? [1, 1] : [0, 0]);
    }
  }
  await gpu.dispose();
});
