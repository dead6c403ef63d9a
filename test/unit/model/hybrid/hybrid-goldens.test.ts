// Tiny Qwen3.5 hybrid checkpoints (dense and MoE; safetensors, GGUF Q8_0 and Q4_K_M; n_k ≠ n_v; Gated
// DeltaNet and full-attention layers; a vision tensor and an MTP block that must not be read): the
// reference's greedy ids equal the checked-in goldens (tiny-hybrid-greedy.json), the split
// [0,k)+[k,L) equals [0,L) bitwise, a BF16 GGUF (llama.cpp's converter transforms included) gives the
// safetensors golden, and a GGUF read over HTTP Range gives its golden. Goldens are written on purpose
// only: `npx tsx test/goldens/make-hybrid-goldens.ts`.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatTemplate } from '../../../../src/model/chat-template.ts';
import { loadWeights, planWeights } from '../../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../../src/model/reference/reference-engine.ts';
import { resolveModelSource } from '../../../../src/model/sources/resolve.ts';
import { Tokenizer } from '../../../../src/model/tokenizer.ts';
import type { ModelSource } from '../../../../src/model/types.ts';
import { degeneracyReport, GOLDEN_NEW_TOKENS, GOLDEN_PROMPT, referenceGreedy } from '../../../goldens/golden-setup.ts';
import { HYBRID_GOLDEN_FILE, HYBRID_GOLDEN_MODELS, hybridGoldenCli, hybridGoldenSource, type HybridGoldenFile, type HybridGoldenName } from '../../../goldens/hybrid-golden-setup.ts';
import { startRangeServer, type RangeServer } from '../../../helpers/range-server.ts';
import { tinyGgufModel } from '../../../helpers/tiny-model.ts';

const golden = JSON.parse(readFileSync(HYBRID_GOLDEN_FILE, 'utf8')) as HybridGoldenFile;
const SLOW = 240_000;
const NAMES = Object.keys(HYBRID_GOLDEN_MODELS) as HybridGoldenName[];

it('the hybrid golden file records the setup the tests use', () => {
  expect(golden.prompt).toBe(GOLDEN_PROMPT);
  expect(golden.maxNewTokens).toBe(GOLDEN_NEW_TOKENS);
  expect(Object.keys(golden.models).sort()).toEqual([...NAMES].sort());
  for (const n of NAMES) {
    expect(golden.models[n].options).toEqual(HYBRID_GOLDEN_MODELS[n].options);
    expect(golden.models[n].makeTinyModel).toBe(hybridGoldenCli(n));
  }
});

describe.each(NAMES)('tiny hybrid %s', (name) => {
  const want = golden.models[name].ids;
  let source: ModelSource;
  beforeAll(async () => { source = await resolveModelSource(await hybridGoldenSource(name)); }, SLOW);

  it('is a hybrid with n_k ≠ n_v, both mixers, its template XML; the golden ids are varied', async () => {
    const w = await loadWeights(source, { layers: [0, 4] });
    const h = w.config.hybrid!;
    expect(h.linearNumKeyHeads).not.toBe(h.linearNumValueHeads);
    expect(new Set(h.layerTypes)).toEqual(new Set(['linear_attention', 'full_attention']));
    expect(w.config.modelType).toBe(name.startsWith('moe') ? 'qwen3_5_moe' : 'qwen3_5');
    const r = degeneracyReport(want);
    expect(want).toHaveLength(GOLDEN_NEW_TOKENS);
    expect(r.distinct).toBeGreaterThanOrEqual(16);
    expect(r.longestRun).toBeLessThanOrEqual(5);
    const tok = await Tokenizer.fromSource(source);
    expect(tok.encode(GOLDEN_PROMPT)).toEqual(golden.promptIds);
    const template = ChatTemplate.fromTokenizerConfig(tok.config);
    expect(template.format).toBe('xml');
    expect(template.render([{ role: 'user', content: 'hi' }], [])).toBe('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n');
  }, SLOW);

  // greedy ids read from disk: the reference row of the engine conformance suite (test/helpers/engine-conformance.ts)
  it('layers [0,k) then [k,L) equal [0,L) bitwise, each part loaded on its own', async () => {
    const ids = golden.promptIds;
    const whole = new ReferenceEngine(await loadWeights(source, { layers: [0, 4], embedding: true, head: true }), { ctx: 64 });
    const wantLogits = await whole.logits(await whole.runLayers([0, 4], 0, await whole.embed(ids)));
    for (const k of [1, 3]) {
      const a = new ReferenceEngine(await loadWeights(source, { layers: [0, k], embedding: true }), { ctx: 64 });
      const b = new ReferenceEngine(await loadWeights(source, { layers: [k, 4], head: true }), { ctx: 64 });
      const h = await b.runLayers([k, 4], 0, await a.runLayers([0, k], 0, await a.embed(ids)));
      expect(await b.logits(h)).toEqual(wantLogits);
    }
  }, SLOW);

  it('reads neither the vision tower nor the MTP block', async () => {
    const plan = await planWeights(source, { layers: [0, 4], embedding: true, head: true });
    const read = plan.reads.flatMap((r) => r.tensors);
    expect(read.some((t) => t.includes('visual') || t.startsWith('mtp.') || t.startsWith('blk.4.'))).toBe(false);
    expect(read.length).toBe(plan.tensorCount);
  }, SLOW);
});

it('a BF16 GGUF of the safetensors golden model (converter transforms and all) gives the safetensors golden', async () => {
  for (const moe of [false, true]) {
    const m = await tinyGgufModel({ ...HYBRID_GOLDEN_MODELS[moe ? 'moe-safetensors' : 'dense-safetensors'].options, fileType: 'BF16' });
    expect(await referenceGreedy(await resolveModelSource(m.path), golden.promptIds)).toEqual(golden.models[moe ? 'moe-safetensors' : 'dense-safetensors'].ids);
  }
}, SLOW);

describe('over HTTP', () => {
  let server: RangeServer;
  let file: string;
  beforeAll(async () => {
    const m = await tinyGgufModel(HYBRID_GOLDEN_MODELS['moe-Q4_K_M'].options);
    file = m.file;
    server = await startRangeServer(m.dir);
  }, SLOW);
  afterAll(async () => server.close());
  it('a Q4_K_M MoE hybrid read by Range gives its golden', async () => {
    expect(await referenceGreedy(await resolveModelSource(`${server.url}/${file}`), golden.promptIds)).toEqual(golden.models['moe-Q4_K_M'].ids);
    expect(server.requests.filter((r) => r.status === 206).length).toBeGreaterThan(0);
  }, SLOW);
});
