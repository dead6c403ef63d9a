// Issue 29 acceptance 2 (Chromium half): every tiny model's golden on the WebAssembly engine in headless
// Chromium, from the production build (the kernels compiled by the Vite plugin and fetched as
// cpu-kernels[-threads].wasm), all in ONE page (harness/cpu.html) that loads each fixture in turn:
// - the tiny Qwen3 as BF16 safetensors and as MLC q4f16_1 (test/goldens/tiny-greedy.json);
// - the tiny GGUF goldens, dense and MoE, Q8_0 and llama.cpp's Q4_K_M mix (tiny-gguf-greedy.json);
// - every other GGUF file type we read (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q5_K_M, Q6_K) and a
//   qwen3_moe safetensors model, against the reference engine's greedy tokens computed here in Node
//   (as test/unit/cpu/gguf-model.test.ts and moe-model.test.ts do);
// - the Qwen3.5 hybrids, dense and MoE, safetensors and GGUF (tiny-hybrid-greedy.json).
// Each runs in the page's worker with the 2-thread pool (the page is cross-origin isolated); two of them
// also run single-threaded on the page's main thread, and two on the plain SIMD128 build (this Chromium
// validates relaxed SIMD, so the rest run the relaxed one). Weights stream into the WASM memory
// (openWeights), as a room's device loads them. The fixtures are built once into .cache/test-models.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModelConfig } from '../src/model/config.ts';
import { Generator } from '../src/model/generator.ts';
import { loadWeights } from '../src/model/load-weights.ts';
import { ReferenceEngine } from '../src/model/reference/reference-engine.ts';
import { resolveModelSource } from '../src/model/sources/resolve.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile, type GgufGoldenName } from '../test/goldens/gguf-golden-setup.ts';
import { GOLDEN_FILE, GOLDEN_FORMATS, GOLDEN_MODEL, type GoldenFile } from '../test/goldens/golden-setup.ts';
import { HYBRID_GOLDEN_FILE, HYBRID_GOLDEN_MODELS, hybridGoldenSource, type HybridGoldenFile, type HybridGoldenName } from '../test/goldens/hybrid-golden-setup.ts';
import { tinyGgufModel, tinyModelDir } from '../test/helpers/tiny-model.ts';
import type { GreedyRequest, GreedyResult } from '../harness/cpu-run.ts';
import { newDeviceContext, useServerAndBrowser } from './helpers/browser.ts';

const read = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;
const tiny = read<GoldenFile>(GOLDEN_FILE);
const gguf = read<GgufGoldenFile>(GGUF_GOLDEN_FILE);
const hybrid = read<HybridGoldenFile>(HYBRID_GOLDEN_FILE);
const models = path.resolve(import.meta.dirname, '../.cache/test-models');
const env = useServerAndBrowser({ port: 0, extraStatic: { '/test-models': models } });
const THREADS = 2;
// One fixture: building it (a fresh clone writes the tiny model with the full Qwen3 vocabulary, ~10 s on
// a busy 2-core machine), the Node reference where there is no golden, and the page's load + 32 tokens.
const FIXTURE_MS = 240_000;
const OTHER_GGUF_TYPES = ['F32', 'F16', 'BF16', 'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q5_K_M', 'Q6_K'] as const;
const MOE_SAFETENSORS = { layers: 3, seed: 11, moe: { experts: 8, topK: 2, intermediate: 64, mlpOnlyLayers: [1], normTopkProb: false } };

let page: Page;
beforeAll(async () => {
  const context = await newDeviceContext(env.browser);
  page = await context.newPage();
  await page.goto(`${env.server.url}/harness/cpu.html`);
  await page.waitForFunction('window.__cpu && window.__cpu.ready', undefined, { timeout: 60_000 });
  expect(await page.evaluate('window.__cpu.isolated'), 'the pool needs a cross-origin isolated page').toBe(true);
}, 90_000);
afterAll(async () => { await page?.context().close(); });

const urlOf = (file: string): string => `${env.server.url}/test-models/${path.relative(models, file).split(path.sep).join('/')}`;

/** simd absent: auto, which on this Chromium (it validates relaxed SIMD) loads the relaxed build. */
async function onPage(model: string, ids: number[], tokens: number, threads: number, simd?: 'plain'): Promise<GreedyResult> {
  const r: GreedyRequest = { model: urlOf(model), ids, tokens, threads, ...(simd ? { simd } : {}) };
  const got = await page.evaluate(async (a) => (window as unknown as { cpuGreedy(a: GreedyRequest): Promise<GreedyResult> }).cpuGreedy(a), r);
  expect(got).toMatchObject({ engine: 'wasm', simd: simd ?? 'relaxed', threads, finish: 'cap' });
  return got;
}

