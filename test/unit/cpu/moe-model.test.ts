// Issue 29 on the CPU (WASM) engine, MoE: a tiny Qwen3 MoE from safetensors (per-expert tensors, a dense
// layer from mlp_only_layers, norm_topk_prob both ways) gives the reference engine's 32 greedy tokens;
// and a decode token of the tiny Q4_K_M MoE GGUF reads exactly its active parameters: every dense
// linear once, the router, and k of E experts' rows in each MoE layer (bytes counted by the kernels'
// linear calls), giving the golden's tokens.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../../src/cpu/create-engine.ts';
import { linearParts } from '../../../src/cpu/formats.ts';
import { decodeNext, sampleNext } from '../../../src/model/engine-types.ts';
import { Generator } from '../../../src/model/generator.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { NodeFolderSource } from '../../../src/model/sources/node-folder.ts';
import { resolveModelSource } from '../../../src/model/sources/resolve.ts';
import type { Linear } from '../../../src/model/types.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile } from '../../goldens/gguf-golden-setup.ts';
import { tinyGgufModel, tinyModelDir, type TinyModelDirOptions } from '../../helpers/tiny-model.ts';

const golden = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
const CTX = 64;
const GREEDY = { temperature: 0 };
const SLOW = 240_000;
const MOE: TinyModelDirOptions = { layers: 3, seed: 11, moe: { experts: 8, topK: 2, intermediate: 64, mlpOnlyLayers: [1] } };

const bytesOf = (l: Linear): number => linearParts(l).reduce((a, p) => a + p.bytes.byteLength + (p.scales?.byteLength ?? 0), 0);

describe.each([true, false])('a tiny qwen3_moe safetensors model (norm_topk_prob %s) on the CPU engine', (normTopkProb) => {
  it('32 greedy tokens equal the reference engine\'s', async () => {
    const opts = { ...MOE, moe: { ...MOE.moe!, normTopkProb } };
    const weights = await loadWeights(new NodeFolderSource(await tinyModelDir(opts)), { layers: [0, 3], embedding: true, head: true });
    expect([...weights.layers.values()].map((l) => l.ffn.kind)).toEqual(['moe', 'dense', 'moe']);
    const want = await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(golden.promptIds, { maxNewTokens: 32 });
    const engine = await createCpuEngine(weights, { ctx: CTX });
    const got = await new Generator(engine, { ctx: CTX }).generate(golden.promptIds, { maxNewTokens: 32 });
    expect(got.ids).toEqual(want.ids);
    expect(new Set(want.ids).size).toBeGreaterThan(4);
    await engine.dispose();
  }, SLOW);
});

describe('decode reads only the routed experts (tiny Q4_K_M MoE GGUF)', () => {
  it('each decode token reads the dense linears, the routers and k/E of the expert bytes, no more', async () => {
    const spec = GGUF_GOLDEN_MODELS['moe-Q4_K_M'];
    const weights = await loadWeights(await resolveModelSource((await tinyGgufModel(spec)).path), { layers: [0, spec.layers], embedding: true, head: true });
    let always = 0, experts = 0;
    for (const l of weights.layers.values()) {
      if (l.mixer.kind !== 'attention' || l.ffn.kind !== 'moe') throw new Error('expected attention + moe layers');
      always += bytesOf(l.mixer.qkv) + bytesOf(l.mixer.o) + bytesOf(l.ffn.moe.router);
      const m = l.ffn.moe;
      experts += (m.topK / m.numExperts) * (bytesOf(m.gate) + bytesOf(m.up) + bytesOf(m.down));
    }
    always += bytesOf(weights.lmHead ?? weights.embedding!);
    const engine = await createCpuEngine(weights, { ctx: CTX });
    const want = golden.models['moe-Q4_K_M'].ids;
    let next = await sampleNext(engine, await engine.runLayers([0, spec.layers], 0, await engine.embed(golden.promptIds)), GREEDY);
    expect(next).toBe(want[0]);
    for (let step = 0; step < 8; step++) {
      const before = engine.stats().bytesRead;
      const runs = engine.expertRuns.length;
      next = await decodeNext(engine, next, GREEDY);
      expect(next, `decode step ${step}`).toBe(want[step + 1]);
      expect(engine.expertRuns.length - runs).toBe(spec.layers * spec.moe.topK);
      expect(engine.stats().bytesRead - before, `step ${step}`).toBe(always + experts);
    }
    expect(always + experts).toBeLessThan(engine.stats().weightBytes);   // the other experts stay unread
    await engine.dispose();
  }, SLOW);
});
