// Seeded random ModelWeights built in memory (no files): for tests of the reference ops, engine and
// Generator that must not depend on the checkpoint readers. Weights are scaled like the tiny checkpoints
// (small embedding, larger o/down) so greedy tokens vary instead of repeating the last input.

import { fromFloat32, quantizeQ4f16 } from '../../../../src/model/tensor-utils.ts';
import type { DecoderLayerWeights, Linear, ModelConfig, ModelWeights, TensorData } from '../../../../src/model/types.ts';

export interface SyntheticOptions {
  layers?: number;
  hidden?: number;
  heads?: number;
  kvHeads?: number;
  headDim?: number;
  intermediate?: number;
  vocab?: number;
  seed?: number;
  dtype?: 'F32' | 'BF16' | 'F16' | 'q4f16_1';
  tied?: boolean;
  maxPositions?: number;
}

/** Deterministic normal(0, 1) samples (Box–Muller over a 32-bit LCG-free mixer). */
export function normalSampler(seed: number): () => number {
  let state = seed >>> 0;
  const uniform = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return (((z ^ (z >>> 14)) >>> 0) + 0.5) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

export function syntheticConfig(o: SyntheticOptions = {}): ModelConfig {
  return {
    modelType: 'qwen3', hiddenSize: o.hidden ?? 64, numLayers: o.layers ?? 3, numHeads: o.heads ?? 4,
    numKvHeads: o.kvHeads ?? 2, headDim: o.headDim ?? 16, intermediateSize: o.intermediate ?? 96,
    vocabSize: o.vocab ?? 97, ropeTheta: 10000, rmsNormEps: 1e-6, tieWordEmbeddings: o.tied ?? true,
    maxPositionEmbeddings: o.maxPositions ?? 256, eosTokenIds: [],
  };
}

export function syntheticWeights(o: SyntheticOptions = {}): ModelWeights {
  const c = syntheticConfig(o);
  const dtype = o.dtype ?? 'F32';
  const normal = normalSampler(o.seed ?? 1);
  const values = (count: number, std: number, mean = 0): number[] => Array.from({ length: count }, () => mean + std * normal());
  const linear = (name: string, rows: number, cols: number, std: number): Linear => {
    const w = values(rows * cols, std);
    if (dtype === 'q4f16_1') return quantizeQ4f16(name, w, rows, cols);
    return { kind: 'dense', rows, cols, weight: fromFloat32(`${name}.weight`, w, [rows, cols], dtype) };
  };
  const norm = (name: string, size: number): TensorData => fromFloat32(`${name}.weight`, values(size, 0.1, 1), [size], dtype === 'q4f16_1' ? 'F16' : dtype);
  const H = c.hiddenSize;
  const D = c.headDim;
  const I = c.intermediateSize;
  const layers = new Map<number, DecoderLayerWeights>();
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}`;
    // drawn from the one PRNG in this order (input norm, q|k|v, q/k norms, o, post norm, gate|up, down)
    const inputNorm = norm(`${p}.input_layernorm`, H);
    const qkv = linear(`${p}.self_attn.qkv_proj`, (c.numHeads + 2 * c.numKvHeads) * D, H, 1 / Math.sqrt(H));
    const qNorm = norm(`${p}.self_attn.q_norm`, D);
    const kNorm = norm(`${p}.self_attn.k_norm`, D);
    const o = linear(`${p}.self_attn.o_proj`, H, c.numHeads * D, 4 / Math.sqrt(c.numHeads * D));
    const postNorm = norm(`${p}.post_attention_layernorm`, H);
    const gateUp = linear(`${p}.mlp.gate_up_proj`, 2 * I, H, 1 / Math.sqrt(H));
    const down = linear(`${p}.mlp.down_proj`, H, I, 4 / Math.sqrt(I));
    layers.set(i, { index: i, inputNorm, postNorm, mixer: { kind: 'attention', qkv, qNorm, kNorm, o }, ffn: { kind: 'dense', gateUp, down } });
  }
  const weights: ModelWeights = {
    config: c, format: dtype === 'q4f16_1' ? 'mlc' : 'safetensors', layers,
    embedding: linear('model.embed_tokens', c.vocabSize, H, 0.05),
    finalNorm: norm('model.norm', H),
  };
  if (!c.tieWordEmbeddings) weights.lmHead = linear('lm_head', c.vocabSize, H, 1 / Math.sqrt(H));
  return weights;
}

/** The same weights restricted to layers [start, end), with or without embedding / head. */
export function weightsSubset(w: ModelWeights, start: number, end: number, parts: { embedding?: boolean; head?: boolean }): ModelWeights {
  const layers = new Map([...w.layers].filter(([i]) => i >= start && i < end));
  const sub: ModelWeights = { config: w.config, format: w.format, layers };
  const needsEmbedding = parts.embedding || (parts.head && w.config.tieWordEmbeddings);
  if (needsEmbedding && w.embedding) sub.embedding = w.embedding;
  if (parts.head) {
    if (w.finalNorm) sub.finalNorm = w.finalNorm;
    if (w.lmHead) sub.lmHead = w.lmHead;
  }
  return sub;
}
