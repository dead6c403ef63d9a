// `npm run bench -- --cpu`: the CPU (WASM SIMD128) engine on random weights of the Qwen3-0.6B shape (8
// layers, tied 151936-row head) in Q8_0, Q4_0 and Q4_K, prefill 64 and decode tok/s, beside the reference
// engine and the WebGPU engine on this machine's software adapter (Dawn on lavapipe in Node), all in one
// run; the machine's load is printed at the start and the end. Writes bench-results/cpu.json.
// `npm run bench -- --cpu --peers` also runs the peers on the same weights written as GGUF (./peer-gguf.ts),
// with the same thread count: native llama.cpp (node-llama-cpp, ./native-peer.mjs, its own process) and
// wllama in headless Chromium (./wllama.ts), both installed by the recipe in docs/peer-benchmarks.md into
// PEER_DIR (default /tmp/peer); a peer that is missing or fails is recorded as such, the rest still run.
// CPU_BENCH_TYPES=Q4_0 runs one type; CPU_BENCH_REF=0 skips the (slow) reference, CPU_BENCH_WEBGPU=0 the WebGPU engine, which runs on the first type only; CPU_BENCH_THREADS=N
// the pool size beside one thread (default min(2, cores)).
// Ours runs with the engine's default activations (DEFAULT_ACTIVATIONS, keys without a prefix) and, where
// that is not it, also with the fast path's ('q8': integer linears; keys `<type> q8 …`, ratios
// `<type> q8 wasmOverNative…`), each before and after the peers.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCpuEngine, DEFAULT_ACTIVATIONS } from '../../src/cpu/create-engine.ts';
import type { CpuActivations } from '../../src/cpu/wasm-kernels.ts';
import { decodeNext, sampleNext, type LayerEngine } from '../../src/model/engine-types.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import type { ModelWeights } from '../../src/model/types.ts';
import { randomCpuModel, type CpuBenchType } from './models.ts';
import { writeCpuPeerGguf } from './peer-gguf.ts';
import { wllamaSpeeds } from './wllama.ts';

export const title = 'CPU engine (WASM SIMD128, 1 and N threads): Qwen3-0.6B shape, 8 layers, random weights, prefill 64 / decode tok/s';

const PROMPT = 64;
const THREADS = Number(process.env.CPU_BENCH_THREADS ?? Math.min(2, cpus().length));
const TYPES = (process.env.CPU_BENCH_TYPES ?? 'Q8_0,Q4_0,Q4_K').split(',') as CpuBenchType[];
const GEN = 32;
const PEERS = process.argv.includes('--peers');
const PEER_DIR = process.env.PEER_DIR ?? '/tmp/peer';
const NATIVE_PEER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'native-peer.mjs');
/** The fast path, measured beside the default when it is not the default. */
const FAST: CpuActivations = 'q8';
const PROMPT_IDS = Array.from({ length: PROMPT }, (_, i) => (i * 7919 + 13) % 150000);

