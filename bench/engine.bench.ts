// The engine end to end through the shared Generator: prefill and decode tok/s and dispatches/submits
// per token, for the tiny checkpoint (BF16 and q4f16_1) and for a Qwen3-1.7B-shaped random q4f16_1 model
// (a layer subset plus embedding and tied head, so it stays within a few minutes on lavapipe).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createWebGPUEngine } from '../src/gpu/create-engine.ts';
import { Generator } from '../src/model/generator.ts';
import { loadWeights } from '../src/model/load-weights.ts';
import { NodeFolderSource } from '../src/model/sources/node-folder.ts';
import { writeTinyModel } from '../src/model/tiny/write-node.ts';
import type { ModelWeights } from '../src/model/types.ts';
import { benchDevice, QWEN3_1_7B, randomQ4Model } from './gpu-bench-helpers.ts';
import { decodeNext } from '../src/model/engine-types.ts';

export const title = 'WebGPU engine: prefill / decode tok/s, dispatches and submits per token';

const SUBSET_LAYERS = Number(process.env.BENCH_LAYERS ?? 2);

async function measure(out: Record<string, number | string>, label: string, weights: ModelWeights, device: GPUDevice, prompt: number, answer: number): Promise<void> {
  const ctx = prompt + answer + 8;
  const engine = await createWebGPUEngine(weights, { device, ctx });
  const g = new Generator(engine, { ctx });
  const ids = Array.from({ length: prompt }, (_, i) => 1000 + ((i * 7919) % 50000));
  await g.generate(ids.slice(0, 4), { maxNewTokens: 2 });      // warm up: compile every pipeline
  await g.reset();
  const before = engine.stats();
  const r = await g.generate(ids, { maxNewTokens: answer });
  const after = engine.stats();
  const steps = r.ids.length;                                  // tokens sampled (prefill gives the first)
  out[`${label}: prefill tok/s (${prompt} tokens)`] = r.stats.prefillTokensPerSecond;
  out[`${label}: decode tok/s`] = r.stats.decodeTokensPerSecond;
  out[`${label}: dispatches per layer per decode token`] = after.decodeDispatchesPerLayer;
  out[`${label}: submits per token (embed + layers + sample)`] = (after.submits - before.submits) / Math.max(1, steps);
  out[`${label}: weight MB on device`] = after.weightBytes / 1e6;
  // the fused decode: gather + layers + head + top-k in one submit per token
  await engine.truncate(prompt);
  let id = r.ids[0] ?? 1;
  const t0 = performance.now();
  const s0 = engine.stats().submits;
  for (let i = 0; i < answer - 1; i++) id = await decodeNext(engine, id, { temperature: 0 });
  out[`${label}: decode tok/s, fused decodeToken`] = (answer - 1) / ((performance.now() - t0) / 1000);
  out[`${label}: submits per token, fused decodeToken`] = (engine.stats().submits - s0) / (answer - 1);
  await engine.dispose();
}

export async function run(): Promise<Record<string, number | string>> {
  const { device } = await benchDevice();
  const out: Record<string, number | string> = {};
  const dir = path.join(mkdtempSync(path.join(tmpdir(), 'pooled-bench-')), 'tiny');
  await writeTinyModel(dir, { layers: 4, seed: 7 }, 'both');
  for (const sub of ['safetensors', 'mlc']) {
    const w = await loadWeights(new NodeFolderSource(path.join(dir, sub)), { layers: [0, 4], embedding: true, head: true });
    await measure(out, `tiny 4-layer ${sub === 'mlc' ? 'q4f16_1' : 'BF16'}`, w, device, 64, 32);
  }
  const big = randomQ4Model(QWEN3_1_7B, SUBSET_LAYERS);
  await measure(out, `Qwen3-1.7B-shaped q4f16_1, ${SUBSET_LAYERS} of 28 layers + embedding/head`, big, device, 16, 4);
  device.destroy();
  return out;
}
