// The conversation budget and each model's default context (8,192 up to 4B parameters, 16,384 for
// bigger dense models, 32,768 for mixture-of-experts), which the meter's budget follows.
import { expect, test } from 'vitest';
import { conversationBudget, defaultContextFor, parameterCount } from '../../../src/agent/budget.ts';
import type { ModelConfig } from '../../../src/model/types.ts';
import { parseAppParams } from '../../../src/app/url-params.ts';

/** Qwen3 dense shapes as their config.json files give them. */
function qwen3(hiddenSize: number, numLayers: number, numHeads: number, intermediateSize: number, tie: boolean): ModelConfig {
  return {
    modelType: 'qwen3', hiddenSize, numLayers, numHeads, numKvHeads: 8, headDim: 128, intermediateSize, vocabSize: 151_936,
    ropeTheta: 1e6, rmsNormEps: 1e-6, tieWordEmbeddings: tie, maxPositionEmbeddings: 40_960, eosTokenIds: [151_645],
  };
}
const Q1_7B = qwen3(2048, 28, 16, 6144, true);
const Q4B = qwen3(2560, 36, 32, 9728, true);
const Q8B = qwen3(4096, 36, 32, 12_288, false);
const Q32B = qwen3(5120, 64, 64, 25_600, false);

test('parameter counts match the model names', () => {
  expect(parameterCount(Q1_7B) / 1e9).toBeCloseTo(1.72, 1);
  expect(parameterCount(Q4B) / 1e9).toBeCloseTo(4.02, 1);
  expect(parameterCount(Q8B) / 1e9).toBeCloseTo(8.19, 1);
  expect(parameterCount(Q32B) / 1e9).toBeCloseTo(32.8, 0);
});

test('default context by model: 8,192 up to 4B, 16,384 for 8B–32B dense, 32,768 for MoE; the budget follows', () => {
  expect(defaultContextFor(Q1_7B)).toBe(8192);
  expect(defaultContextFor(Q4B)).toBe(8192);
  expect(defaultContextFor(Q8B)).toBe(16_384);
  expect(defaultContextFor(Q32B)).toBe(16_384);
  expect(defaultContextFor({ ...Q4B, modelType: 'qwen3_moe', moe: { numExperts: 128, numExpertsPerTok: 8, moeIntermediateSize: 768, normTopkProb: true, decoderSparseStep: 1, mlpOnlyLayers: [] } })).toBe(32_768);
  expect(defaultContextFor({ ...Q8B, maxPositionEmbeddings: 4096 })).toBe(4096); // never past what the model was trained for
  expect([8192, 16_384, 32_768].map((c) => conversationBudget(c))).toEqual([6080, 12_224, 24_512]);
});

test('?ctx= overrides the default; without it the app leaves the choice to the model', () => {
  expect(parseAppParams('').ctx).toBeUndefined();
  expect(parseAppParams('?ctx=12288').ctx).toBe(12_288);
});
