// Issue 29 acceptance 2 (Node half) for the tiny Qwen3 checkpoints in both real layouts (BF16
// safetensors, MLC q4f16_1): 32 greedy tokens from the CPU (WASM) engine, through the shared Generator,
// equal the checked-in goldens (test/goldens/tiny-greedy.json) exactly; prefill then token-by-token
// decode gives the same; and the KV cache holds the reference's f16-rounded values.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../../src/cpu/create-engine.ts';
import { decodeNext, sampleNext } from '../../../src/model/engine-types.ts';
import { Generator } from '../../../src/model/generator.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import type { ModelWeights } from '../../../src/model/types.ts';
import { folderSource, GOLDEN_FILE, GOLDEN_FORMATS, GOLDEN_MODEL, type GoldenFile } from '../../goldens/golden-setup.ts';
import { tinyModelDir } from '../../helpers/tiny-model.ts';

const golden = JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as GoldenFile;
const CTX = 64;
const SLOW = 180_000;   // a fresh clone builds the tiny checkpoint and compiles the kernels first

describe.each(GOLDEN_FORMATS)('tiny %s checkpoint on the CPU engine', (format) => {
  let weights: ModelWeights;
  beforeAll(async () => {
    const source = folderSource(await tinyModelDir({ ...GOLDEN_MODEL, format }));
    weights = await loadWeights(source, { layers: [0, GOLDEN_MODEL.layers], embedding: true, head: true });
  }, SLOW);

  it.each(['plain', 'relaxed'] as const)('32 greedy tokens through the Generator equal the golden, %s SIMD', async (simd) => {
    const engine = await createCpuEngine(weights, { ctx: CTX, simd });
    const r = await new Generator(engine, { ctx: CTX }).generate(golden.promptIds, { maxNewTokens: golden.maxNewTokens });
    expect(r.ids).toEqual(golden.formats[format].ids);
    expect(engine.stats()).toMatchObject({ engine: 'wasm', simd });
    await engine.dispose();
  }, SLOW);

  it('prefill, then one token at a time, gives the golden; the KV cache is the reference\'s f16 values', async () => {
    const engine = await createCpuEngine(weights, { ctx: CTX });
    const ref = new ReferenceEngine(weights, { ctx: CTX });
    const L = weights.config.numLayers;
    const h = await engine.runLayers([0, L], 0, await engine.embed(golden.promptIds));
    const ids = [await sampleNext(engine, h, { temperature: 0 })];
    while (ids.length < golden.maxNewTokens) ids.push(await decodeNext(engine, ids[ids.length - 1]!, { temperature: 0 }));
    expect(ids).toEqual(golden.formats[format].ids);
    expect(engine.kvLength()).toBe(golden.promptIds.length + golden.maxNewTokens - 1);
    await ref.runLayers([0, L], 0, await ref.embed(golden.promptIds));
    const n = golden.promptIds.length;
    const ours = engine.cachedKv(0), theirs = ref.cachedKv(0);
    const width = weights.config.numKvHeads * weights.config.headDim;
    // the first layer's K/V come from the same inputs: equal but for an f16 rounding step where f32 sums differ
    let off = 0;
    for (let i = 0; i < n * width; i++) if (ours.keys[i] !== theirs.keys[i] || ours.values[i] !== theirs.values[i]) off++;
    expect(off).toBeLessThan(n * width * 0.01);
    await engine.dispose();
  }, SLOW);

  it('truncate then continue gives the same tokens as the first run', async () => {
    const engine = await createCpuEngine(weights, { ctx: CTX });
    const gen = new Generator(engine, { ctx: CTX });
    const first = await gen.generate(golden.promptIds, { maxNewTokens: 8 });
    await engine.truncate(golden.promptIds.length - 3);
    const L = weights.config.numLayers;
    const h = await engine.runLayers([0, L], golden.promptIds.length - 3, await engine.embed(golden.promptIds.slice(-3)));
    expect(await sampleNext(engine, h, { temperature: 0 })).toBe(first.ids[0]);
    await expect(engine.runLayers([0, L], 3, await engine.embed([1]))).rejects.toThrow(/does not continue/);
    expect(engine.kvLength()).toBe(golden.promptIds.length);
    await engine.dispose();
  }, SLOW);
});
