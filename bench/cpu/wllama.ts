// wllama (npm @wllama/wllama: llama.cpp compiled to WebAssembly) in headless Debian Chromium on a GGUF
// file, for the CPU bench's peer figures (never in CI). A small server on 127.0.0.1 serves a blank page,
// wllama's ESM bundle and wasm from the recipe's folder (docs/peer-benchmarks.md) and the model, with
// COOP/COEP so the page is cross-origin isolated and wllama's threads (SharedArrayBuffer) are on.
// The figures are llama.cpp's own timings (its server's prompt and predicted tok/s), the best of three
// runs after an untimed one (which warms the wasm up and sizes the prompt), with WebGPU off
// (n_gpu_layers 0): the CPU path. wllama 3.13's completion action takes a text prompt only (an id array
// makes its C++ throw "type must be string, but is array" and the worker then misreads the missing reply
// as "Invalid typed array length"), so the prompt is text: with the file's placeholder vocabulary
// (./peer-gguf.ts) each character is one byte-fallback token, and the untimed run measures what the
// tokenizer adds (BOS, the leading "▁") so the timed runs prefill exactly `ids.length` tokens (checked
// against llama.cpp's prompt_n). The ids' values do not change the work, only their count.
// WLLAMA_LOG=1 prints the page's console (wllama's native log included), failed requests and the timings.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_FLAGS, CHROMIUM_PATH } from '../../src/preview/chromium.ts';

export interface PeerSpeeds { prefill: number; decode: number }

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.gguf': 'application/octet-stream' };

/** One model: load, an untimed run and three timed ones (about 1.5 minutes a type at 2 threads on this machine's 2 shared cores). */
const RUN_LIMIT_MS = 600_000;

const PAGE = `<!doctype html><meta charset="utf-8"><title>wllama bench</title><script type="module">
import { Wllama } from '/wllama/index.js';
window.runWllama = async ({ threads, promptTokens, gen, log }) => {
  const w = new Wllama({ default: '/wllama/wasm/wllama.wasm' }, { suppressNativeLog: !log });
  const blob = await (await fetch('/model.gguf')).blob();
  try {
    await w.loadModel([blob], { n_threads: threads, n_ctx: 256, n_batch: 64, n_ubatch: 64, n_gpu_layers: 0 });
  } catch (e) { throw new Error('wllama loadModel: ' + (e && e.message || e)); }
  const complete = async (chars) => {
    try {
      const res = await w.createCompletion({ prompt: 'a'.repeat(chars), max_tokens: gen, temperature: 0, ignore_eos: true, cache_prompt: false });
      return res.timings;
    } catch (e) { throw new Error('wllama createCompletion: ' + (e && e.message || e)); }
  };
  // the prompt must be text (the completion action takes no ids); with the file's placeholder vocabulary
  // every character falls back to a byte token, plus what the tokenizer adds (BOS, the leading "▁"): one
  // untimed run finds that overhead, so the timed runs have exactly promptTokens prompt tokens
  const probe = await complete(promptTokens);
  const chars = promptTokens - (probe.prompt_n - promptTokens);
  const runs = [];
  for (let r = 0; r < 3; r++) runs.push(await complete(chars));
  const threadsUsed = w.getNumThreads ? w.getNumThreads() : threads;
  const multi = w.isMultithread ? w.isMultithread() : undefined;   // before exit(): it needs the model
  await w.exit();
  return { runs, probe, isolated: crossOriginIsolated, threadsUsed, multi };
};
window.ready = true;
</script>`;

function serve(wllamaEsm: string, gguf: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    let file: string | undefined;
    if (url.pathname === '/') { res.setHeader('Content-Type', 'text/html'); res.end(PAGE); return; }
    if (url.pathname === '/favicon.ico') { res.statusCode = 204; res.end(); return; }
    if (url.pathname === '/model.gguf') file = gguf;
    else if (url.pathname.startsWith('/wllama/')) {
      const p = path.resolve(wllamaEsm, '.' + decodeURIComponent(url.pathname.slice('/wllama'.length)));
      if (p.startsWith(wllamaEsm + path.sep)) file = p;
    }
    if (!file || !existsSync(file) || !statSync(file).isFile()) { res.statusCode = 404; res.end('not found'); return; }
    res.setHeader('Content-Type', TYPES[path.extname(file)] ?? 'application/octet-stream');
    res.setHeader('Content-Length', statSync(file).size);
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      resolve({ server, url: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/` });
    });
  });
}

/** wllama's prefill and decode tok/s on `gguf` with `threads` threads; `peerDir` holds node_modules/@wllama/wllama. */
export async function wllamaSpeeds(peerDir: string, gguf: string, threads: number, ids: number[], gen: number): Promise<PeerSpeeds & { isolated: boolean; note: string }> {
  const esm = path.join(peerDir, 'node_modules', '@wllama', 'wllama', 'esm');
  if (!existsSync(path.join(esm, 'index.js'))) throw new Error(`no wllama under ${peerDir} (docs/peer-benchmarks.md has the recipe)`);
  const { server, url } = await serve(esm, gguf);
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_FLAGS, '--no-sandbox'], headless: true });
  try {
    const page = await browser.newPage();
    if (process.env.WLLAMA_LOG === '1') page.on('response', (r) => { if (r.status() >= 400) console.log('[404]', r.url()); });
    if (process.env.WLLAMA_LOG === '1') page.on('worker', (w) => (w as unknown as { on(e: string, f: (m: { text(): string }) => void): void }).on('console', (m) => console.log('[worker]', m.text().slice(0, 300))));
    if (process.env.WLLAMA_LOG === '1') page.on('console', (m) => console.log('[page]', m.text().slice(0, 300)));
    await page.goto(url);
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true, undefined, { timeout: 60_000 });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const limit = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`wllama took over ${RUN_LIMIT_MS / 1000} s`)), RUN_LIMIT_MS); });
    const r = await Promise.race([limit, page.evaluate(async (a) => (window as unknown as { runWllama(a: unknown): Promise<unknown> }).runWllama(a), { threads, promptTokens: ids.length, gen, log: process.env.WLLAMA_LOG === '1' })]).finally(() => clearTimeout(timer)) as
      { runs: { prompt_per_second: number; predicted_per_second: number; prompt_n: number; predicted_n: number }[]; isolated: boolean; threadsUsed: number; multi?: boolean };
    if (process.env.WLLAMA_LOG === '1') console.log('[wllama timings]', JSON.stringify(r));
    for (const t of r.runs) if (t.prompt_n !== ids.length || t.predicted_n !== gen) throw new Error(`wllama ran ${t.prompt_n} prompt / ${t.predicted_n} generated tokens, not ${ids.length} / ${gen}`);
    // best round, as for the other peers: load on the shared machine only ever slows a round down
    const prefill = Math.max(...r.runs.map((t) => t.prompt_per_second)), decode = Math.max(...r.runs.map((t) => t.predicted_per_second));
    return { prefill, decode, isolated: r.isolated, note: `threads ${r.threadsUsed}${r.multi === undefined ? '' : r.multi ? ' (multi-thread build)' : ' (single-thread)'}` };
  } finally {
    await browser.close();
    server.close();
  }
}
