// Acceptance 2 (browser half): the engine in headless Chromium (WebGPU on SwiftShader: no shader-f16,
// so the f32 path), running in its comlink worker, loads the tiny checkpoints over HTTP (ranged reads)
// and its 32 greedy tokens equal the reference's computed here in Node; the tiny Qwen3.5 hybrid (Gated
// DeltaNet + gated attention, n_k ≠ n_v) gives its golden ids (tiny-hybrid-greedy.json). Also: a named
// error crosses the worker with its name and code.
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
import { HYBRID_GOLDEN_FILE, hybridGoldenSource, type HybridGoldenFile } from '../test/goldens/hybrid-golden-setup.ts';
import { launchChromium, newDeviceContext } from './helpers/browser.ts';

const PROMPT = 'def fibonacci(n):';
const TOKENS = 32;
const CTX = 96;

let server: RunningServer;
let browser: Browser;
let dir: string;

beforeAll(async () => {
  dir = path.join(mkdtempSync(path.join(tmpdir(), 'pooled-e2e-engine-')), 'tiny');
  await writeTinyModel(dir, { layers: 4, seed: 11 }, 'both');
  server = await startServer({ port: 0, extraStatic: { '/models/tiny': dir, '/models/hybrid': await hybridGoldenSource('dense-safetensors') } });
  browser = await launchChromium();
});
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
