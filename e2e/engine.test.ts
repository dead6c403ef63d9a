// Acceptance 2 (browser half): the engine in headless Chromium (WebGPU on SwiftShader: no shader-f16,
// so the f32 path), running in its comlink worker, loads the tiny checkpoints over HTTP (ranged reads)
// and its 32 greedy tokens equal the reference's computed here in Node; the tiny Qwen3.5 hybrid (Gated
// DeltaNet + gated attention, n_k ≠ n_v) gives its golden ids (tiny-hybrid-greedy.json), dense and MoE, safetensors
// and GGUF Q8_0 / Q4_K_M. Also: a named
// error crosses the worker with its name and code. And (issue 13 acceptance 2, browser half) the tiny GGUF
// goldens — dense and MoE, Q8_0 and Q4_K_M, full Qwen3 vocabulary — give their 32 greedy tokens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startServer, type RunningServer } from '../server/app.ts';
import { Generator } from '../src/model/generator.ts';
import { loadWeights } from '../src/model/load-weights.ts';
import { ReferenceEngine } from '../src/model/reference/reference-engine.ts';
import { NodeFolderSource } from '../src/model/sources/node-folder.ts';
import { writeTinyModel } from '../src/model/tiny/write-node.ts';
import { Tokenizer } from '../src/model/tokenizer.ts';
import { readFileSync } from 'node:fs';
import { HYBRID_GOLDEN_FILE, HYBRID_GOLDEN_MODELS, hybridGoldenSource, type HybridGoldenFile, type HybridGoldenName } from '../test/goldens/hybrid-golden-setup.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile, type GgufGoldenName } from '../test/goldens/gguf-golden-setup.ts';
import { resolveModelSource } from '../src/model/sources/resolve.ts';
import { tinyGgufModel } from '../test/helpers/tiny-model.ts';
import { launchChromium, newDeviceContext } from './helpers/browser.ts';

const PROMPT = 'def fibonacci(n):';
const TOKENS = 32;
const CTX = 96;

let server: RunningServer;
let browser: Browser;
let dir: string;
const ggufFiles = new Map<GgufGoldenName, string>();
const GGUF_NAMES = Object.keys(GGUF_GOLDEN_MODELS) as GgufGoldenName[];
const SMALL_BPE = { layers: 2, seed: 1, fileType: 'Q8_0', tokenizer: 'tiny-bpe' } as const;   // a non-Qwen vocabulary
let smallBpe: { path: string; url: string };
/** The hybrid goldens besides the dense safetensors one above: MoE, and GGUF Q8_0 / Q4_K_M, dense and MoE. */
const MORE_HYBRIDS = (Object.keys(HYBRID_GOLDEN_MODELS) as HybridGoldenName[]).filter((n) => n !== 'dense-safetensors');
const hybridUrls = new Map<HybridGoldenName, string>();

