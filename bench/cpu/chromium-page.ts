// The CPU bench's headless Chromium (never in CI): the app built into a scratch folder (harness pages
// included), served by our own server (server/app.ts: COOP/COEP, so the page is cross-origin isolated
// and both WASM engines get their threads) with the peer folder's wllama at /wllama/ and the bench's GGUF
// files at /bench-models/, and ONE page (harness/cpu-bench.html) on which ours on WASM, wllama and ours
// on WebGPU run the same file in turn. WLLAMA_LOG=1 prints the page's console (wllama's native log
// included) and failed requests.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startServer, type RunningServer } from '../../server/app.ts';
import { CHROMIUM_FLAGS, CHROMIUM_PATH } from '../../src/preview/chromium.ts';
import type { Speeds } from './speeds.ts';

export interface PeerSpeeds { prefill: number; decode: number }

/** The longest one step may take: wllama's load + four runs, or WebGPU on a software adapter (~3 min each here). */
const STEP_LIMIT_MS = 600_000;

interface WllamaRun { runs: { prompt_per_second: number; predicted_per_second: number; prompt_n: number; predicted_n: number }[]; threadsUsed: number; multi?: boolean }

export class CpuBenchPage {
  private constructor(private readonly root: string, private readonly server: RunningServer, private readonly browser: Browser, private readonly page: Page, readonly isolated: boolean) {}

  /** Build, serve `modelDir` (and wllama from `peerDir` when it is installed), open the page. */
  static async open(modelDir: string, peerDir: string): Promise<CpuBenchPage> {
    const root = mkdtempSync(path.join(tmpdir(), 'pooled-cpu-bench-'));
    try {
      // NODE_ENV=production as e2e/global-setup.ts: the build `npm start` serves
      execFileSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn', '--emptyOutDir', '--outDir', path.join(root, 'dist')], {
        stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' },
      });
      const esm = path.join(peerDir, 'node_modules', '@wllama', 'wllama', 'esm');
      const server = await startServer({ port: 0, root, extraStatic: { '/bench-models': modelDir, ...(existsSync(path.join(esm, 'index.js')) ? { '/wllama': esm } : {}) } });
      const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_FLAGS, '--no-sandbox'], headless: true });
      const page = await browser.newPage();
      if (process.env.WLLAMA_LOG === '1') {
        page.on('response', (r) => { if (r.status() >= 400) console.log(`[${r.status()}]`, r.url()); });
        page.on('console', (m) => console.log('[page]', m.text().slice(0, 300)));
        page.on('worker', (w) => (w as unknown as { on(e: string, f: (m: { text(): string }) => void): void }).on('console', (m) => console.log('[worker]', m.text().slice(0, 300))));
      }
      await page.goto(`${server.url}/harness/cpu-bench.html`);
      await page.waitForFunction('window.__cpuBench && window.__cpuBench.ready', undefined, { timeout: 60_000 });
      const isolated = (await page.evaluate('window.__cpuBench.isolated')) as boolean;
      return new CpuBenchPage(root, server, browser, page, isolated);
    } catch (e) {
      rmSync(root, { recursive: true, force: true });
      throw e;
    }
  }

  modelUrl(file: string): string { return `${this.server.url}/bench-models/${encodeURIComponent(file)}`; }

  private async call<T>(what: string, fn: string, arg: unknown): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const limit = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} took over ${STEP_LIMIT_MS / 1000} s`)), STEP_LIMIT_MS); });
    const run = this.page.evaluate(async ([f, a]) => {
      const path = (f as string).split('.');
      let target: unknown = window, self: unknown = window;
      for (const p of path) { self = target; target = (target as Record<string, unknown>)[p]; }
      return (target as (a: unknown) => Promise<unknown>).call(self, a);
    }, [fn, arg] as const);
    return (await Promise.race([limit, run]).finally(() => clearTimeout(timer))) as T;
  }

  /** Ours on WASM in the page's worker, `threads` threads (activations: absent, the default), kept loaded for the rounds that follow. */
  loadWasm(file: string, ctx: number, threads: number, activations?: 'f32' | 'q8'): Promise<boolean> {
    return this.call('loading ours (WASM)', 'benchWasm.load', { model: this.modelUrl(file), ctx, threads, ...(activations ? { activations } : {}) });
  }

  wasmRound(promptIds: number[], gen: number): Promise<Speeds & { threads: number }> {
    return this.call('ours (WASM)', 'benchWasm.round', { promptIds, gen });
  }

  disposeWasm(): Promise<boolean> { return this.call('disposing ours (WASM)', 'benchWasm.dispose', undefined); }

  webgpu(file: string, ctx: number, numLayers: number, promptIds: number[], gen: number): Promise<Speeds & { adapter: string; shaderF16: boolean }> {
    return this.call('ours (WebGPU)', 'benchWebgpu', { model: this.modelUrl(file), ctx, numLayers, promptIds, gen });
  }

  /** wllama's best of three timed runs (llama.cpp's own timings), checked to be exactly the prompt and tokens asked. */
  async wllama(file: string, threads: number, promptTokens: number, gen: number): Promise<PeerSpeeds & { note: string }> {
    const r = await this.call<WllamaRun>('wllama', 'benchWllama', { model: this.modelUrl(file), threads, promptTokens, gen, rounds: 3, log: process.env.WLLAMA_LOG === '1' });
    if (process.env.WLLAMA_LOG === '1') console.log('[wllama timings]', JSON.stringify(r));
    for (const t of r.runs) if (t.prompt_n !== promptTokens || t.predicted_n !== gen) throw new Error(`wllama ran ${t.prompt_n} prompt / ${t.predicted_n} generated tokens, not ${promptTokens} / ${gen}`);
    // best round, as for the other peers: load on the shared machine only ever slows a round down
    return {
      prefill: Math.max(...r.runs.map((t) => t.prompt_per_second)), decode: Math.max(...r.runs.map((t) => t.predicted_per_second)),
      note: `threads ${r.threadsUsed}${r.multi === undefined ? '' : r.multi ? ' (multi-thread build)' : ' (single-thread)'}`,
    };
  }

  async close(): Promise<void> {
    await this.browser.close();
    await this.server.close();
    rmSync(this.root, { recursive: true, force: true });
  }
}
