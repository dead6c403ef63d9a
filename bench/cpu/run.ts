// `npm run bench -- --cpu`: the CPU (WASM SIMD128) engine on random weights of the Qwen3-0.6B shape (8
// layers, tied 151936-row head) in Q8_0, Q4_0 and Q4_K, prefill 64 and decode tok/s, beside the reference
// engine and the WebGPU engine on this machine's software adapter (Dawn on lavapipe in Node), all in one
// run; the machine's load is printed at the start and the end. Writes bench-results/cpu.json.
// `npm run bench -- --cpu --peers` also runs the peers on the same weights written as GGUF (./peer-gguf.ts),
// with the same thread count: native llama.cpp (node-llama-cpp, ./native-peer.mjs, its own process) and
// wllama in headless Chromium (./wllama.ts), both installed by the recipe in docs/peer-benchmarks.md into
// PEER_DIR (default /tmp/peer); a peer that is missing or fails is recorded as such, the rest still run.
// The wasm figures run the relaxed-SIMD build where Node has it (cpu.json's wasmSimd says which;
// CPU_BENCH_SIMD=plain forces the SIMD128 one) and then, on the relaxed path, the plain build too, for
// relaxedOverPlain* (CPU_BENCH_PLAIN=0 skips that), and one linear of each build in CPU time
// (./simd-linear.ts: relaxedOverPlainCpuTime, what load on a shared machine does not skew).
// CPU_BENCH_TYPES=Q4_0 runs one type; CPU_BENCH_REF=0 skips the (slow) reference, CPU_BENCH_WEBGPU=0 the WebGPU engine, which runs on the first type only; CPU_BENCH_THREADS=N
// the pool size beside one thread (default min(2, cores)).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCpuEngine } from '../../src/cpu/create-engine.ts';
import { resolveSimdPath } from '../../src/cpu/kernel-binary.ts';
import type { SimdChoice, SimdPath } from '../../src/cpu/simd-path.ts';
import { decodeNext, sampleNext, type LayerEngine } from '../../src/model/engine-types.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import type { ModelWeights } from '../../src/model/types.ts';
import { randomCpuModel, type CpuBenchType } from './models.ts';
import { relaxedOverPlainCpuTime } from './simd-linear.ts';
import { writeCpuPeerGguf } from './peer-gguf.ts';
import { wllamaSpeeds } from './wllama.ts';

export const title = 'CPU engine (WASM SIMD128 / relaxed SIMD, 1 and N threads): Qwen3-0.6B shape, 8 layers, random weights, prefill 64 / decode tok/s';