beforeAll(async () => {
  dir = path.join(mkdtempSync(path.join(tmpdir(), 'pooled-e2e-engine-')), 'tiny');
  await writeTinyModel(dir, { layers: 4, seed: 11 }, 'both');
  const ggufStatic: Record<string, string> = {};
  for (const name of GGUF_NAMES) {
    const m = await tinyGgufModel(GGUF_GOLDEN_MODELS[name]);
    ggufStatic[`/models/gguf-${name}`] = m.dir;
    ggufFiles.set(name, `/models/gguf-${name}/${m.file}`);
  }
  for (const name of MORE_HYBRIDS) {
    const at = await hybridGoldenSource(name);
    const gguf = HYBRID_GOLDEN_MODELS[name].format === 'gguf';
    ggufStatic[`/models/hybrid-${name}`] = gguf ? path.dirname(at) : at;
    hybridUrls.set(name, gguf ? `/models/hybrid-${name}/${path.basename(at)}` : `/models/hybrid-${name}`);
  }
  const small = await tinyGgufModel(SMALL_BPE);
  ggufStatic['/models/gguf-small-bpe'] = small.dir;
  smallBpe = { path: small.path, url: `/models/gguf-small-bpe/${small.file}` };
  server = await startServer({ port: 0, extraStatic: { '/models/tiny': dir, '/models/hybrid': await hybridGoldenSource('dense-safetensors'), ...ggufStatic } });
  browser = await launchChromium();
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function runHarness(query: string): Promise<{ page: Page; result: Record<string, unknown> }> {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  await page.goto(`${server.url}/harness/engine.html?${query}`);
  await page.waitForFunction('window.__engine && window.__engine.state !== "loading"', undefined, { timeout: 240_000, polling: 250 });
  const result = (await page.evaluate('window.__engine')) as Record<string, unknown>;
  return { page, result };
}

describe('the WebGPU engine in headless Chromium', () => {
  it.each(['safetensors', 'mlc'])('tiny %s checkpoint: 32 greedy tokens equal the reference', async (sub) => {
    const folder = path.join(dir, sub);
    const weights = await loadWeights(new NodeFolderSource(folder), { layers: [0, 4], embedding: true, head: true });
    const prompt = (await Tokenizer.fromSource(new NodeFolderSource(folder))).encode(PROMPT);
    const ref = await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(prompt, { maxNewTokens: TOKENS });
    const { page, result } = await runHarness(`model=/models/tiny/${sub}&tokens=${TOKENS}&ctx=${CTX}&prompt=${encodeURIComponent(PROMPT)}`);
    expect(result.state, String(result.message)).toBe('done');
    expect(result.prompt).toEqual(prompt);
    expect(result.ids).toEqual(ref.ids);
    expect((result.stats as { decodeDispatchesPerLayer: number }).decodeDispatchesPerLayer).toBeLessThanOrEqual(8);
    expect((result.adapter as { shaderF16: boolean }).shaderF16).toBe(false);   // SwiftShader: the f32 path
    await page.context().close();
  });

  it('tiny Qwen3.5 hybrid (BF16 safetensors): 32 greedy tokens equal the reference golden', async () => {
    const golden = JSON.parse(readFileSync(HYBRID_GOLDEN_FILE, 'utf8')) as HybridGoldenFile;
    const { page, result } = await runHarness(`model=/models/hybrid&tokens=32&ctx=${CTX}&prompt=${encodeURIComponent(golden.prompt)}`);
    expect(result.state, String(result.message)).toBe('done');
    expect(result.prompt).toEqual(golden.promptIds);
    expect(result.ids).toEqual(golden.models['dense-safetensors'].ids);
    expect((result.adapter as { shaderF16: boolean }).shaderF16).toBe(false);
    await page.context().close();
  });

  it('a missing model folder fails with the loader\'s named error, name and code intact across the worker', async () => {
    const { page, result } = await runHarness('model=/models/tiny/nothing-here&tokens=2');
    expect(result.state).toBe('error');
    expect(String(result.message)).toMatch(/nothing-here/);
    expect(result.name).toMatch(/Error$/);
    expect(typeof result.code).toBe('string');
    await page.context().close();
  });
});

describe('the tiny GGUF goldens on the WebGPU engine in headless Chromium', () => {
  const golden = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
  it.each(GGUF_NAMES)('%s: 32 greedy tokens equal the golden', async (name) => {
    const { page, result } = await runHarness(`model=${encodeURIComponent(ggufFiles.get(name)!)}&ids=${golden.promptIds.join(',')}&tokens=${golden.maxNewTokens}&ctx=64`);
    expect(result.state, String(result.message)).toBe('done');
    expect(result.modelType).toBe('moe' in GGUF_GOLDEN_MODELS[name] ? 'qwen3_moe' : 'qwen3');
    expect(result.ids).toEqual(golden.models[name].ids);
    expect((result.adapter as { shaderF16: boolean }).shaderF16).toBe(false);
    expect(String((result.stats as { kernels: string }).kernels)).toMatch(/ggml/);
    await page.context().close();
  }, 300_000);
});

describe('a GGUF with a small non-Qwen BPE vocabulary in headless Chromium', () => {
  it("the page's tokenizer, built from the metadata, encodes the prompt as Node's does; 32 greedy tokens equal the reference", async () => {
    const prompt = 'def add(a, b):\n    return a + b  # 加法 🙂';
    const source = await resolveModelSource(smallBpe.path);
    const tok = await Tokenizer.fromSource(source);
    expect(tok.vocabSize).toBeLessThan(1000);
    const ids = tok.encode(prompt);
    const weights = await loadWeights(source, { layers: [0, SMALL_BPE.layers], embedding: true, head: true });
    const reference = await new Generator(new ReferenceEngine(weights, { ctx: 256 }), { ctx: 256 }).generate(ids, { maxNewTokens: 32 });
    const { page, result } = await runHarness(`model=${encodeURIComponent(smallBpe.url)}&prompt=${encodeURIComponent(prompt)}&tokens=32&ctx=256`);
    expect(result.state, String(result.message)).toBe('done');
    expect(result.prompt).toEqual(ids);
    expect(result.ids).toEqual(reference.ids);
    expect(result.finish).toBe(reference.finish);
    expect(String((result.stats as { kernels: string }).kernels)).toMatch(/ggml/);
    await page.context().close();
  }, 300_000);
});

describe('the other tiny Qwen3.5 hybrid goldens on the WebGPU engine in headless Chromium', () => {
  const golden = JSON.parse(readFileSync(HYBRID_GOLDEN_FILE, 'utf8')) as HybridGoldenFile;
  it.each(MORE_HYBRIDS)('%s: 32 greedy tokens equal the reference golden', async (name) => {
    const { page, result } = await runHarness(`model=${encodeURIComponent(hybridUrls.get(name)!)}&ids=${golden.promptIds.join(',')}&tokens=${golden.maxNewTokens}&ctx=${CTX}`);
    expect(result.state, String(result.message)).toBe('done');
    expect(result.ids).toEqual(golden.models[name].ids);
    expect((result.adapter as { shaderF16: boolean }).shaderF16).toBe(false);
    await page.context().close();
  }, 300_000);
});
