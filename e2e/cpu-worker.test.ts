// The WASM engine in the one engine worker (src/model/worker-engine-proxy.ts + workers/engine.worker.ts), in headless
// Chromium from the production build, on the tiny dense-Q8_0 GGUF golden (harness/gguf.html?engine=wasm):
//  - on a cross-origin isolated page the worker runs the thread pool: min(cores, 8) threads (> 1 on a
//    machine with 2 cores or more), and the pool really ran the linears (its job count);
//  - the 32 golden greedy tokens are unchanged;
//  - the page stays responsive while they are generated: a 10 ms setInterval on the page ran while engine
//    calls were pending (counted, not timed: an engine on the page's thread computes inside the call
//    before its promise returns, so no timer runs then: 0, checked by hand with the old in-page engine);
//  - an error the engine throws in the worker arrives as its class (PositionError), and disposing the
//    engine ends the pool's workers;
//  - served without COOP/COEP, the page is not isolated: one thread, and the label says why;
//  - ?cpu-activations=q8 reaches the worker's engine: its stats and label say so, and its tokens are
//    the ones the same kernels give in Node with q8 (which leave the f32 golden on this model).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startServer } from '../server/app.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile } from '../test/goldens/gguf-golden-setup.ts';
import { tinyGgufModel } from '../test/helpers/tiny-model.ts';
import { newDeviceContext, useServerAndBrowser } from './helpers/browser.ts';
import { createCpuEngine } from '../src/cpu/create-engine.ts';
import { Generator } from '../src/model/generator.ts';
import { loadWeights } from '../src/model/load-weights.ts';
import { resolveModelSource } from '../src/model/sources/resolve.ts';

const golden = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
const models = path.resolve(import.meta.dirname, '../.cache/test-models');
const env = useServerAndBrowser({ port: 0, extraStatic: { '/test-models': models } });

interface Run {
  state: string; message?: string; ids: number[]; prompt: number[]; ticks: number; ticksInCalls: number; pageIsolated: boolean;
  threads: number; isolated: boolean; label: string; simd: 'relaxed' | 'plain'; typedError: { name: string; code: string; isPositionError: boolean } | null;
  stats: { threads: number; poolJobs: number; layerTokens: number; activations: 'f32' | 'q8' };
}

async function runHarness(page: Page, base: string, extra = ''): Promise<Run> {
  const m = await tinyGgufModel(GGUF_GOLDEN_MODELS['dense-Q8_0']);
  const url = `/test-models/${path.relative(models, m.path)}`;
  await page.goto(`${base}/harness/gguf.html?engine=wasm&model=${encodeURIComponent(url)}&tokens=${golden.maxNewTokens}&prompt=${encodeURIComponent(golden.prompt)}${extra}`);
  await page.waitForFunction('window.__gguf && window.__gguf.state !== "loading"', undefined, { timeout: 240_000, polling: 250 });
  return (await page.evaluate('window.__gguf')) as Run;
}

