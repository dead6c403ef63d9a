// `npm run bench -- --cpu`: the CPU (WASM SIMD128) engine on random weights of the Qwen3-0.6B shape (8
// layers, tied 151936-row head) in Q8_0, Q4_0 and Q4_K, prefill 64 and decode tok/s, beside the reference
// engine and the WebGPU engine on this machine's software adapter (Dawn on lavapipe in Node), all in one
// run; the machine's load is printed at the start and the end. Writes bench-results/cpu.json.
// `npm run bench -- --cpu --peers` also runs the peers on the same weights written as GGUF (./peer-gguf.ts),
// with the same thread count: native llama.cpp (node-llama-cpp, ./native-peer.mjs, its own process),
// between two rounds of ours in Node; then ONE headless Chromium page (./chromium-page.ts,
// harness/cpu-bench.html) runs, on the same GGUF file, ours on WASM (in a worker with the thread pool),
// wllama, ours again, and on the first type ours on WebGPU (the software adapter) and ours again, so
// wasmOverWllama* and wasmOverWebgpu* compare engines in the same page (nodeWasmOverWllama* keeps ours in
// Node against wllama). The peers install by the recipe in docs/peer-benchmarks.md into PEER_DIR (default
// /tmp/peer); a peer that is missing or fails is recorded as such, the rest still run.
// The wasm figures run the relaxed-SIMD build where Node has it (cpu.json's wasmSimd says which;
// CPU_BENCH_SIMD=plain forces the SIMD128 one) and then, on the relaxed path, the plain build too, for
// relaxedOverPlain* (CPU_BENCH_PLAIN=0 skips that), and one linear of each build in CPU time
// (./simd-linear.ts: relaxedOverPlainCpuTime, what load on a shared machine does not skew).
// CPU_BENCH_TYPES=Q4_0 runs one type; CPU_BENCH_REF=0 skips the (slow) reference, CPU_BENCH_WEBGPU=0 the
// WebGPU engine (in Node without --peers, every type; in the page, the first type); CPU_BENCH_THREADS=N
// the pool size beside one thread (default min(2, cores)).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCpuEngine, DEFAULT_ACTIVATIONS } from '../../src/cpu/create-engine.ts';
import type { CpuActivations } from '../../src/cpu/wasm-kernels.ts';
import { resolveSimdPath } from '../../src/cpu/kernel-binary.ts';
import type { SimdChoice, SimdPath } from '../../src/cpu/simd-path.ts';
import type { LayerEngine } from '../../src/model/engine-types.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import type { ModelWeights } from '../../src/model/types.ts';
import { randomCpuModel, type CpuBenchType } from './models.ts';
import { writeCpuPeerGguf } from './peer-gguf.ts';
import { relaxedOverPlainCpuTime } from './simd-linear.ts';
import { CpuBenchPage } from './chromium-page.ts';
import { speeds as timeSpeeds, type Speeds } from './speeds.ts';

export const title = 'CPU engine (WASM SIMD128 / relaxed SIMD, 1 and N threads): Qwen3-0.6B shape, 8 layers, random weights, prefill 64 / decode tok/s';

const PROMPT = 64;
const THREADS = Number(process.env.CPU_BENCH_THREADS ?? Math.min(2, cpus().length));
const TYPES = (process.env.CPU_BENCH_TYPES ?? 'Q8_0,Q4_0,Q4_K').split(',') as CpuBenchType[];
const GEN = 32;
const PEERS = process.argv.includes('--peers');
const SIMD = (process.env.CPU_BENCH_SIMD ?? 'auto') as SimdChoice;
const PEER_DIR = process.env.PEER_DIR ?? '/tmp/peer';
const NATIVE_PEER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'native-peer.mjs');
/** The fast path (integer dots on 8-bit activations), measured beside the default when it is not the default. */
const FAST: CpuActivations = 'q8';
const WEBGPU_GEN = 8;   // decode tokens for WebGPU on a software adapter (a few tok/s at best)
const PROMPT_IDS = Array.from({ length: PROMPT }, (_, i) => (i * 7919 + 13) % 150000);