const PROMPT = 64;
const THREADS = Number(process.env.CPU_BENCH_THREADS ?? Math.min(2, cpus().length));
const TYPES = (process.env.CPU_BENCH_TYPES ?? 'Q8_0,Q4_0,Q4_K').split(',') as CpuBenchType[];
const GEN = 32;
const PEERS = process.argv.includes('--peers');
const SIMD = (process.env.CPU_BENCH_SIMD ?? 'auto') as SimdChoice;
const PEER_DIR = process.env.PEER_DIR ?? '/tmp/peer';
const NATIVE_PEER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'native-peer.mjs');
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
async function peers(type: CpuBenchType, weights: ModelWeights, before: { prefill: number; decode: number }, again: () => Promise<{ prefill: number; decode: number }>, out: Record<string, number | string>): Promise<void> {
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
      ratios.push([`${type} wasmOverNativePrefill`, 'prefill', n.prefill], [`${type} wasmOverNativeDecode`, 'decode', Math.max(n.decode, n.decodeUnsampled)]);
    } catch (e) {
      out[`${type} native llama.cpp`] = `failed: ${(e as Error).message.slice(0, 400)}`;
    }
    try {
      const w = await wllamaSpeeds(PEER_DIR, gguf, THREADS, PROMPT_IDS, GEN);
      out[`${type} wllama ${THREADS} threads prefill tok/s`] = w.prefill;
      out[`${type} wllama ${THREADS} threads decode tok/s`] = w.decode;
      out[`${type} wllama page`] = `${w.isolated ? 'cross-origin isolated' : 'not isolated'}, ${w.note}`;
      ratios.push([`${type} wasmOverWllamaPrefill`, 'prefill', w.prefill], [`${type} wasmOverWllamaDecode`, 'decode', w.decode]);
    } catch (e) {
      out[`${type} wllama`] = `failed: ${(e as Error).message.split('\n')[0]!.slice(0, 400)}`;
    }
    out[`${type} load after peers`] = +loadavg()[0]!.toFixed(2);
    const after = await again();
    // best against best: ours the better of its two rounds, the peer its best round (and, for native
    // decode, the faster of with and without its sampler), since load only ever slows a round down
    const ours = { prefill: Math.max(before.prefill, after.prefill), decode: Math.max(before.decode, after.decode) };
    out[`${type} wasm ${THREADS} threads prefill tok/s (before / after peers)`] = `${before.prefill.toPrecision(3)} / ${after.prefill.toPrecision(3)}`;
    out[`${type} wasm ${THREADS} threads decode tok/s (before / after peers)`] = `${before.decode.toPrecision(3)} / ${after.decode.toPrecision(3)}`;
    for (const [key, what, peer] of ratios) out[key] = ours[what] / peer;
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
  // the SIMD path every "wasm" figure below ran: relaxed where this Node validates it, unless forced
  const simdPath = await resolveSimdPath(SIMD);
  const out: Record<string, number | string> = { cores: cpus().length, loadAtStart: +loadavg()[0]!.toFixed(2), wasmSimd: simdPath };
  for (const type of TYPES) {
    const weights = randomCpuModel(type, 8);
    const L = weights.config.numLayers;
    const wasm = async (threads: number, simd: SimdPath = simdPath): Promise<{ prefill: number; decode: number }> => {
      const cpu = await createCpuEngine(weights, { ctx: PROMPT + 40, threads, simd });
      if (cpu.stats().simd !== simd) throw new Error(`asked for the ${simd} SIMD build, the engine runs ${cpu.stats().simd}`);
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
    if (simdPath === 'relaxed' && process.env.CPU_BENCH_PLAIN !== '0') {
      // the same engine on the plain SIMD128 build, right after: what relaxed SIMD (fused f32 dots) buys
      const p1 = await wasm(1, 'plain');
      out[`${type} wasm plain SIMD prefill tok/s`] = p1.prefill;
      out[`${type} wasm plain SIMD decode tok/s`] = p1.decode;
      out[`${type} relaxedOverPlainPrefill`] = ours.prefill / p1.prefill;
      out[`${type} relaxedOverPlainDecode`] = ours.decode / p1.decode;
      if (THREADS > 1) {
        const pT = await wasm(THREADS, 'plain');
        out[`${type} wasm plain SIMD ${THREADS} threads prefill tok/s`] = pT.prefill;
        out[`${type} wasm plain SIMD ${THREADS} threads decode tok/s`] = pT.decode;
        out[`${type} relaxedOverPlain${THREADS}ThreadsPrefill`] = oursT.prefill / pT.prefill;
        out[`${type} relaxedOverPlain${THREADS}ThreadsDecode`] = oursT.decode / pT.decode;
      }
    }
    if (PEERS) await peers(type, weights, oursT, () => wasm(THREADS), out);
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
  if (simdPath === 'relaxed' && process.env.CPU_BENCH_PLAIN !== '0') {
    for (const [type, n] of [['Q4_K', 64], ['Q8_0', 64], ['F32', 64], ['Q4_K', 1]] as const) {
      out[`${type} n=${n} linear relaxedOverPlainCpuTime`] = await relaxedOverPlainCpuTime(type, n);
    }
  }
  out.loadAtEnd = +loadavg()[0]!.toFixed(2);
  const file = path.resolve('bench-results', 'cpu.json');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), ...out }, null, 2));
  return out;
}
