// Issue 29 acceptance 2 (Chromium half): the WebAssembly engine in headless Chromium, from the production
// build (the kernels compiled by the Vite plugin and fetched as cpu-kernels.wasm): the tiny GGUF goldens
// dense-Q8_0 and moe-Q4_K_M (full Qwen3 vocabulary) give their 32 golden greedy tokens, as in Node, on the
// relaxed-SIMD build (what this Chromium picks) and on the plain one (?simd=plain).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile } from '../test/goldens/gguf-golden-setup.ts';
import { tinyGgufModel } from '../test/helpers/tiny-model.ts';
import { newDeviceContext, useServerAndBrowser } from './helpers/browser.ts';

const golden = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
const models = path.resolve(import.meta.dirname, '../.cache/test-models');
const env = useServerAndBrowser({ port: 0, extraStatic: { '/test-models': models } });

describe.each(['dense-Q8_0', 'moe-Q4_K_M'] as const)('tiny GGUF %s on the WASM engine in Chromium', (name) => {
  // auto: this Chromium validates relaxed SIMD, so the relaxed build loads; ?simd=plain forces SIMD128
  it.each([['auto', 'relaxed'], ['plain', 'plain']] as const)('?simd=%s (the %s build): 32 greedy tokens equal the golden', async (simd, build) => {
    const m = await tinyGgufModel(GGUF_GOLDEN_MODELS[name]);
    const url = `/test-models/${path.relative(models, m.path)}`;
    const context = await newDeviceContext(env.browser);
    const page = await context.newPage();
    await page.goto(`${env.server.url}/harness/gguf.html?engine=wasm&simd=${simd}&model=${encodeURIComponent(url)}&tokens=${golden.maxNewTokens}&prompt=${encodeURIComponent(golden.prompt)}`);
    await page.waitForFunction('window.__gguf && window.__gguf.state !== "loading"', undefined, { timeout: 240_000, polling: 250 });
    const r = (await page.evaluate('window.__gguf')) as Record<string, unknown>;
    await context.close();
    expect(r.state, String(r.message)).toBe('done');
    expect(r).toMatchObject({ engine: 'wasm', simd: build, prompt: golden.promptIds, ids: golden.models[name].ids });
  }, 300_000);
});
