// A draft model on WebGPU: the target and a smaller draft model of the same vocabulary, both WebGPU
// engines on one device. Greedy tokens equal plain decoding's on the same engine; the target as its own
// draft keeps every token (both drafting the length they choose from what they measure, the default); a
// sampled draft (its q from the engine's scoreRows) at a fixed length completes seeded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { createWebGPUEngine } from '../../src/gpu/create-engine.ts';
import { Generator } from '../../src/model/generator.ts';
import { DraftModelDrafter } from '../../src/model/speculative/draft-model.ts';
import { vocabularyOf } from '../../src/model/speculative/vocabulary.ts';
import type { ModelWeights } from '../../src/model/types.ts';
import { loadTiny, testDevice, tinyModelFolder } from './helpers.ts';

const ctx = 80;
const prompt = [9707, 11, 1879, 0, 3555, 374, 9707, 11, 1879, 13, 220, 42];

describe('DraftModelDrafter on WebGPU', () => {
  let target: ModelWeights, draft: ModelWeights, device: GPUDevice;
  beforeAll(async () => {
    target = await loadTiny(path.join(await tinyModelFolder({ layers: 4, seed: 7 }), 'safetensors'));
    draft = await loadTiny(path.join(await tinyModelFolder({ layers: 2, seed: 3 }), 'safetensors'));
    device = await testDevice(false);
  });
  afterAll(() => device?.destroy());

  const engineOf = (w: ModelWeights) => createWebGPUEngine(w, { device, ctx, useF16: false });
  const drafterOf = async (w: ModelWeights, draftLength: number | 'auto' = 'auto') =>
    new DraftModelDrafter(await engineOf(w), { ctx, vocabulary: { target: vocabularyOf(target.config), draft: vocabularyOf(w.config) }, draftLength });

  it('greedy: plain decoding\'s tokens with another model drafting and with the target drafting itself', async () => {
    const plainEngine = await engineOf(target);
    const plain = await new Generator(plainEngine, { ctx }).generate(prompt, { maxNewTokens: 30 });
    await plainEngine.dispose();
    for (const [name, w] of [['another model', draft], ['the target itself', target]] as const) {
      const engine = await engineOf(target);
      const drafter = await drafterOf(w);
      const r = await new Generator(engine, { ctx }).generate(prompt, { maxNewTokens: 30, speculate: { drafter } });
      expect(r.ids, name).toEqual(plain.ids);
      expect(drafter.failure).toBeUndefined();
      expect(r.stats.passes! + r.stats.accepted!).toBe(29);
      if (w === target) expect(r.stats.accepted).toBe(r.stats.drafted);
      await engine.dispose();
      await drafter.engine.dispose();
    }
  });

  it('seeded sampling with a sampled draft (q from scoreRows): completes, the same answer again for the seed (at a fixed draft length)', async () => {
    // A seed pins a sampled answer for a fixed draft length only: auto's k follows measured time, and
    // with k moves which positions are checked rows and which a pass's own pick.
    const run = async () => {
      const engine = await engineOf(target);
      const drafter = await drafterOf(draft, 4);
      const r = await new Generator(engine, { ctx }).generate(prompt, { maxNewTokens: 24, sampling: { temperature: 0.8, topK: 8, seed: 5 }, speculate: { drafter, maxDraft: 4 } });
      await engine.dispose();
      await drafter.engine.dispose();
      expect(drafter.failure).toBeUndefined();
      return r;
    };
    const a = await run();
    expect(a.finish).toBe('cap');
    expect(a.stats.drafted).toBeGreaterThan(0);
    expect((await run()).ids).toEqual(a.ids);
  });
});
