// The Qwen3.5 reference forward (loader + ReferenceEngine) against a naive forward written from the HF
// equations on the raw HF tensors (./naive-hybrid.ts), dense and MoE, with n_k ≠ n_v and both mixers;
// split == single bitwise; the chunked delta rule gives the same logits up to rounding.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadWeights } from '../../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../../src/model/reference/reference-engine.ts';
import { NodeFolderSource } from '../../../../src/model/sources/node-folder.ts';
import type { ModelWeights } from '../../../../src/model/types.ts';
import { tinyModelDir, type TinyModelDirOptions } from '../../../helpers/tiny-model.ts';
import { naiveHybridLastLogits, readHfTensors } from './naive-hybrid.ts';

const BASE: TinyModelDirOptions = {
  layers: 5, hidden: 48, heads: 4, kvHeads: 2, headDim: 12, intermediate: 40, vocab: 300, seed: 7,
  hybrid: { linearKeyHeads: 2, linearValueHeads: 6, linearHeadDim: 8, convKernel: 3, fullAttentionInterval: 2, partialRotaryFactor: 0.5 },
};
const MODELS: Record<string, TinyModelDirOptions> = {
  dense: BASE,
  moe: { ...BASE, seed: 8, moe: { experts: 5, topK: 2, intermediate: 16 }, hybrid: { ...BASE.hybrid, sharedExpertIntermediate: 24 } },
};
const ids = [5, 17, 3, 88, 42, 42, 7, 250, 1];

async function logits(engine: ReferenceEngine, tokens: number[]): Promise<Float32Array> {
  return engine.logits(await engine.runLayers(engine.range, engine.kvLength(), await engine.embed(tokens)));
}

describe.each(Object.keys(MODELS))('tiny hybrid %s', (name) => {
  let dir: string;
  let w: ModelWeights;
  beforeAll(async () => {
    dir = await tinyModelDir(MODELS[name]!);
    w = await loadWeights(new NodeFolderSource(dir), { layers: [0, 5], embedding: true, head: true });
  }, 60_000);

  it('matches the naive HF-equation forward on the raw checkpoint', async () => {
    const source = new NodeFolderSource(dir);
    const config = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    const want = naiveHybridLastLogits(await readHfTensors(source), config, ids);
    const got = await logits(new ReferenceEngine(w, { kvF16: false }), ids);
    let diff = 0;
    for (let i = 0; i < got.length; i++) diff = Math.max(diff, Math.abs(got[i]! - want[i]!));
    expect(diff).toBeLessThan(2e-4);
    expect(Math.max(...want) - Math.min(...want)).toBeGreaterThan(0.5);
    expect(w.config.hybrid!.layerTypes).toEqual(['linear_attention', 'full_attention', 'linear_attention', 'full_attention', 'linear_attention']);
  });

  it('token by token equals the whole prompt at once, bitwise (the recurrent state carries over)', async () => {
    const whole = await logits(new ReferenceEngine(w), ids);
    const e = new ReferenceEngine(w);
    let h: Float32Array = new Float32Array(0);
    for (let p = 0; p < ids.length; p++) h = await e.runLayers([0, 5], p, await e.embed([ids[p]!]));
    expect(await e.logits(h)).toEqual(whole);
  });

  it('layers [0,k) then [k,L) on separate engines equal [0,L) bitwise', async () => {
    const want = await logits(new ReferenceEngine(w), ids);
    const source = new NodeFolderSource(dir);
    for (const k of [1, 2, 4]) {
      const a = new ReferenceEngine(await loadWeights(source, { layers: [0, k], embedding: true }));
      const b = new ReferenceEngine(await loadWeights(source, { layers: [k, 5], head: true }));
      expect([a.recurrent, b.recurrent]).toEqual([true, true]);
      const h = await b.runLayers([k, 5], 0, await a.runLayers([0, k], 0, await a.embed(ids)));
      expect(await b.logits(h)).toEqual(want);
    }
  });

  it('the chunked delta rule (HF WY form) gives the recurrent logits up to rounding', async () => {
    const recurrent = await logits(new ReferenceEngine(w), ids);
    const chunked = await logits(new ReferenceEngine(w, { deltaRule: 'chunked' }), ids);
    let diff = 0;
    for (let i = 0; i < recurrent.length; i++) diff = Math.max(diff, Math.abs(recurrent[i]! - chunked[i]!));
    expect(diff).toBeLessThan(1e-4);
    expect(chunked).not.toEqual(new Float32Array(chunked.length));
  });
});
