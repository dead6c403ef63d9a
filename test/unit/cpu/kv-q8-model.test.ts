// The q8_0 KV cache on the CPU (WASM) engine, on whole models, with the oracle of the WebGPU engine's
// q8_0 test (test/gpu/kv-q8.test.ts): the reference engine with a q8_0 cache (it rounds K/V exactly as
// llama.cpp's q8_0 blocks read back). The tiny dense Qwen3 (BF16 safetensors), the tiny Qwen3 MoE and
// the tiny dense Qwen3.5 hybrid (its gated-attention layer keeps the KV cache) give the reference's 32
// greedy tokens with q8_0; the first layer's cached K/V are the reference's q8_0 values; and on the
// hybrid, the pinned checkpoint (a recurrent-state snapshot restore + a q8_0 KV cut) equals a run from
// scratch. The cache takes 34 bytes a 32-value block where f16 takes 64.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../../src/cpu/create-engine.ts';
import { Generator } from '../../../src/model/generator.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { NodeFolderSource } from '../../../src/model/sources/node-folder.ts';
import { resolveModelSource } from '../../../src/model/sources/resolve.ts';
import type { ModelWeights } from '../../../src/model/types.ts';
import { folderSource, GOLDEN_FILE, GOLDEN_MODEL, type GoldenFile } from '../../goldens/golden-setup.ts';
import { GGUF_GOLDEN_FILE, type GgufGoldenFile } from '../../goldens/gguf-golden-setup.ts';
import { HYBRID_GOLDEN_FILE, hybridGoldenSource, type HybridGoldenFile } from '../../goldens/hybrid-golden-setup.ts';
import { tinyModelDir, type TinyModelDirOptions } from '../../helpers/tiny-model.ts';

const CTX = 96;
const NEW = 32;
const SLOW = 300_000;   // a fresh clone writes the tiny models first; each runs the reference engine too
const MOE: TinyModelDirOptions = { layers: 3, seed: 11, moe: { experts: 8, topK: 2, intermediate: 64, mlpOnlyLayers: [1] } };

interface Golden { weights: ModelWeights; prompt: number[] }

const MODELS: [string, () => Promise<Golden>][] = [
  ['dense (tiny Qwen3, BF16 safetensors)', async () => {
    const golden = JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as GoldenFile;
    const source = folderSource(await tinyModelDir({ ...GOLDEN_MODEL, format: 'safetensors' }));
    return { weights: await loadWeights(source, { layers: [0, GOLDEN_MODEL.layers], embedding: true, head: true }), prompt: golden.promptIds };
  }],
  ['MoE (tiny qwen3_moe)', async () => {
    const golden = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
    return { weights: await loadWeights(new NodeFolderSource(await tinyModelDir(MOE)), { layers: [0, 3], embedding: true, head: true }), prompt: golden.promptIds };
  }],
  ['hybrid (tiny Qwen3.5, its attention layer)', async () => {
    const golden = JSON.parse(readFileSync(HYBRID_GOLDEN_FILE, 'utf8')) as HybridGoldenFile;
    const source = await resolveModelSource(await hybridGoldenSource('dense-safetensors'));
    return { weights: await loadWeights(source, { layers: [0, 4], embedding: true, head: true }), prompt: golden.promptIds };
  }],
];

const generate = async (engine: ReferenceEngine | Awaited<ReturnType<typeof createCpuEngine>>, prompt: number[], n: number, pinAt?: number): Promise<number[]> =>
  (await new Generator(engine, { ctx: CTX }).generate(prompt, { maxNewTokens: n, ...(pinAt === undefined ? {} : { pinAt }) })).ids;

describe.each(MODELS)('q8_0 KV cache on the CPU engine: %s', (_label, load) => {
  it('32 greedy tokens equal the reference engine\'s with a q8_0 cache; the cached K/V are its q8_0 values', async () => {
    const { weights, prompt } = await load();
    const engine = await createCpuEngine(weights, { ctx: CTX, kv: 'q8_0' });
    const ref = new ReferenceEngine(weights, { ctx: CTX, kvType: 'q8_0' });
    const ours = await generate(engine, prompt, NEW);
    const theirs = await generate(ref, prompt, NEW);
    expect(new Set(theirs).size).toBeGreaterThan(4);
    expect(ours).toEqual(theirs);
    const c = weights.config;
    expect(engine.stats()).toMatchObject({ kv: 'q8_0', kvBytes: c.hybrid ? expect.any(Number) : c.numLayers * 2 * CTX * c.numKvHeads * Math.ceil(c.headDim / 32) * 34 });
    // the first attention layer's K/V come from the same inputs: equal but where an f32 sum's last bit moves a block's rounding
    const layer = c.hybrid ? c.hybrid.layerTypes.indexOf('full_attention') : 0;
    const a = engine.cachedKv(layer), b = ref.cachedKv(layer);
    expect(a.keys.length).toBe(b.keys.length);
    let off = 0;
    for (let i = 0; i < a.keys.length; i++) if (a.keys[i] !== b.keys[i] || a.values[i] !== b.values[i]) off++;
    expect(off).toBeLessThan(a.keys.length * 0.01);
    await engine.dispose();
  }, SLOW);
});

it('the tiny hybrid with a q8_0 cache: the pinned checkpoint (snapshot restore + KV cut) equals a run from scratch', async () => {
  const { weights, prompt } = await MODELS[2]![1]();
  const system = prompt.slice(0, 6), userB = [40, 1079, 311, 1281, 264, 1273, 13];
  const e = await createCpuEngine(weights, { ctx: CTX, kv: 'q8_0' });
  const g = new Generator(e, { ctx: CTX });
  await g.generate([...prompt], { maxNewTokens: 8, pinAt: system.length });
  const second = await g.generate([...system, ...userB], { maxNewTokens: 8, pinAt: system.length });
  expect(second.stats).toMatchObject({ promptReused: system.length, promptComputed: userB.length });
  expect(second.ids).toEqual(await generate(new ReferenceEngine(weights, { ctx: CTX, kvType: 'q8_0' }), [...system, ...userB], 8));
  await e.dispose();
}, SLOW);
