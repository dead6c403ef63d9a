// Qwen3 MoE on the reference engine: the router (softmax → top-k → renormalise) as HF defines it, the
// whole forward against the naive HF-style forward, dense layers from mlp_only_layers, decode touching
// only the chosen experts, split == unsplit, and GGUF (stacked experts) == safetensors (per expert).
import { beforeAll, describe, expect, it } from 'vitest';
import { loadWeights } from '../../../../src/model/load-weights.ts';
import { routeToken } from '../../../../src/model/reference/moe.ts';
import { ReferenceEngine } from '../../../../src/model/reference/reference-engine.ts';
import { NodeFolderSource } from '../../../../src/model/sources/node-folder.ts';
import { resolveModelSource } from '../../../../src/model/sources/resolve.ts';
import { tinyBpeVocab } from '../../../../src/model/tiny/gguf-vocab.ts';
import type { ModelWeights } from '../../../../src/model/types.ts';
import { tinyGgufModel, tinyModelDir, type TinyModelDirOptions } from '../../../helpers/tiny-model.ts';
import { naiveLastLogits } from './naive-forward.ts';
import { ffnOf } from '../../../helpers/layer-parts.ts';

const VOCAB = tinyBpeVocab(tinyBpeTemplate()).tokens.length;
function tinyBpeTemplate(): string { return '{{ messages }}'; }

const MOE: TinyModelDirOptions = {
  layers: 3, hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 128, vocab: VOCAB, seed: 5,
  moe: { experts: 8, topK: 2, intermediate: 32, mlpOnlyLayers: [1] },
};
const ids = [5, 17, 3, 88, 42, 42, 7];

async function logitsOf(engine: ReferenceEngine, tokens: number[], layers: [number, number][] = [[0, engine.config.numLayers]]): Promise<Float32Array> {
  let h = await engine.embed(tokens);
  const at = engine.kvLength();
  for (const r of layers) h = await engine.runLayers(r, at, h);
  return engine.logits(h);
}

describe('routing', () => {
  it('softmax over all experts, the top k (ties to the lower id), renormalised when asked', () => {
    const logits = Float32Array.from([0, Math.log(3), Math.log(3), Math.log(2)]);   // p = 1/9, 3/9, 3/9, 2/9
    const r = routeToken(logits, 2, false);
    expect(r.experts).toEqual([1, 2]);
    expect(r.weights.map((w) => w.toFixed(6))).toEqual([(3 / 9).toFixed(6), (3 / 9).toFixed(6)]);
    const n = routeToken(logits, 3, true);
    expect(n.experts).toEqual([1, 2, 3]);
    expect(n.weights.map((w) => w.toFixed(6))).toEqual(['0.375000', '0.375000', '0.250000']);
    expect(routeToken(Float32Array.from([1, 1, 1, 1]), 2, true).experts).toEqual([0, 1]);
  });
});

describe('Qwen3 MoE reference forward', () => {
  let w: ModelWeights;
  let unnormalised: ModelWeights;
  beforeAll(async () => {
    const load = async (o: TinyModelDirOptions) => loadWeights(new NodeFolderSource(await tinyModelDir(o)), { layers: [0, 3], embedding: true, head: true });
    w = await load(MOE);
    unnormalised = await load({ ...MOE, moe: { ...MOE.moe!, normTopkProb: false } });
  }, 120_000);

  it('loads per-expert safetensors as stacked experts, and mlp_only_layers as dense', () => {
    expect(w.config.modelType).toBe('qwen3_moe');
    expect(w.layers.get(1)!.ffn.kind).toBe('dense');
    const m = ffnOf(w.layers.get(0), 'moe').moe;
    expect(m).toMatchObject({ numExperts: 8, topK: 2, normTopkProb: true, intermediate: 32 });
    expect([m.router.rows, m.gate.rows, m.up.rows, m.down.rows]).toEqual([8, 8 * 32, 8 * 32, 8 * 64]);
  });

  it.each([['norm_topk_prob true', () => w], ['norm_topk_prob false', () => unnormalised]])('%s: equals the naive HF-style forward', async (_, get) => {
    const weights = get();
    const got = await logitsOf(new ReferenceEngine(weights, { kvF16: false }), ids);
    const want = naiveLastLogits(weights, ids);
    let diff = 0;
    for (let i = 0; i < got.length; i++) diff = Math.max(diff, Math.abs(got[i]! - want[i]!));
    expect(diff).toBeLessThan(1e-4);
    expect(Math.max(...want) - Math.min(...want)).toBeGreaterThan(0.5);
  });

  it('norm_topk_prob changes the output', async () => {
    const a = await logitsOf(new ReferenceEngine(w), ids);
    const b = await logitsOf(new ReferenceEngine(unnormalised), ids);
    expect(a).not.toEqual(b);
  });

  it('prefill runs each chosen expert once on its tokens; decode runs exactly k experts per MoE layer', async () => {
    const engine = new ReferenceEngine(w);
    await logitsOf(engine, ids);
    const prefill = engine.expertRuns.splice(0);
    for (const layer of [0, 2]) {
      const runs = prefill.filter((r) => r.layer === layer);
      expect(new Set(runs.map((r) => r.expert)).size).toBe(runs.length);
      expect(runs.reduce((a, r) => a + r.tokens, 0)).toBe(ids.length * 2);
    }
    expect(prefill.some((r) => r.layer === 1)).toBe(false);
    await logitsOf(engine, [9]);
    const decode = engine.expertRuns.splice(0);
    expect(decode.map((r) => [r.layer, r.tokens])).toEqual([[0, 1], [0, 1], [2, 1], [2, 1]]);
    // The expert bytes one decode token reads: 2 of 8 experts in each of the 2 MoE layers.
    const m = ffnOf(w.layers.get(0), 'moe').moe;
    const expertBytes = (m.gate.kind === 'dense' ? m.gate.weight.bytes.byteLength : 0) / 8 * 3;
    expect(decode.length * expertBytes).toBe(2 * 2 * expertBytes);
    expect(decode.length * expertBytes).toBeLessThanOrEqual(0.25 * 2 * 8 * expertBytes);
  });

  it('the room split [0,1)+[1,3) gives bitwise the logits of [0,3)', async () => {
    const whole = await logitsOf(new ReferenceEngine(w), ids);
    const split = await logitsOf(new ReferenceEngine(w), ids, [[0, 1], [1, 3]]);
    expect(split).toEqual(whole);
  });

  it('a BF16 GGUF of the same model (stacked experts, F32 router and norms) gives bitwise the same logits', async () => {
    const g = await tinyGgufModel({ ...MOE, fileType: 'BF16', tokenizer: 'tiny-bpe', chatTemplate: tinyBpeTemplate() });
    const gw = await loadWeights(await resolveModelSource(g.path), { layers: [0, 3], embedding: true, head: true });
    expect(gw.config.moe).toEqual(w.config.moe);
    expect(gw.layers.get(1)!.ffn.kind).toBe('dense');
    expect(await logitsOf(new ReferenceEngine(gw), ids)).toEqual(await logitsOf(new ReferenceEngine(w), ids));
  });
});
