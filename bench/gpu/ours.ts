// Our engine's side of the GPU bench: load a GGUF (streamed), prefill P tokens (runTokens + the first
// pick, as the generator does), decode G tokens greedily (decodeNext, the generator's plain step), and
// the per-op profile of one layer, decode at position 100 and prefill at the engine's step (maxBatch
// 'auto': the adapter's).
// Host ms per decode token outside the kernels (src/gpu/readback.ts HostTimes): over the decode loop, the
// time the queue stood empty while the host encoded, submitted or handled a read-back, plus one read-back
// round trip (an empty submit's, measured here) for each read-back that emptied the queue: the GPU waits
// that long on the host per token. The host's own encode + submit milliseconds are reported beside it.
import path from 'node:path';
import { autotune } from '../../src/gpu/autotune.ts';
import { createWebGPUEngine } from '../../src/gpu/create-engine.ts';
import { PipelineCache } from '../../src/gpu/pipelines.ts';
import type { WebGPUEngine } from '../../src/gpu/engine.ts';
import { decodeNext, sampleNext } from '../../src/model/engine-types.ts';
import { openWeights } from '../../src/model/load-weights.ts';
import { NodeFolderSource } from '../../src/model/sources/node-folder.ts';

export interface OursFigures {
  loadSeconds: number;
  prefill: Record<number, number>;    // prompt length -> tok/s
  decode: number;                     // tok/s
  firstTokens: number[];              // the greedy ids of the decode run (a sanity check across runs)
  hostMsPerToken: number;             // GPU idle on the host per decode token (see above)
  hostIdleMsPerToken: number;
  drainsPerToken: number;
  roundTripMs: number;
  encodeMsPerToken: number;
  wallMsPerToken: number;
  dispatchesPerToken: number;
  profileDecode: { label: string; us: number }[];
  profilePrefill: { label: string; us: number; tokens: number }[];
  kernels: string;
  /** The start-up tuning's timed candidates for the ggml formats ("format kind layout µs"; empty when an earlier shape's choice was reused). */
  tuned: string[];
  prefillStep: number;                // tokens a prefill step (maxBatch 'auto')
  weightMB: number;
}

const median = (v: number[]): number => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

/** Median ms of an empty submit followed by a 256-byte read-back: the wait a read-back adds at least. */
async function roundTripMs(device: GPUDevice): Promise<number> {
  const src = device.createBuffer({ size: 256, usage: GPUBufferUsage.COPY_SRC });
  const dst = device.createBuffer({ size: 256, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
  const times: number[] = [];
  for (let i = 0; i < 9; i++) {
    const t = performance.now();
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(src, 0, dst, 0, 256);
    device.queue.submit([enc.finish()]);
    await dst.mapAsync(GPUMapMode.READ);
    dst.unmap();
    times.push(performance.now() - t);
  }
  src.destroy();
  dst.destroy();
  return median(times);
}

const promptIds = (n: number, vocab: number): number[] => Array.from({ length: n }, (_, i) => (i * 7919 + 13) % vocab);

export async function benchOurs(device: GPUDevice, gguf: string, opts: { layers: number; prompts: number[]; decode: number; profile: boolean }): Promise<OursFigures> {
  const maxPrompt = Math.max(...opts.prompts);
  const t0 = performance.now();
  // the tuning the engine takes (memoized per adapter and formats), timed here so its candidates are reported
  const tuning = await autotune(new PipelineCache(device, device.features.has('shader-f16')), ['ggml']);
  const tuned = tuning.measured.map((m) => `${m.format} ${m.kind} ${m.layout} ${Number.isFinite(m.microseconds) ? m.microseconds.toFixed(1) : 'wrong'} µs`);
  // the file's folder as a source, named directly (resolveModelSource reaches it by a dynamic import a bundle cannot follow)
  const source = new NodeFolderSource(path.dirname(gguf), path.basename(gguf));
  const weights = await openWeights(source, { layers: [0, opts.layers], embedding: true, head: true });
  // the adapter's prefill step (512 tokens on a discrete GPU with room for it; 64 on a CPU rasterizer)
  const engine: WebGPUEngine = await createWebGPUEngine(weights, { device, ctx: maxPrompt + opts.decode + 8, maxBatch: 'auto' });
  const L = weights.config.numLayers, V = weights.config.vocabSize;
  // warm-up: every pipeline of prefill and decode compiled once, outside the times
  await sampleNext(engine, await engine.runTokens(promptIds(Math.min(64, maxPrompt), V), [0, L], 0), { temperature: 0 });
  await decodeNext(engine, 1, { temperature: 0 });
  const loadSeconds = (performance.now() - t0) / 1000;

  const rtt = await roundTripMs(device);
  const prefill: Record<number, number> = {};
  let first = 0;
  for (const P of opts.prompts) {
    await engine.truncate(0);
    const t = performance.now();
    first = await sampleNext(engine, await engine.runTokens(promptIds(P, V), [0, L], 0), { temperature: 0 });
    prefill[P] = P / ((performance.now() - t) / 1000);
  }
  // decode after the longest prompt, the same way every time; one step first, untimed, so that the host
  // times count the loop's steady state (not the gap after prefill's read-back)
  let id = await decodeNext(engine, first, { temperature: 0 });
  const h0 = engine.hostTimes(), s0 = engine.stats();
  const ids: number[] = [];
  const t = performance.now();
  for (let i = 0; i < opts.decode; i++) ids.push(id = await decodeNext(engine, id, { temperature: 0 }));
  const wall = performance.now() - t;
  const h1 = engine.hostTimes(), s1 = engine.stats();
  const G = opts.decode;
  const idle = (h1.idleMs - h0.idleMs) / G, drains = (h1.drains - h0.drains) / G;

  const profileDecode: OursFigures['profileDecode'] = [];
  const profilePrefill: OursFigures['profilePrefill'] = [];
  if (opts.profile) {
    // layer 0 decoding at position 100 (its KV written there by a prefill), then a prefill step at 0
    const at = Math.min(100, maxPrompt);
    await engine.truncate(0);
    await engine.runTokens(promptIds(at, V), [0, L], 0);
    for (const p of await engine.profileLayer(0, at)) profileDecode.push({ label: p.label, us: p.seconds * 1e6 });
    await engine.truncate(0);
    const step = Math.min(engine.stats().maxBatch, maxPrompt);
    for (const p of await engine.profileLayer(0, 0, { tokens: step, repeat: 2, reps: 3 })) profilePrefill.push({ label: p.label, us: p.seconds * 1e6, tokens: step });
    await engine.truncate(0);
  }
  const figures: OursFigures = {
    loadSeconds, prefill, decode: G / (wall / 1000), firstTokens: ids.slice(0, 8),
    hostMsPerToken: idle + drains * rtt, hostIdleMsPerToken: idle, drainsPerToken: drains, roundTripMs: rtt,
    encodeMsPerToken: (h1.encodeMs - h0.encodeMs) / G, wallMsPerToken: wall / G,
    dispatchesPerToken: (s1.dispatches - s0.dispatches) / G,
    profileDecode, profilePrefill, kernels: engine.stats().kernels, tuned, prefillStep: engine.stats().maxBatch,
    weightMB: engine.stats().weightBytes / 1e6,
  };
  await engine.dispose();
  return figures;
}
