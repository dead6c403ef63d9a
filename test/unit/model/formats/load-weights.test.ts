// loadWeights on tiny checkpoints in both formats: every canonical tensor equals the generator's
// weights rounded the way the format stores them; only requested parts are returned.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModelConfig } from '../../../../src/model/config.ts';
import { loadWeights, planWeights } from '../../../../src/model/load-weights.ts';
import { NodeFolderSource } from '../../../../src/model/sources/node-folder.ts';
import {
  bf16BitsToF32, dequantizeRows, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits, linearRowsToFloat32, quantizeQ4f16, toFloat32,
} from '../../../../src/model/tensor-utils.ts';
import { resolveTinyOptions, tinyWeights, type TinyModelOptions } from '../../../../src/model/tiny/tiny-model.ts';
import { writeTinyModelInto } from '../../../../src/model/tiny/write-node.ts';
import type { LoadProgress } from '../../../../src/model/types.ts';
import { ffnOf, mixerOf } from '../../../helpers/layer-parts.ts';

const OPTS: TinyModelOptions = { layers: 3, vocab: 320, seed: 7 };
let root: string;
const weights = new Map(tinyWeights(resolveTinyOptions(OPTS)).map((t) => [t.name, t.values]));
const bf16 = (v: Float32Array) => Array.from(v, (x) => bf16BitsToF32(f32ToBf16Bits(x)));
const f16 = (v: Float32Array) => Array.from(v, (x) => f16BitsToF32(f32ToF16Bits(x)));
const cat = (...names: string[]) => {
  const parts = names.map((n) => weights.get(n)!);
  const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'pooled-load-'));
  await writeTinyModelInto(join(root, 'st'), OPTS, 'safetensors');
  await writeTinyModelInto(join(root, 'st3'), { ...OPTS, shards: 3 }, 'safetensors');
  await writeTinyModelInto(join(root, 'mlc'), OPTS, 'mlc');
  await writeTinyModelInto(join(root, 'untied'), { ...OPTS, tieWordEmbeddings: false }, 'both');
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('loadWeights: safetensors', () => {
  it('returns q,k,v and gate,up stacked in canonical order, BF16 values exactly', async () => {
    const w = await loadWeights(new NodeFolderSource(join(root, 'st')), { layers: [0, 3], embedding: true, head: true });
    expect(w.format).toBe('safetensors');
    expect(w.config).toMatchObject({ numLayers: 3, hiddenSize: 64, numHeads: 4, numKvHeads: 2, headDim: 16, vocabSize: 320 });
    expect(w.config.eosTokenIds).toEqual([151645, 151643]);   // config.json + generation_config.json
    const layer = w.layers.get(2)!;
    const l = mixerOf(layer, 'attention'), f = ffnOf(layer, 'dense');
    expect(l.qkv).toMatchObject({ kind: 'dense', rows: 128, cols: 64 });
    expect(Array.from(linearRowsToFloat32(l.qkv, 0, 128))).toEqual(bf16(cat(
      'model.layers.2.self_attn.q_proj.weight', 'model.layers.2.self_attn.k_proj.weight', 'model.layers.2.self_attn.v_proj.weight')));
    expect(Array.from(linearRowsToFloat32(f.gateUp, 0, 256))).toEqual(bf16(cat('model.layers.2.mlp.gate_proj.weight', 'model.layers.2.mlp.up_proj.weight')));
    expect(Array.from(linearRowsToFloat32(l.o, 0, 64))).toEqual(bf16(weights.get('model.layers.2.self_attn.o_proj.weight')!));
    expect(Array.from(linearRowsToFloat32(f.down, 0, 64))).toEqual(bf16(weights.get('model.layers.2.mlp.down_proj.weight')!));
    expect(Array.from(toFloat32(l.qNorm))).toEqual(bf16(weights.get('model.layers.2.self_attn.q_norm.weight')!));
    expect(Array.from(toFloat32(layer.postNorm))).toEqual(bf16(weights.get('model.layers.2.post_attention_layernorm.weight')!));
    expect(Array.from(linearRowsToFloat32(w.embedding!, 0, 320))).toEqual(bf16(weights.get('model.embed_tokens.weight')!));
    expect(Array.from(toFloat32(w.finalNorm!))).toEqual(bf16(weights.get('model.norm.weight')!));
    expect(w.lmHead).toBeUndefined();                       // tied
  });

  it('reads a sharded checkpoint (index + 3 files) to the same tensors', async () => {
    const one = await loadWeights(new NodeFolderSource(join(root, 'st')), { layers: [1, 3], head: true });
    const three = await loadWeights(new NodeFolderSource(join(root, 'st3')), { layers: [1, 3], head: true });
    for (const i of [1, 2]) {
      expect(mixerOf(three.layers.get(i), 'attention').qkv).toEqual(mixerOf(one.layers.get(i), 'attention').qkv);
      expect(ffnOf(three.layers.get(i), 'dense').down).toEqual(ffnOf(one.layers.get(i), 'dense').down);
    }
    expect(three.embedding).toEqual(one.embedding);
  });

  it('returns only what was asked for', async () => {
    const w = await loadWeights(new NodeFolderSource(join(root, 'st')), { layers: [1, 2] });
    expect([...w.layers.keys()]).toEqual([1]);
    expect(w.embedding).toBeUndefined();
    expect(w.finalNorm).toBeUndefined();
    const head = await loadWeights(new NodeFolderSource(join(root, 'st')), { layers: [3, 3], head: true });
    expect(head.layers.size).toBe(0);
    expect(head.embedding?.rows).toBe(320);                // tied head brings the embedding
  });

  it('loads a separate lm_head when the embedding is not tied', async () => {
    const w = await loadWeights(new NodeFolderSource(join(root, 'untied', 'safetensors')), { layers: [0, 0], head: true });
    expect(w.embedding).toBeUndefined();
    expect(Array.from(linearRowsToFloat32(w.lmHead!, 0, 320))).toEqual(
      bf16(tinyWeights(resolveTinyOptions({ ...OPTS, tieWordEmbeddings: false })).find((t) => t.name === 'lm_head.weight')!.values));
  });

  it('reports progress up to the planned bytes and plans merged reads', async () => {
    const src = new NodeFolderSource(join(root, 'st'));
    const plan = await planWeights(src, { layers: [1, 2] });
    expect(plan.reads).toHaveLength(1);                     // one layer's 11 tensors are contiguous in the file
    expect(plan.tensorCount).toBe(11);
    expect(plan.dataBytes).toBe(2 * (64 + 128 * 64 + 16 + 16 + 64 * 64 + 64 + 256 * 64 + 64 * 128));
    const seen: LoadProgress[] = [];
    await loadWeights(src, { layers: [1, 2], onProgress: (p) => seen.push(p) });
    expect(seen[0]).toEqual({ bytesDone: 0, bytesTotal: plan.dataBytes, tensorsDone: 0, tensorsTotal: 11 });
    expect(seen.at(-1)).toEqual({ bytesDone: plan.dataBytes, bytesTotal: plan.dataBytes, tensorsDone: 11, tensorsTotal: 11 });
  });

  it('refuses a layer range outside the model and honours an aborted signal', async () => {
    const src = new NodeFolderSource(join(root, 'st'));
    await expect(loadWeights(src, { layers: [2, 4] })).rejects.toThrow(/layer range \[2, 4\) is outside the model's 3 layers/);
    const ac = new AbortController();
    ac.abort();
    await expect(loadWeights(src, { layers: [0, 1], signal: ac.signal })).rejects.toThrow(/abort/i);
  });
});

describe('loadWeights: MLC q4f16_1', () => {
  it('config comes from mlc-chat-config.json when there is no config.json', async () => {
    const c = await loadModelConfig(new NodeFolderSource(join(root, 'mlc')));
    expect(c).toMatchObject({ modelType: 'qwen3', numLayers: 3, hiddenSize: 64, headDim: 16, vocabSize: 320, tieWordEmbeddings: true });
    expect(c.eosTokenIds).toEqual([151645, 151643]);
  });

  it('returns c_attn and gate_up_proj as stored, and they dequantize to the quantized f32 weights', async () => {
    const w = await loadWeights(new NodeFolderSource(join(root, 'mlc')), { layers: [0, 3], embedding: true, head: true });
    expect(w.format).toBe('mlc');
    const layer = w.layers.get(1)!;
    const l = mixerOf(layer, 'attention'), f = ffnOf(layer, 'dense');
    expect(l.qkv).toMatchObject({ kind: 'q4f16_1', rows: 128, cols: 64 });
    if (l.qkv.kind !== 'q4f16_1') throw new Error('expected q4');
    expect(l.qkv.qweight.name).toBe('model.layers.1.self_attn.c_attn.q_weight');
    expect(l.qkv.qweight.shape).toEqual([128, 8]);
    expect(l.qkv.scales.shape).toEqual([128, 2]);
    const f32 = cat('model.layers.1.self_attn.q_proj.weight', 'model.layers.1.self_attn.k_proj.weight', 'model.layers.1.self_attn.v_proj.weight');
    const expected = quantizeQ4f16('x', f32, 128, 64);
    expect(Array.from(dequantizeRows(l.qkv, 0, 128))).toEqual(Array.from(dequantizeRows(expected, 0, 128)));
    // and independently of our quantizer: each value is within half a step of the f32 weight
    const deq = dequantizeRows(l.qkv, 0, 128);
    const scales = new Uint16Array(l.qkv.scales.bytes.slice().buffer);
    for (let i = 0; i < deq.length; i++) {
      const scale = f16BitsToF32(scales[Math.floor(i / 32)]!);
      expect(Math.abs(deq[i]! - f32[i]!)).toBeLessThanOrEqual(scale / 2 + 1e-7);
    }
    const gateUp = cat('model.layers.1.mlp.gate_proj.weight', 'model.layers.1.mlp.up_proj.weight');
    expect(Array.from(linearRowsToFloat32(f.gateUp, 0, 256))).toEqual(Array.from(dequantizeRows(quantizeQ4f16('g', gateUp, 256, 64), 0, 256)));
    expect(Array.from(toFloat32(l.kNorm))).toEqual(f16(weights.get('model.layers.1.self_attn.k_norm.weight')!));
    expect(w.embedding?.kind).toBe('q4f16_1');
    expect(Array.from(toFloat32(w.finalNorm!))).toEqual(f16(weights.get('model.norm.weight')!));
  });

  it('plans whole shards (verified by size and md5), or ranges when verification is off', async () => {
    const src = new NodeFolderSource(join(root, 'mlc'));
    const whole = await planWeights(src, { layers: [0, 1] });
    expect(whole.reads.every((r) => r.whole && r.start === 0)).toBe(true);
    const ranged = await planWeights(src, { layers: [0, 1] }, { verifyMlcShards: false });
    expect(ranged.reads.every((r) => !r.whole)).toBe(true);
    expect(ranged.dataBytes).toBeLessThan(whole.dataBytes);
    const a = await loadWeights(src, { layers: [0, 1] });
    const b = await loadWeights(src, { layers: [0, 1] }, { verifyMlcShards: false });
    expect(b.layers.get(0)).toEqual(a.layers.get(0));
  });

  it('loads an untied MLC lm_head', async () => {
    const w = await loadWeights(new NodeFolderSource(join(root, 'untied', 'mlc')), { layers: [0, 0], head: true });
    expect(w.lmHead).toMatchObject({ kind: 'q4f16_1', rows: 320, cols: 64 });
    expect(w.embedding).toBeUndefined();
  });
});
