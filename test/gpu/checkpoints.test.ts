// Acceptance 3: checkpoints through the shared Generator on the WebGPU engine. Restoring the pinned
// checkpoint (or an answer checkpoint, ckpt = N) and appending a different suffix gives the tokens of a
// fresh run on the full prompt, and both the Generator's stats and the engine's own counters show that
// only the suffix went through the layers. Also: seeded top-k sampling and token masks on the device
// agree with the reference sampler.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { createWebGPUEngine } from '../../src/gpu/create-engine.ts';
import type { WebGPUEngine } from '../../src/gpu/engine.ts';
import { Generator } from '../../src/model/generator.ts';
import type { GenerateOptions } from '../../src/model/generate-types.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import { allowOnly } from '../../src/model/sampler.ts';
import type { ModelWeights } from '../../src/model/types.ts';
import { loadTiny, testDevice, tinyModelFolder } from './helpers.ts';

const CTX = 160;
const sys = [151644, 8948, 198, 2610, 525, 264, 10950, 17847, 13, 151645, 198, 151644, 872, 198]; // pinAt = 14
const user1 = [9707, 11, 1246, 525, 498, 30, 151645, 198];
const user2 = [7985, 264, 729, 429, 11367, 1378, 5109, 13, 151645, 198];

let device: GPUDevice;
let weights: ModelWeights;
const engines: WebGPUEngine[] = [];

beforeAll(async () => {
  device = await testDevice(true);
  weights = await loadTiny(path.join(await tinyModelFolder({ layers: 4, seed: 7 }), 'safetensors'));
});
afterAll(async () => {
  for (const e of engines) await e.dispose();
  device?.destroy();
});

async function gpuGenerator(ckpt?: number): Promise<{ g: Generator; e: WebGPUEngine }> {
  const e = await createWebGPUEngine(weights, { device, ctx: CTX });
  engines.push(e);
  return { g: new Generator(e, { ctx: CTX, ...(ckpt === undefined ? {} : { ckpt }) }), e };
}
const greedy = (max: number, extra: Partial<GenerateOptions> = {}): GenerateOptions => ({ maxNewTokens: max, ...extra });

/** Tokens of a fresh run (new engine, empty cache) on the whole prompt. */
async function freshIds(prompt: number[], opts: GenerateOptions): Promise<number[]> {
  const { g } = await gpuGenerator();
  return (await g.generate(prompt, opts)).ids;
}

describe('checkpoints on the WebGPU engine', () => {
  it('restore the pinned checkpoint + a different suffix == a fresh full run; only the suffix is computed', async () => {
    const { g, e } = await gpuGenerator();
    await g.generate([...sys, ...user1], greedy(6, { pinAt: sys.length }));
    expect(g.checkpoints.pinned).toBe(sys.length);
    const before = e.stats().layerTokens;
    const prompt = [...sys, ...user2];
    const again = await g.generate(prompt, greedy(8, { pinAt: sys.length }));
    expect(again.stats).toMatchObject({ promptReused: sys.length, promptComputed: user2.length });
    // the engine saw the suffix once, then 7 decode steps (the 8th token is never fed back)
    expect(e.stats().layerTokens - before).toBe(user2.length + 7);
    expect(again.ids).toEqual(await freshIds(prompt, greedy(8)));
    const ref = await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(prompt, greedy(8));
    expect(again.ids).toEqual(ref.ids);
  });

  it('ckpt = 2: an answer rewritten in the history restores the answer checkpoint', async () => {
    const { g, e } = await gpuGenerator(2);
    const p1 = [...sys, ...user1];
    const a1 = await g.generate(p1, greedy(5, { pinAt: sys.length }));
    expect(g.checkpoints.answers).toEqual([p1.length]);
    const rewritten = [(a1.ids[0]! + 1) % 151643, ...a1.ids.slice(1)];
    const p2 = [...p1, ...rewritten, ...user2];
    const before = e.stats().layerTokens;
    const r = await g.generate(p2, greedy(6, { pinAt: sys.length }));
    expect(r.stats).toMatchObject({ promptReused: p1.length, promptComputed: p2.length - p1.length });
    expect(e.stats().layerTokens - before).toBe(p2.length - p1.length + 5);
    expect(r.ids).toEqual(await freshIds(p2, greedy(6)));
  });

  it('ckpt = 1 keeps only the latest answer checkpoint (the pinned one is not counted); ckpt = 0 reuses only the live end', async () => {
    const run = async (ckpt: number): Promise<number> => {
      const { g } = await gpuGenerator(ckpt);
      const p1 = [...sys, ...user1];
      const a1 = await g.generate(p1, greedy(4, { pinAt: sys.length }));
      await g.generate([...p1, ...a1.ids, ...user2], greedy(4, { pinAt: sys.length }));
      const p3 = [...p1, 3, 3, 3];
      const r = await g.generate(p3, greedy(4, { pinAt: sys.length }));
      expect(r.ids).toEqual(await freshIds(p3, greedy(4)));
      return r.stats.promptReused;
    };
    expect(await run(1)).toBe(sys.length);
    expect(await run(0)).toBe(0);
  });

  it('seeded top-k sampling and token masks on the device pick what the reference sampler picks', async () => {
    const sampling = { temperature: 0.8, topK: 20, seed: 1234 };
    const prompt = [...sys, ...user2];
    const { g } = await gpuGenerator();
    const mask = (): ReturnType<typeof allowOnly> => allowOnly([13, 198, 220, 279, 311, 315, 323, 5109, 30, 11], 151936);
    const gpu = await g.generate(prompt, greedy(10, { sampling }));
    const gpuMasked = await g.generate(prompt, greedy(6, { constraint: mask }));
    const ref = new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX });
    expect(gpu.ids).toEqual((await ref.generate(prompt, greedy(10, { sampling }))).ids);
    const refMasked = await ref.generate(prompt, greedy(6, { constraint: mask }));
    expect(gpuMasked.ids).toEqual(refMasked.ids);
    expect(gpuMasked.ids.every((id) => mask().bits![id >>> 5]! & (1 << (id & 31)))).toBe(true);
  });
});
