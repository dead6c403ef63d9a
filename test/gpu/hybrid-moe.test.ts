// Qwen3.5 MoE (issue 14's hybrid with routed experts + a gated shared expert) on the WebGPU engine, on
// the MoE and ggml kernels of issue 13: the tiny hybrid MoE goldens (tiny-hybrid-greedy.json: BF16
// safetensors, GGUF Q8_0 and llama.cpp's Q4_K_M mix) give their 32 greedy tokens on both paths, and so do
// the dense hybrid's GGUF Q8_0 / Q4_K_M goldens (ggml block types in the hybrid's projections); a 3-way
// split room equals the single engine; a decode token reads only its k experts' bytes in every layer.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createWebGPUEngine } from '../../src/gpu/create-engine.ts';
import { Generator } from '../../src/model/generator.ts';
import { loadWeights } from '../../src/model/load-weights.ts';
import { resolveModelSource } from '../../src/model/sources/resolve.ts';
import type { ModelWeights, WeightRequest } from '../../src/model/types.ts';
import { RoomEngine } from '../../src/room/room-engine.ts';
import { HYBRID_GOLDEN_FILE, hybridGoldenSource, type HybridGoldenFile, type HybridGoldenName } from '../goldens/hybrid-golden-setup.ts';
import { testDevice } from './helpers.ts';
import { decodeNext } from '../../src/model/engine-types.ts';

const golden = JSON.parse(readFileSync(HYBRID_GOLDEN_FILE, 'utf8')) as HybridGoldenFile;
const PROMPT = golden.promptIds;
const CTX = 96;
const SLOW = 240_000;
const NAMES: HybridGoldenName[] = ['moe-safetensors', 'moe-Q8_0', 'moe-Q4_K_M'];

async function load(name: HybridGoldenName, req: Partial<WeightRequest> = {}): Promise<ModelWeights> {
  return loadWeights(await resolveModelSource(await hybridGoldenSource(name)), { layers: [0, 4], embedding: true, head: true, ...req });
}

describe.each(NAMES.flatMap((n) => [false, true].map((f16) => [n, f16] as const)))('tiny hybrid %s on WebGPU (shader-f16 %s)', (name, useF16) => {
  it('32 greedy tokens equal the golden', async () => {
    const weights = await load(name);
    expect([...weights.layers.values()].every((l) => l.mixer.kind !== 'attention' && l.ffn.kind === 'moe' && l.ffn.shared !== undefined)).toBe(true);
    const device = await testDevice(useF16);
    const engine = await createWebGPUEngine(weights, { device, ctx: CTX, useF16 });
    try {
      const r = await new Generator(engine, { ctx: CTX }).generate(PROMPT, { maxNewTokens: golden.maxNewTokens });
      expect(r.ids).toEqual(golden.models[name].ids);
    } finally {
      await engine.dispose();
      device.destroy();
    }
  }, SLOW);
});

describe.each((['dense-Q8_0', 'dense-Q4_K_M'] as const).flatMap((n) => [false, true].map((f16) => [n, f16] as const)))('tiny dense hybrid %s on WebGPU (shader-f16 %s)', (name, useF16) => {
  it('32 greedy tokens equal the golden', async () => {
    const weights = await load(name);
    const device = await testDevice(useF16);
    const engine = await createWebGPUEngine(weights, { device, ctx: CTX, useF16 });
    try {
      const r = await new Generator(engine, { ctx: CTX }).generate(PROMPT, { maxNewTokens: golden.maxNewTokens });
      expect(r.ids).toEqual(golden.models[name].ids);
      expect(engine.stats().kernels).toContain('ggml');
    } finally {
      await engine.dispose();
      device.destroy();
    }
  }, SLOW);
});

describe('tiny hybrid MoE (Q4_K_M) on WebGPU: split and bytes read', () => {
  it('a 3-way split room ([0,1) + embedding + head, [1,3), [3,4)) equals the golden', async () => {
    const device = await testDevice(false);
    const parts = [await load('moe-Q4_K_M', { layers: [0, 1] }), await load('moe-Q4_K_M', { layers: [1, 3], embedding: false, head: false }),
      await load('moe-Q4_K_M', { layers: [3, 4], embedding: false, head: false })];
    const engines = await Promise.all(parts.map((w) => createWebGPUEngine(w, { device, ctx: CTX, useF16: false })));
    try {
      const room = new RoomEngine(engines[0]!, engines, { numLayers: 4, hiddenSize: parts[0]!.config.hiddenSize });
      const r = await new Generator(room, { ctx: CTX }).generate(PROMPT, { maxNewTokens: golden.maxNewTokens });
      expect(r.ids).toEqual(golden.models['moe-Q4_K_M'].ids);
      // each decode token read exactly k experts' bytes in each of the engine's MoE layers
      await engines[1]!.expertBytesRead({ reset: true });
      await decodeNext(room, r.ids.at(-1)!, { temperature: 0 });
      const read = await engines[1]!.expertBytesRead();
      expect([...read.keys()]).toEqual([1, 2]);
      for (const perExpert of read.values()) expect(perExpert.filter((b) => b > 0)).toHaveLength(parts[0]!.config.moe!.numExpertsPerTok);
    } finally {
      for (const e of engines) await e.dispose();
      device.destroy();
    }
  }, SLOW);
});
