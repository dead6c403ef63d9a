// Acceptance 2 (Node half): tiny checkpoints with the real Qwen3 tokenizer, 4 layers, in both real
// layouts (BF16 safetensors, MLC q4f16_1): 32 greedy tokens from the WebGPU engine equal the
// reference's exactly, on the f32 path and on the shader-f16 path, through the shared Generator.
import { beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { createWebGPUEngine } from '../../src/gpu/create-engine.ts';
import { Generator } from '../../src/model/generator.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import { NodeFolderSource } from '../../src/model/sources/node-folder.ts';
import { Tokenizer } from '../../src/model/tokenizer.ts';
import type { ModelWeights } from '../../src/model/types.ts';
import { defaultTuning } from '../../src/gpu/tuning.ts';
import { loadTiny, testDevice, tinyModelFolder } from './helpers.ts';
import { decodeNext, sampleNext } from '../../src/model/engine-types.ts';

const CTX = 128;
const PROMPT = 'def fibonacci(n):\n    """Return the n-th Fibonacci number."""\n';

describe.each([
  ['BF16 safetensors', 'safetensors'],
  ['q4f16_1 MLC', 'mlc'],
])('tiny %s checkpoint', (_label, sub) => {
  let weights: ModelWeights;
  let prompt: number[];
  let expected: number[];
  beforeAll(async () => {
    const dir = path.join(await tinyModelFolder({ layers: 4, seed: 7 }), sub);
    weights = await loadTiny(dir);
    expect(weights.layers.size).toBe(4);
    prompt = (await Tokenizer.fromSource(new NodeFolderSource(dir))).encode(PROMPT);
    const ref = await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(prompt, { maxNewTokens: 32 });
    expected = ref.ids;
    expect(expected).toHaveLength(32);
    expect(new Set(expected).size).toBeGreaterThan(4);   // varied tokens, not one repeated id
  });

  it.each([false, true])('32 greedy tokens equal the reference (shader-f16 %s)', async (useF16) => {
    const device = await testDevice(useF16);
    const engine = await createWebGPUEngine(weights, { device, ctx: CTX, useF16 });
    try {
      const before = engine.stats().submits;
      const r = await new Generator(engine, { ctx: CTX }).generate(prompt, { maxNewTokens: 32 });
      expect(r.finish).toBe('cap');
      expect(r.ids).toEqual(expected);
      const s = engine.stats();
      // The Generator uses the fused path: prefill (one chunk: embed, layers, sample) then one submit
      // for each of the 31 fed-back tokens.
      expect(engine.stats().last).toMatchObject({ op: 'decodeToken', submits: 1 });
      expect(s.submits - before).toBeLessThanOrEqual(3 + 31);
      expect(s.useF16).toBe(useF16);
      // 8 ops a layer for prefill; at decode both RMSNorms fold into qkv and gate|up (shaders/lib/x_rmsnorm.wgsl)
      expect(s.decodeDispatchesPerLayer).toBe(6);
      // the fused path: one submit per decode token, same tokens
      await engine.truncate(0);
      const L = weights.config.numLayers;
      const h = await engine.runLayers([0, L], 0, await engine.embed(prompt));
      const ids = [await sampleNext(engine, h, { temperature: 0 })];
      while (ids.length < 32) {
        ids.push(await decodeNext(engine, ids[ids.length - 1]!, { temperature: 0 }));
        expect(engine.stats().last).toMatchObject({ op: 'decodeToken', submits: 1 });
      }
      expect(ids).toEqual(expected);
      expect(engine.kvLength()).toBe(prompt.length + 31);
      // the profile of a decode token names the folded norms in the matvecs; a prefill step still runs them
      const decode = (await engine.profileLayer(0, 64, { repeat: 1, reps: 1 })).map((e) => e.label);
      expect(decode).toHaveLength(6);
      expect(decode.filter((l) => l.includes('rmsnorm') || l.endsWith('layernorm'))).toEqual([]);
      expect(decode.filter((l) => l.includes('folded in'))).toHaveLength(2);
      const prefill = (await engine.profileLayer(0, 64, { tokens: 3, repeat: 1, reps: 1 })).map((e) => e.label);
      expect(prefill).toHaveLength(8);
    } finally {
      await engine.dispose();
      device.destroy();
    }
  });

  // The prompt prefills through the prefill attention tiles (forced: the CPU class runs the per-head
  // kernel, which the goldens above cover) in steps of the class's 64 tokens (700 = 10·64 + 60)
  it('a 700-token context prefills through the attention tiles and decodes through split attention (flash-decoding, 8 splits): 8 greedy tokens equal the reference', async () => {
    const ctx = 720;
    const ids = Array.from({ length: 700 }, (_, i) => (i * 7919 + 11) % 150000);
    const ref = await new Generator(new ReferenceEngine(weights, { ctx }), { ctx }).generate(ids, { maxNewTokens: 8 });
    const device = await testDevice(true);
    const tuning = { ...defaultTuning(device), attention: { splits: 8, minKeys: 64, prefill: 'tiles' as const } };
    const engine = await createWebGPUEngine(weights, { device, ctx, tuning });
    try {
      const r = await new Generator(engine, { ctx }).generate(ids, { maxNewTokens: 8 });
      expect(r.ids).toEqual(ref.ids);
      expect(engine.stats().kernels).toContain('8 splits of ≥ 64 keys, prefill tiles');
    } finally {
      await engine.dispose();
      device.destroy();
    }
  });
});