/** Native llama.cpp through node-llama-cpp, in its own process (bounded: 10 minutes). */
function nativeSpeeds(gguf: string, threads: number): { prefill: number; decode: number; decodeUnsampled: number } {
  const r = spawnSync(process.execPath, [NATIVE_PEER, PEER_DIR, gguf, String(threads), String(PROMPT), String(GEN)], { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) throw new Error(`native llama.cpp exited ${r.status ?? r.signal}: ${(r.stderr ?? '').slice(-600)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as { prefill: number; decode: number; decodeUnsampled: number };
}

/**
 * The peers on `weights` between two rounds of ours on THREADS threads (`again` runs it): a change of load
 * on the shared machine then falls on both sides. Ratios are ours ÷ peer, best round against best round.
 */
/** One activation path of ours: its key prefix ('' for the default), its first round, and how to run another. */
interface OursPath { prefix: string; before: { prefill: number; decode: number }; again: () => Promise<{ prefill: number; decode: number }> }

async function peers(type: CpuBenchType, weights: ModelWeights, paths: OursPath[], out: Record<string, number | string>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'pooled-cpu-peers-'));
  try {
    const gguf = path.join(dir, `${type}.gguf`);
    writeCpuPeerGguf(gguf, weights);
    out[`${type} load before peers`] = +loadavg()[0]!.toFixed(2);
    const ratios: [string, 'prefill' | 'decode', number][] = [];
    try {
      const n = nativeSpeeds(gguf, THREADS);
      out[`${type} native llama.cpp ${THREADS} threads prefill tok/s`] = n.prefill;
      out[`${type} native llama.cpp ${THREADS} threads decode tok/s`] = n.decode;
      out[`${type} native llama.cpp ${THREADS} threads decode tok/s (no sampler)`] = n.decodeUnsampled;
      ratios.push(['wasmOverNativePrefill', 'prefill', n.prefill], ['wasmOverNativeDecode', 'decode', Math.max(n.decode, n.decodeUnsampled)]);
    } catch (e) {
      out[`${type} native llama.cpp`] = `failed: ${(e as Error).message.slice(0, 400)}`;
    }
    try {
      const w = await wllamaSpeeds(PEER_DIR, gguf, THREADS, PROMPT_IDS, GEN);
      out[`${type} wllama ${THREADS} threads prefill tok/s`] = w.prefill;
      out[`${type} wllama ${THREADS} threads decode tok/s`] = w.decode;
      out[`${type} wllama page`] = `${w.isolated ? 'cross-origin isolated' : 'not isolated'}, ${w.note}`;
      ratios.push(['wasmOverWllamaPrefill', 'prefill', w.prefill], ['wasmOverWllamaDecode', 'decode', w.decode]);
    } catch (e) {
      out[`${type} wllama`] = `failed: ${(e as Error).message.split('\n')[0]!.slice(0, 400)}`;
    }
    out[`${type} load after peers`] = +loadavg()[0]!.toFixed(2);
    for (const { prefix, before, again } of paths) {
      const after = await again();
      // best against best: ours the better of its two rounds, the peer its best round (and, for native
      // decode, the faster of with and without its sampler), since load only ever slows a round down
      const ours = { prefill: Math.max(before.prefill, after.prefill), decode: Math.max(before.decode, after.decode) };
      out[`${type} ${prefix}wasm ${THREADS} threads prefill tok/s (before / after peers)`] = `${before.prefill.toPrecision(3)} / ${after.prefill.toPrecision(3)}`;
      out[`${type} ${prefix}wasm ${THREADS} threads decode tok/s (before / after peers)`] = `${before.decode.toPrecision(3)} / ${after.decode.toPrecision(3)}`;
      for (const [key, what, peer] of ratios) out[`${type} ${prefix}${key}`] = ours[what] / peer;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Prefill PROMPT tokens, then `gen` greedy decode tokens; tok/s of each. */
async function speeds(engine: LayerEngine, L: number, gen: number): Promise<{ prefill: number; decode: number }> {
  const ids = PROMPT_IDS;
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
  const out: Record<string, number | string> = {
    cores: cpus().length, loadAtStart: +loadavg()[0]!.toFixed(2), activationsDefault: DEFAULT_ACTIVATIONS,
    activationsFast: `${FAST} (activations quantized per 32 values; integer dot products for Q8_0/Q4_0/Q4_K/Q6_K weights)`,
  };
  for (const type of TYPES) {
    const weights = randomCpuModel(type, 8);
    const L = weights.config.numLayers;
    const wasm = async (threads: number, activations: CpuActivations = DEFAULT_ACTIVATIONS): Promise<{ prefill: number; decode: number }> => {
      const cpu = await createCpuEngine(weights, { ctx: PROMPT + 40, threads, activations });
      await speeds(cpu, L, 2);                                 // warm up (JIT, memory growth)
      await cpu.truncate(0);
      const s = await speeds(cpu, L, GEN);
      await cpu.dispose();
      return s;
    };
    const ours = await wasm(1);
    out[`${type} wasm prefill tok/s`] = ours.prefill;
    out[`${type} wasm decode tok/s`] = ours.decode;
    let oursT = ours;
    if (THREADS > 1) {
      const t = await wasm(THREADS);
      out[`${type} wasm ${THREADS} threads prefill tok/s`] = t.prefill;
      out[`${type} wasm ${THREADS} threads decode tok/s`] = t.decode;
      out[`${type} threadsOverOnePrefill`] = t.prefill / ours.prefill;
      out[`${type} threadsOverOneDecode`] = t.decode / ours.decode;
      oursT = t;
    }
    const paths: OursPath[] = [{ prefix: '', before: oursT, again: () => wasm(THREADS) }];
    if (FAST !== DEFAULT_ACTIVATIONS) {
      const f = await wasm(THREADS, FAST);
      out[`${type} ${FAST} wasm ${THREADS} threads prefill tok/s`] = f.prefill;
      out[`${type} ${FAST} wasm ${THREADS} threads decode tok/s`] = f.decode;
      out[`${type} ${FAST}OverDefaultPrefill`] = f.prefill / oursT.prefill;
      out[`${type} ${FAST}OverDefaultDecode`] = f.decode / oursT.decode;
      paths.push({ prefix: `${FAST} `, before: f, again: () => wasm(THREADS, FAST) });
    }
    if (PEERS) await peers(type, weights, paths, out);
    const gpu = process.env.CPU_BENCH_WEBGPU === '0' ? undefined : await webgpu(weights);
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
