// The CPU bench's page (bench/cpu/chromium-page.ts drives it; never in CI): three engines on one GGUF
// file in one cross-origin isolated page, so the comparison is the same browser, file and threads.
// - window.benchWasm: ours on WebAssembly in ./cpu-worker.ts with the thread pool (a page's main thread
//   may not Atomics.wait), loaded once, then timed rounds (prefill the prompt, `gen` greedy tokens);
// - window.benchWebgpu: ours on WebGPU (the app's engine worker; here the software adapter);
// - window.benchWllama: wllama (npm @wllama/wllama, llama.cpp in WebAssembly), served by the bench at
//   /wllama/ from the peer folder. wllama 3.13's completion takes a text prompt only, so the prompt is a
//   run of "a"s: with the bench GGUF's placeholder vocabulary (bench/cpu/peer-gguf.ts) each character is
//   one byte-fallback token, and one untimed run measures what its tokenizer adds (BOS, the leading "▁")
//   so the timed runs prefill exactly promptTokens tokens (the caller checks llama.cpp's prompt_n).
import { speeds, type Speeds } from '../bench/cpu/speeds.ts';
import { requestAdapter, summarizeAdapter } from '../src/gpu/adapter.ts';
import { WorkerEngine } from '../src/model/worker-engine-proxy.ts';
import { CpuWorkerClient } from './cpu-worker-client.ts';

const logEl = document.getElementById('log')!;
const log = (line: string): void => { logEl.textContent += `${line}\n`; };
const cpu = new CpuWorkerClient();

const benchWasm = {
  load: (a: { model: string; ctx: number; threads: number; activations?: 'f32' | 'q8' }) => cpu.call<boolean>('load', a),
  round: async (a: { promptIds: number[]; gen: number }) => {
    const r = await cpu.call<Speeds & { threads: number }>('round', a);
    log(`ours wasm (${r.threads} threads): prefill ${r.prefill.toFixed(2)}, decode ${r.decode.toFixed(2)} tok/s`);
    return r;
  },
  dispose: () => cpu.call<boolean>('dispose'),
};

/** Ours on WebGPU: a short warm-up (8 prompt tokens, 1 decode: the pipelines compile on first use), then the timed round. */
async function benchWebgpu(a: { model: string; ctx: number; numLayers: number; promptIds: number[]; gen: number }): Promise<Speeds & { adapter: string; shaderF16: boolean }> {
  const engine = await WorkerEngine.start({ engine: 'webgpu', options: {}, model: a.model, layers: [0, a.numLayers], embedding: true, head: true, ctx: a.ctx });
  try {
    await speeds(engine, a.numLayers, a.promptIds.slice(0, 8), 1);
    await engine.truncate(0);
    const s = await speeds(engine, a.numLayers, a.promptIds, a.gen);
    const info = summarizeAdapter(await requestAdapter());   // the page's: the worker's engine asks the same browser
    const adapter = info.description || info.vendor || 'unknown adapter';
    log(`ours webgpu (${adapter}): prefill ${s.prefill.toFixed(2)}, decode ${s.decode.toFixed(2)} tok/s`);
    return { ...s, adapter, shaderF16: info.shaderF16 };
  } finally {
    await engine.dispose();
  }
}

interface WllamaTimings { prompt_n: number; predicted_n: number; prompt_per_second: number; predicted_per_second: number }
interface WllamaLike {
  loadModel(blobs: Blob[], opts: Record<string, unknown>): Promise<void>;
  createCompletion(opts: Record<string, unknown>): Promise<{ timings: WllamaTimings }>;
  getNumThreads?(): number;
  isMultithread?(): boolean;
  exit(): Promise<void>;
}

/** wllama on the same file: load, one untimed run that sizes the prompt, then `rounds` timed runs. */
async function benchWllama(a: { model: string; threads: number; promptTokens: number; gen: number; rounds: number; log: boolean }) {
  const wllamaUrl = '/wllama/index.js';
  const { Wllama } = (await import(/* @vite-ignore */ wllamaUrl)) as { Wllama: new (paths: Record<string, string>, opts: Record<string, unknown>) => WllamaLike };
  const w = new Wllama({ default: '/wllama/wasm/wllama.wasm' }, { suppressNativeLog: !a.log });
  const blob = await (await fetch(a.model)).blob();
  try {
    await w.loadModel([blob], { n_threads: a.threads, n_ctx: 256, n_batch: 64, n_ubatch: 64, n_gpu_layers: 0 });
  } catch (e) { throw new Error(`wllama loadModel: ${(e as Error)?.message ?? e}`); }
  const complete = async (chars: number, gen: number): Promise<WllamaTimings> => {
    try {
      return (await w.createCompletion({ prompt: 'a'.repeat(chars), max_tokens: gen, temperature: 0, ignore_eos: true, cache_prompt: false })).timings;
    } catch (e) { throw new Error(`wllama createCompletion: ${(e as Error)?.message ?? e}`); }
  };
  const probe = await complete(a.promptTokens, 1);   // only its prompt_n counts (and it warms the wasm up)
  const chars = a.promptTokens - (probe.prompt_n - a.promptTokens);
  const runs: WllamaTimings[] = [];
  for (let r = 0; r < a.rounds; r++) runs.push(await complete(chars, a.gen));
  const threadsUsed = w.getNumThreads ? w.getNumThreads() : a.threads;
  const multi = w.isMultithread ? w.isMultithread() : undefined;   // before exit(): it needs the model
  await w.exit();
  log(`wllama (${threadsUsed} threads): ${runs.map((t) => `${t.prompt_per_second.toFixed(2)} / ${t.predicted_per_second.toFixed(2)}`).join(', ')} tok/s`);
  return { runs, probe, threadsUsed, multi };
}

const w = window as unknown as Record<string, unknown>;
Object.assign(w, { benchWasm, benchWebgpu, benchWllama, __cpuBench: { ready: true, isolated: crossOriginIsolated } });
