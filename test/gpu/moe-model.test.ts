// Issue 13 on the WebGPU engine, whole models: a tiny Qwen3 MoE from safetensors (per-expert tensors, a
// dense layer from mlp_only_layers, norm_topk_prob both ways) gives the reference engine's 32 greedy
// tokens on both paths; and (acceptance 4) a decode token of the tiny Q4_K_M MoE GGUF reads, in every MoE
// layer, exactly the stored bytes of the experts the reference routes it to — counted by the expert
// matvecs themselves — so the expert bytes a token reads are k/E of the layer's expert bytes.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createWebGPUEngine } from '../../src/gpu/create-engine.ts';
import { Generator } from '../../src/model/generator.ts';
import { loadWeights } from '../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import { NodeFolderSource } from '../../src/model/sources/node-folder.ts';
import { resolveModelSource } from '../../src/model/sources/resolve.ts';
import type { Linear, MoeMlpWeights } from '../../src/model/types.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile } from '../goldens/gguf-golden-setup.ts';
import { tinyGgufModel, tinyModelDir, type TinyModelDirOptions } from '../helpers/tiny-model.ts';
import { testDevice } from './helpers.ts';
import { sampleNext } from '../../src/model/engine-types.ts';
import { pickRow } from '../../src/model/sampler.ts';

const golden = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
const CTX = 64;
const GREEDY = { temperature: 0 };

const MOE: TinyModelDirOptions = { layers: 3, seed: 11, moe: { experts: 8, topK: 2, intermediate: 64, mlpOnlyLayers: [1] } };

describe.each([true, false])('a tiny qwen3_moe safetensors model (norm_topk_prob %s) on the WebGPU engine', (normTopkProb) => {
  it.each([false, true])('32 greedy tokens equal the reference engine\'s (shader-f16 %s)', async (useF16) => {
    const opts = { ...MOE, moe: { ...MOE.moe!, normTopkProb } };
    const weights = await loadWeights(new NodeFolderSource(await tinyModelDir(opts)), { layers: [0, 3], embedding: true, head: true });
    expect(weights.config.modelType).toBe('qwen3_moe');
    expect([...weights.layers.values()].map((l) => l.ffn.kind)).toEqual(['moe', 'dense', 'moe']);
    const want = await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(golden.promptIds, { maxNewTokens: 32 });
    const device = await testDevice(useF16);
    const engine = await createWebGPUEngine(weights, { device, ctx: CTX, useF16 });
    try {
      const got = await new Generator(engine, { ctx: CTX }).generate(golden.promptIds, { maxNewTokens: 32 });
      expect(got.ids).toEqual(want.ids);
      expect(new Set(want.ids).size).toBeGreaterThan(4);     // not a degenerate repeat
    } finally {
      await engine.dispose();
      device.destroy();
    }
  });
});

/** Bytes of one expert's stored rows in a stacked expert part (the file's bytes over E). */
function expertBytes(l: Linear, E: number): number {
  if (l.kind !== 'ggml' || l.segments.length !== 1) throw new Error('expected one ggml segment');
  return l.segments[0]!.bytes.byteLength / E;
}

describe('decode reads only the selected experts (tiny Q4_K_M MoE GGUF)', () => {
  it('each decode token: per MoE layer, the bytes of the reference\'s k experts, no other expert\'s', async () => {
    const spec = GGUF_GOLDEN_MODELS['moe-Q4_K_M'];
    const m = await tinyGgufModel(spec);
    const weights = await loadWeights(await resolveModelSource(m.path), { layers: [0, spec.layers], embedding: true, head: true });
    const ref = new ReferenceEngine(weights, { ctx: CTX });
    const device = await testDevice(false);
    const engine = await createWebGPUEngine(weights, { device, ctx: CTX, useF16: false });
    try {
      const moeLayers = new Map([...weights.layers.values()].flatMap((l): [number, MoeMlpWeights][] => (l.ffn.kind === 'moe' ? [[l.index, l.ffn.moe]] : [])));
      expect(moeLayers.size).toBe(spec.layers);
      // prefill on both engines (the grouped matmuls; not counted), then one token at a time; the
      // reference runs the layers on the same tokens (its routing), the tokens themselves are the goldens'
      await ref.runLayers([0, spec.layers], 0, await ref.embed(golden.promptIds));
      let next = await sampleNext(engine, await engine.runLayers([0, spec.layers], 0, await engine.embed(golden.promptIds)), GREEDY);
      const want = golden.models['moe-Q4_K_M'].ids;
      expect(next).toBe(want[0]);
      await engine.expertBytesRead({ reset: true });
      ref.expertRuns.splice(0);
      let bytes = 0;
      for (let step = 0; step < 8; step++) {
        await ref.runLayers([0, spec.layers], ref.kvLength(), await ref.embed([next]));
        // one token and no more: decodeNext would let the engine start the next token ahead (its experts
        // read before this count), so the step is asked for without `ahead`
        next = pickRow((await engine.decode({ tokens: [next], rows: [{ opts: GREEDY }] }))[0]!, GREEDY);
        expect(next, `decode step ${step}`).toBe(want[step + 1]);
        const runs = ref.expertRuns.splice(0);
        const read = await engine.expertBytesRead({ reset: true });
        expect([...read.keys()].sort()).toEqual([...moeLayers.keys()].sort());
        for (const [layer, perExpert] of read) {
          const w = moeLayers.get(layer)!;
          const E = w.numExperts;
          const oneExpert = expertBytes(w.gate, E) + expertBytes(w.up, E) + expertBytes(w.down, E);
          const chosen = runs.filter((r) => r.layer === layer).map((r) => r.expert);
          expect(chosen).toHaveLength(w.topK);
          expect([...perExpert], `step ${step}, layer ${layer}`).toEqual(Array.from({ length: E }, (_, e) => (chosen.includes(e) ? oneExpert : 0)));
          const layerBytes = perExpert.reduce((a, b) => a + b, 0);
          expect(layerBytes).toBeLessThanOrEqual((w.topK / E) * E * oneExpert);   // k of E experts' bytes
          bytes += layerBytes;
        }
      }
      expect(bytes).toBeGreaterThan(0);
    } finally {
      await engine.dispose();
      device.destroy();
    }
  });
});
