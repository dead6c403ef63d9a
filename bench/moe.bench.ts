// Qwen3 MoE decode beside dense with the same active parameters, on this adapter in one run: random
// Q4_K layers of Qwen3-30B-A3B's shape (128 experts, top-8 of I_e 768, hidden 2048) against dense Q4_K
// layers of the same attention and an MLP of intermediate 8·768 = 6144 (what one token reads of the
// MoE layer's experts). Only the layers are timed (no embedding or head), one token at a time through
// runLayers, each read back. The MoE layer holds ~16× the dense layer's MLP bytes; a decode token
// should cost about the same (target ratio near 1: routing and the k expert slots are the overhead).
import { createWebGPUEngine } from '../src/gpu/create-engine.ts';
import type { WebGPUEngine } from '../src/gpu/engine.ts';
import { benchDevice, QWEN3_30B_A3B, randomQ4KLayers } from './gpu-bench-helpers.ts';

export const title = 'Qwen3 MoE decode (Qwen3-30B-A3B layer shape, Q4_K) vs dense with the same active parameters';

const LAYERS = Number(process.env.BENCH_MOE_LAYERS ?? 2);
const TOKENS = 8;
const ROUNDS = 3;

async function decodeSeconds(engine: WebGPUEngine, H: number, tokens: number): Promise<number> {
  await engine.truncate(0);
  const hidden = new Float32Array(H).map((_, i) => Math.sin(i) * 0.5);
  await engine.runLayers([0, LAYERS], 0, hidden);                 // warm up: compile, first touch
  const t0 = performance.now();
  for (let t = 1; t <= tokens; t++) await engine.runLayers([0, LAYERS], t, hidden);
  return (performance.now() - t0) / 1000;
}

export async function run(): Promise<Record<string, number | string>> {
  const { device } = await benchDevice();
  const cfg = QWEN3_30B_A3B;
  const H = cfg.hiddenSize;
  const out: Record<string, number | string> = { layers: LAYERS };
  const moe = await createWebGPUEngine(randomQ4KLayers(cfg, LAYERS, true), { device, ctx: 64, maxBatch: 16 });
  const dense = await createWebGPUEngine(randomQ4KLayers(cfg, LAYERS, false), { device, ctx: 64, maxBatch: 16 });
  out['MoE weight MB on device'] = moe.stats().weightBytes / 1e6;
  out['dense weight MB on device'] = dense.stats().weightBytes / 1e6;
  // alternating rounds, the fastest of each, so a ratio compares like with like under changing load
  let tMoe = Infinity;
  let tDense = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    tMoe = Math.min(tMoe, await decodeSeconds(moe, H, TOKENS));
    tDense = Math.min(tDense, await decodeSeconds(dense, H, TOKENS));
  }
  await moe.truncate(0);
  await moe.runLayers([0, LAYERS], 0, new Float32Array(H).fill(0.1));
  await moe.expertBytesRead({ reset: true });
  await moe.runLayers([0, LAYERS], 1, new Float32Array(H).fill(0.1));
  const read = [...(await moe.expertBytesRead()).values()].reduce((a, v) => a + v.reduce((x, y) => x + y, 0), 0);
  out['MoE expert MB read per decode token (counted)'] = read / 1e6;
  out['MoE decode tok/s (layers only)'] = TOKENS / tMoe;
  out['dense decode tok/s (layers only)'] = TOKENS / tDense;
  out['MoE / dense decode tok/s'] = tDense / tMoe;
  await moe.dispose();
  await dense.dispose();
  device.destroy();
  return out;
}