/** Native llama.cpp through node-llama-cpp, in its own process (bounded: 10 minutes). */
function nativeSpeeds(gguf: string, threads: number): { prefill: number; decode: number; decodeUnsampled: number } {
  const r = spawnSync(process.execPath, [NATIVE_PEER, PEER_DIR, gguf, String(threads), String(PROMPT), String(GEN)], { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) throw new Error(`native llama.cpp exited ${r.status ?? r.signal}: ${(r.stderr ?? '').slice(-600)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as { prefill: number; decode: number; decodeUnsampled: number };
}

/** The page run of one type: ours on WASM, wllama, ours again (and WebGPU on `webgpuToo`, then ours again). */
async function onPage(page: CpuBenchPage, type: CpuBenchType, file: string, L: number, webgpuToo: boolean, nodeBest: Speeds, out: Record<string, number | string>): Promise<void> {
  const rounds: Speeds[] = [];
  let w: Awaited<ReturnType<CpuBenchPage['wllama']>> | undefined;
  try {
    await page.loadWasm(file, PROMPT + GEN + 8, THREADS);
    rounds.push(await page.wasmRound(PROMPT_IDS, GEN));
    try {
      w = await page.wllama(file, THREADS, PROMPT, GEN);
      out[`${type} wllama ${THREADS} threads prefill tok/s`] = w.prefill;
      out[`${type} wllama ${THREADS} threads decode tok/s`] = w.decode;
      out[`${type} wllama page`] = `${page.isolated ? 'cross-origin isolated' : 'not isolated'}, ${w.note}`;
      rounds.push(await page.wasmRound(PROMPT_IDS, GEN));
      const ours = best(rounds);
      out[`${type} wasmOverWllamaPrefill`] = ours.prefill / w.prefill;
      out[`${type} wasmOverWllamaDecode`] = ours.decode / w.decode;
      // the figure before ours ran in the page: ours in Node's V8 against wllama in Chromium's
      out[`${type} nodeWasmOverWllamaPrefill`] = nodeBest.prefill / w.prefill;
      out[`${type} nodeWasmOverWllamaDecode`] = nodeBest.decode / w.decode;
    } catch (e) {
      out[`${type} wllama`] = `failed: ${(e as Error).message.split('\n')[0]!.slice(0, 400)}`;
    }
    // the fast path in the same page, two rounds right after wllama's and ours: llama.cpp's own approach
    // (activations quantized per block, integer dots) against llama.cpp compiled to WebAssembly
    try {
      await page.loadWasm(file, PROMPT + GEN + 8, THREADS, FAST);
      const q = best([await page.wasmRound(PROMPT_IDS, GEN), await page.wasmRound(PROMPT_IDS, GEN)]);
      out[`${type} page ${FAST} wasm ${THREADS} threads prefill / decode tok/s (best of 2)`] = `${q.prefill.toPrecision(3)} / ${q.decode.toPrecision(3)}`;
      if (w) {
        out[`${type} ${FAST} wasmOverWllamaPrefill`] = q.prefill / w.prefill;
        out[`${type} ${FAST} wasmOverWllamaDecode`] = q.decode / w.decode;
      }
      await page.loadWasm(file, PROMPT + GEN + 8, THREADS);   // back to the default for the rounds below
    } catch (e) {
      out[`${type} page ${FAST} wasm`] = `failed: ${(e as Error).message.split('\n')[0]!.slice(0, 400)}`;
    }
    if (webgpuToo) {
      try {
        const g = await page.webgpu(file, PROMPT + 16, L, PROMPT_IDS, WEBGPU_GEN);
        rounds.push(await page.wasmRound(PROMPT_IDS, GEN));
        const ours = best(rounds);
        out[`${type} webgpu page adapter`] = `${g.adapter} (shader-f16 ${g.shaderF16})`;
        out[`${type} webgpu (page, software adapter) prefill tok/s`] = g.prefill;
        out[`${type} webgpu (page, software adapter) decode tok/s`] = g.decode;
        out[`${type} wasmOverWebgpuPrefill`] = ours.prefill / g.prefill;
        out[`${type} wasmOverWebgpuDecode`] = ours.decode / g.decode;
      } catch (e) {
        out[`${type} webgpu (page)`] = `failed: ${(e as Error).message.split('\n')[0]!.slice(0, 400)}`;
      }
    }
  } catch (e) {
    out[`${type} ours in the page`] = `failed: ${(e as Error).message.split('\n')[0]!.slice(0, 400)}`;
  } finally {
    await page.disposeWasm().catch(() => undefined);
    out[`${type} page wasm ${THREADS} threads prefill tok/s (rounds in turn with the peers)`] = rounds.map((r) => r.prefill.toPrecision(3)).join(' / ');
    out[`${type} page wasm ${THREADS} threads decode tok/s (rounds in turn with the peers)`] = rounds.map((r) => r.decode.toPrecision(3)).join(' / ');
  }
}

/** Load only ever slows a round down, so the best round of each side is the steadiest comparison. */
const best = (rounds: Speeds[]): Speeds => ({ prefill: Math.max(...rounds.map((r) => r.prefill)), decode: Math.max(...rounds.map((r) => r.decode)) });

/**
 * The peers on `weights`, written as GGUF into `page`'s model folder: native llama.cpp (its own process)
 * between two rounds of ours in Node on THREADS threads (`again` runs the second), so a change of load on
 * the shared machine falls on both sides; then, in the one Chromium page, ours on WASM, wllama and ours
 * again (and ours on WebGPU when `webgpuToo`). Ratios are ours ÷ peer, best round against best round.
 */
async function peers(type: CpuBenchType, weights: ModelWeights, before: Speeds, again: () => Promise<Speeds>, out: Record<string, number | string>, page: { dir: string; open(): Promise<CpuBenchPage> }, webgpuToo: boolean, fast?: { before: Speeds; again: () => Promise<Speeds> }): Promise<void> {
  const file = `${type}.gguf`;
  const gguf = path.join(page.dir, file);
  try {
    writeCpuPeerGguf(gguf, weights);
    out[`${type} load before peers`] = +loadavg()[0]!.toFixed(2);
    let native: { prefill: number; decode: number } | undefined;
    try {
      const n = nativeSpeeds(gguf, THREADS);
      out[`${type} native llama.cpp ${THREADS} threads prefill tok/s`] = n.prefill;
      out[`${type} native llama.cpp ${THREADS} threads decode tok/s`] = n.decode;
      out[`${type} native llama.cpp ${THREADS} threads decode tok/s (no sampler)`] = n.decodeUnsampled;
      native = { prefill: n.prefill, decode: Math.max(n.decode, n.decodeUnsampled) };
    } catch (e) {
      out[`${type} native llama.cpp`] = `failed: ${(e as Error).message.slice(0, 400)}`;
    }
    const after = await again();
    const ours = best([before, after]);
    out[`${type} wasm ${THREADS} threads prefill tok/s (before / after native)`] = `${before.prefill.toPrecision(3)} / ${after.prefill.toPrecision(3)}`;
    out[`${type} wasm ${THREADS} threads decode tok/s (before / after native)`] = `${before.decode.toPrecision(3)} / ${after.decode.toPrecision(3)}`;
    if (native) {
      out[`${type} wasmOverNativePrefill`] = ours.prefill / native.prefill;
      out[`${type} wasmOverNativeDecode`] = ours.decode / native.decode;
    }
    if (fast) {
      // the fast path's rounds around native too (its first ran before native, this one after)
      const f = best([fast.before, await fast.again()]);
      out[`${type} ${FAST} wasm ${THREADS} threads prefill / decode tok/s (best of before / after native)`] = `${f.prefill.toPrecision(3)} / ${f.decode.toPrecision(3)}`;
      if (native) {
        out[`${type} ${FAST} wasmOverNativePrefill`] = f.prefill / native.prefill;
        out[`${type} ${FAST} wasmOverNativeDecode`] = f.decode / native.decode;
      }
    }
    try {
      await onPage(await page.open(), type, file, weights.config.numLayers, webgpuToo, ours, out);
    } catch (e) {
      out[`${type} page`] = `failed: ${(e as Error).message.split('\n')[0]!.slice(0, 400)}`;
    }
    out[`${type} load after peers`] = +loadavg()[0]!.toFixed(2);
  } finally {
    rmSync(gguf, { force: true });
  }
}

/** PROMPT_IDS prefilled, then `gen` greedy decode tokens (./speeds.ts). */
const speeds = (engine: LayerEngine, L: number, gen: number): Promise<Speeds> => timeSpeeds(engine, L, PROMPT_IDS, gen);

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
  const out: Record<string, number | string> = {
    cores: cpus().length, loadAtStart: +loadavg()[0]!.toFixed(2), wasmSimd: simdPath, activationsDefault: DEFAULT_ACTIVATIONS,
    activationsFast: `${FAST} (activations quantized per 32 values; integer dot products for Q8_0/Q4_0/Q4_K/Q6_K weights)`,
  };
  // --peers: one Chromium page for every type, opened (the app built) at the first type's page run
  const dir = mkdtempSync(path.join(tmpdir(), 'pooled-cpu-peers-'));
  let opened: Promise<CpuBenchPage> | undefined;
  const page = { dir, open: () => (opened ??= CpuBenchPage.open(dir, PEER_DIR)) };
  const webgpuOn = process.env.CPU_BENCH_WEBGPU !== '0';
  try {
    for (const type of TYPES) {
      const weights = randomCpuModel(type, 8);
      const L = weights.config.numLayers;
      const wasm = async (threads: number, simd: SimdPath = simdPath, activations: CpuActivations = DEFAULT_ACTIVATIONS): Promise<{ prefill: number; decode: number }> => {
        const cpu = await createCpuEngine(weights, { ctx: PROMPT + 40, threads, simd, activations });
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
      let fast: { before: Speeds; again: () => Promise<Speeds> } | undefined;
      if (FAST !== DEFAULT_ACTIVATIONS) {
        const f = await wasm(THREADS, simdPath, FAST);
        out[`${type} ${FAST} wasm ${THREADS} threads prefill tok/s`] = f.prefill;
        out[`${type} ${FAST} wasm ${THREADS} threads decode tok/s`] = f.decode;
        out[`${type} ${FAST}OverDefaultPrefill`] = f.prefill / oursT.prefill;
        out[`${type} ${FAST}OverDefaultDecode`] = f.decode / oursT.decode;
        fast = { before: f, again: () => wasm(THREADS, simdPath, FAST) };
      }
      // with --peers, WebGPU runs in the page beside ours (the first type only: a software adapter is slow)
      if (PEERS) await peers(type, weights, oursT, () => wasm(THREADS), out, page, webgpuOn && type === TYPES[0], fast);
      const gpu = PEERS || !webgpuOn ? undefined : await webgpu(weights);
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
  } finally {
    if (opened) await (await opened.catch(() => undefined))?.close();
    rmSync(dir, { recursive: true, force: true });
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