/** The reference engine's greedy tokens on the same file, in Node (the models without a golden). */
async function referenceIds(model: string, ids: number[], tokens: number): Promise<number[]> {
  const source = await resolveModelSource(model);
  const { numLayers } = await loadModelConfig(source);
  const weights = await loadWeights(source, { layers: [0, numLayers], embedding: true, head: true });
  const ctx = ids.length + tokens;
  const r = await new Generator(new ReferenceEngine(weights, { ctx }), { ctx }).generate(ids, { maxNewTokens: tokens });
  expect(new Set(r.ids).size, 'a reference answer with varied tokens').toBeGreaterThan(4);
  return r.ids;
}

describe('tiny Qwen3 checkpoints on the WASM engine in Chromium', () => {
  it.each(GOLDEN_FORMATS)('%s: 32 greedy tokens equal the golden (2 threads, in the worker)', async (format) => {
    const dir = await tinyModelDir({ ...GOLDEN_MODEL, format });
    expect((await onPage(dir, tiny.promptIds, tiny.maxNewTokens, THREADS)).ids).toEqual(tiny.formats[format].ids);
  }, FIXTURE_MS);

  it('safetensors on the page\'s main thread, single-threaded: the same golden', async () => {
    const dir = await tinyModelDir({ ...GOLDEN_MODEL, format: 'safetensors' });
    expect((await onPage(dir, tiny.promptIds, tiny.maxNewTokens, 1)).ids).toEqual(tiny.formats.safetensors.ids);
  }, FIXTURE_MS);
});

describe('tiny GGUF goldens on the WASM engine in Chromium', () => {
  it.each(Object.keys(GGUF_GOLDEN_MODELS) as GgufGoldenName[])('%s: 32 greedy tokens equal the golden (2 threads)', async (name) => {
    const m = await tinyGgufModel(GGUF_GOLDEN_MODELS[name]);
    expect((await onPage(m.path, gguf.promptIds, gguf.maxNewTokens, THREADS)).ids).toEqual(gguf.models[name].ids);
  }, FIXTURE_MS);

  it('dense-Q8_0 on the page\'s main thread, single-threaded: the same golden', async () => {
    const m = await tinyGgufModel(GGUF_GOLDEN_MODELS['dense-Q8_0']);
    expect((await onPage(m.path, gguf.promptIds, gguf.maxNewTokens, 1)).ids).toEqual(gguf.models['dense-Q8_0'].ids);
  }, FIXTURE_MS);

  it.each(['dense-Q8_0', 'moe-Q4_K_M'] as const)('%s on the plain SIMD128 build (simd: plain, 2 threads): the same golden', async (name) => {
    const m = await tinyGgufModel(GGUF_GOLDEN_MODELS[name]);
    expect((await onPage(m.path, gguf.promptIds, gguf.maxNewTokens, THREADS, 'plain')).ids).toEqual(gguf.models[name].ids);
  }, FIXTURE_MS);
});

describe('every other GGUF file type and a qwen3_moe safetensors model: the reference engine\'s tokens', () => {
  it.each(OTHER_GGUF_TYPES)('a tiny %s GGUF: 32 greedy tokens equal the reference\'s (2 threads)', async (fileType) => {
    const m = await tinyGgufModel({ layers: 2, seed: 5, fileType });
    const want = await referenceIds(m.path, gguf.promptIds, 32);
    expect((await onPage(m.path, gguf.promptIds, 32, THREADS)).ids).toEqual(want);
  }, FIXTURE_MS);

  it('a tiny qwen3_moe safetensors model (per-expert tensors, a dense layer): the reference\'s tokens (2 threads)', async () => {
    const dir = await tinyModelDir(MOE_SAFETENSORS);
    const want = await referenceIds(dir, gguf.promptIds, 32);
    const got = await onPage(dir, gguf.promptIds, 32, THREADS);
    expect(got.modelType).toBe('qwen3_moe');
    expect(got.ids).toEqual(want);
  }, FIXTURE_MS);
});

describe('tiny Qwen3.5 hybrids on the WASM engine in Chromium', () => {
  it.each(Object.keys(HYBRID_GOLDEN_MODELS) as HybridGoldenName[])('%s: 32 greedy tokens equal the golden (2 threads)', async (name) => {
    const model = await hybridGoldenSource(name);
    expect((await onPage(model, hybrid.promptIds, hybrid.maxNewTokens, THREADS)).ids).toEqual(hybrid.models[name].ids);
  }, FIXTURE_MS);
});