describe('the WASM engine in its worker (Chromium)', () => {
  it('on an isolated page: the pool\'s threads, the golden tokens, a responsive page, typed errors, and disposal ends the workers', async () => {
    const context = await newDeviceContext(env.browser);
    try {
      const page = await context.newPage();
      const r = await runHarness(page, env.server.url);
      expect(r.state, r.message).toBe('done');
      expect(r.ids).toEqual(golden.models['dense-Q8_0'].ids);
      expect(r.prompt).toEqual(golden.promptIds);
      const cores = await page.evaluate('navigator.hardwareConcurrency') as number;
      const threads = Math.min(cores, 8);
      console.log(`[cpu-worker] isolated: ${r.threads} threads (cores ${cores}), pool jobs ${r.stats.poolJobs}, ${r.ticks} page ticks while generating (${r.ticksInCalls} during engine calls), label "${r.label}"`);
      expect(r.pageIsolated).toBe(true);
      expect(r.isolated).toBe(true);
      expect(threads).toBeGreaterThan(1);                 // this test needs a machine with 2 cores or more
      expect(r.threads).toBe(threads);
      expect(r.stats.threads).toBe(threads);
      expect(r.stats.poolJobs).toBeGreaterThan(0);        // the linears were split across the pool's workers
      expect(r.stats.activations).toBe('f32');           // the default: the tokens every engine of a room agrees on
      // this Chromium validates relaxed SIMD: the worker's pool runs the threaded relaxed build
      expect(r.simd).toBe('relaxed');
      expect(r.label).toBe(`CPU · ${threads} threads · relaxed SIMD`);
      expect(r.ticksInCalls).toBeGreaterThan(0);          // the page's timer ran while the engine computed
      expect(r.typedError).toEqual({ name: 'PositionError', code: 'bad-position', isPositionError: true });
      // The engine's worker and its pool's threads - 1 workers (nested, from blob: URLs) are alive; disposal
      // closes the pool's workers. (The engine's worker is terminated too, but Chromium's worker list kept
      // it in 1 of 4 runs after terminate() had returned, so only the pool's workers are asserted gone.)
      const pool = () => page.workers().map((w) => w.url()).filter((u) => u.startsWith('blob:'));
      expect(pool()).toHaveLength(threads - 1);
      const engineWorker = page.workers().find((w) => w.url().includes('engine.worker'));
      expect(engineWorker).toBeDefined();
      expect(await engineWorker!.evaluate('typeof self.postMessage')).toBe('function');   // alive before
      await page.evaluate('window.__ggufDispose()');
      await expect.poll(pool, { timeout: 10_000 }).toEqual([]);
      const late = await Promise.race([engineWorker!.evaluate('1').then(() => 'answered', () => 'gone'), new Promise((r) => setTimeout(() => r('no answer in 5 s'), 5000))]);
      console.log(`[cpu-worker] after dispose: listed ${JSON.stringify(page.workers().map((w) => w.url()))}; the engine worker: ${late}`);
      expect(late).not.toBe('answered');                  // a worker that still runs code was not terminated
    } finally {
      await context.close();
    }
  }, 300_000);

  it('on a page served without COOP/COEP: one thread, said on the label, the same golden tokens', async () => {
    const plain = await startServer({ port: 0, isolated: false, extraStatic: { '/test-models': models } });
    const context = await newDeviceContext(env.browser);
    try {
      const page = await context.newPage();
      const r = await runHarness(page, plain.url);
      expect(r.state, r.message).toBe('done');
      expect(r.pageIsolated).toBe(false);
      expect(r).toMatchObject({ threads: 1, isolated: false, label: 'CPU · 1 thread (page not cross-origin isolated) · relaxed SIMD' });
      expect(r.stats).toMatchObject({ threads: 1, poolJobs: 0 });
      expect(r.ids).toEqual(golden.models['dense-Q8_0'].ids);
      expect(r.ticksInCalls).toBeGreaterThan(0);
    } finally {
      await context.close();
      await plain.close();
    }
  }, 300_000);

  it('?cpu-activations=q8: the worker\'s engine quantizes its activations, says so, and gives the kernels\' q8 tokens', async () => {
    // the same kernels in Node, q8 on one thread (the integer sums, hence the tokens, do not depend on threads)
    const m = await tinyGgufModel(GGUF_GOLDEN_MODELS['dense-Q8_0']);
    const weights = await loadWeights(await resolveModelSource(m.path), { layers: [0, GGUF_GOLDEN_MODELS['dense-Q8_0'].layers], embedding: true, head: true });
    const ctx = golden.promptIds.length + golden.maxNewTokens;
    const node = await createCpuEngine(weights, { ctx, activations: 'q8', threads: 1 });
    const want = await new Generator(node, { ctx }).generate(golden.promptIds, { maxNewTokens: golden.maxNewTokens });
    await node.dispose();
    expect(want.ids).not.toEqual(golden.models['dense-Q8_0'].ids);   // q8 leaves the f32 golden on this model (README)
    const context = await newDeviceContext(env.browser);
    try {
      const page = await context.newPage();
      const r = await runHarness(page, env.server.url, '&cpu-activations=q8');
      expect(r.state, r.message).toBe('done');
      expect(r.stats.activations).toBe('q8');
      expect(r.label).toMatch(/ · 8-bit activations$/);
      expect(r.ids).toEqual(want.ids);
    } finally {
      await context.close();
    }
  }, 300_000);
});
