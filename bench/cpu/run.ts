// `npm run bench -- --cpu`: the CPU (WASM SIMD128) engine on random weights of the Qwen3-0.6B shape (8
// layers, tied 151936-row head) in Q8_0, Q4_0 and Q4_K, prefill 64 and decode tok/s, beside the reference
// engine and the WebGPU engine on this machine's software adapter (Dawn on lavapipe in Node), all in one
// run; the machine's load is printed at the start and the end. Writes bench-results/cpu.json.
// Not yet here: wllama in Chromium and native llama.cpp (the two other peers).
// CPU_BENCH_TYPES=Q4_0 runs one type; CPU_BENCH_REF=0 skips the (slow) reference, which runs on the first type only; CPU_BENCH_THREADS=N
// the pool size beside one thread (default min(2, cores)).
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { createCpuEngine } from '../../src/cpu/create-engine.ts';
import { decodeNext, sampleNext, type LayerEngine } from '../../src/model/engine-types.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import type { ModelWeights } from '../../src/model/types.ts';
import { randomCpuModel, type CpuBenchType } from './models.ts';

export const title = 'CPU engine (WASM SIMD128, 1 and N threads): Qwen3-0.6B shape, 8 layers, random weights, prefill 64 / decode tok/s';

const PROMPT = 64;
const THREADS = Number(process.env.CPU_BENCH_THREADS ?? Math.min(2, cpus().length));
const TYPES = (process.env.CPU_BENCH_TYPES ?? 'Q8_0,Q4_0,Q4_K').split(',') as CpuBenchType[];

/** Prefill PROMPT tokens, then `gen` greedy decode tokens; tok/s of each. */
async function speeds(engine: LayerEngine, L: number, gen: number): Promise<{ prefill: number; decode: number }> {
  const ids = Array.from({ length: PROMPT }, (_, i) => (i * 7919 + 13) % 150000);
  const t0 = performance.now();
  let next = await sampleNext(engine, await engine.runLayers([0, L], 0, await engine.embed(ids)), { temperature: 0 });
  const t1 = performance.now();
  for (let i = 0; i < gen; i++) next = await decodeNext(engine, next, { temperature: 0 });
  const t2 = performance.now();
  return { prefill: PROMPT / ((t1 - t0) / 1000), decode: gen / ((t2 - t1) / 1000) };
}

async function webgpu(weights: ModelWeights): Promise<LayerEngine | undefined> {
  try {
    const { createWebGPUEngine } = await import('../../src/gpu/create-engine.ts');
    return await createWebGPUEngine(weights, { ctx: PROMPT + 40, maxBatch: PROMPT, tuning: 'default' });
  } catch (e) {
    console.log(`  (no WebGPU engine: ${(e as Error).message})`);
    return undefined;
  }
}

export async function run(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = { cores: cpus().length, loadAtStart: +loadavg()[0]!.toFixed(2) };
  for (const type of TYPES) {
    const weights = randomCpuModel(type, 8);
    const L = weights.config.numLayers;
    const wasm = async (threads: number): Promise<{ prefill: number; decode: number }> => {
      const cpu = await createCpuEngine(weights, { ctx: PROMPT + 40, threads });
      await speeds(cpu, L, 2);                                 // warm up (JIT, memory growth)
      await cpu.truncate(0);
      const s = await speeds(cpu, L, 32);
      await cpu.dispose();
      return s;
    };
    const ours = await wasm(1);
    out[`${type} wasm prefill tok/s`] = ours.prefill;
    out[`${type} wasm decode tok/s`] = ours.decode;
    if (THREADS > 1) {
      const t = await wasm(THREADS);
      out[`${type} wasm ${THREADS} threads prefill tok/s`] = t.prefill;
      out[`${type} wasm ${THREADS} threads decode tok/s`] = t.decode;
      out[`${type} threadsOverOnePrefill`] = t.prefill / ours.prefill;
      out[`${type} threadsOverOneDecode`] = t.decode / ours.decode;
    }
    const gpu = await webgpu(weights);
    if (gpu) {
      await speeds(gpu, L, 1);
      await gpu.truncate(0);
      const g = await speeds(gpu, L, 8);
      await gpu.dispose();
      out[`${type} webgpu (software adapter) prefill tok/s`] = g.prefill;
      out[`${type} webgpu (software adapter) decode tok/s`] = g.decode;
      out[`${type} wasmOverWebgpuPrefill`] = ours.prefill / g.prefill;
      out[`${type} wasmOverWebgpuDecode`] = ours.decode / g.decode;
    }
    if (process.env.CPU_BENCH_REF !== '0' && type === TYPES[0]) {   // the reference is slow: one type
      const r = await speeds(new ReferenceEngine(weights, { ctx: PROMPT + 40 }), L, 4);
      out[`${type} reference prefill tok/s`] = r.prefill;
      out[`${type} reference decode tok/s`] = r.decode;
      out[`${type} wasmOverReferencePrefill`] = ours.prefill / r.prefill;
      out[`${type} wasmOverReferenceDecode`] = ours.decode / r.decode;
    }
  }
  out.loadAtEnd = +loadavg()[0]!.toFixed(2);
  const file = path.resolve('bench-results', 'cpu.json');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), ...out }, null, 2));
  return out;
}
