// The prefill step an engine asked for maxBatch 'auto' takes (src/gpu/tuning.ts prefillStepFor with
// src/gpu/activations.ts widestActivationRow): the class's step where the device's limits hold a step's
// widest activation, halved on a small-limit adapter, never below 64.
import { describe, expect, it } from 'vitest';
import { widestActivationRow } from '../../../src/gpu/activations.ts';
import { PREFILL_STEPS, prefillStepFor } from '../../../src/gpu/tuning.ts';

const MiB = 1 << 20;
const big = { maxStorageBufferBindingSize: 2048 * MiB, maxBufferSize: 2048 * MiB };
const spec = { maxStorageBufferBindingSize: 128 * MiB, maxBufferSize: 256 * MiB };   // WebGPU's defaults

const qwen3_8b = { hiddenSize: 4096, numHeads: 32, numKvHeads: 8, headDim: 128, intermediateSize: 12288 };
const qwen3_30b_a3b = {
  hiddenSize: 2048, numHeads: 32, numKvHeads: 4, headDim: 128, intermediateSize: 6144,
  moe: { numExperts: 128, numExpertsPerTok: 8, moeIntermediateSize: 768, normTopkProb: true, decoderSparseStep: 1, mlpOnlyLayers: [] },
};

describe('prefill step', () => {
  it('the widest activation row: a split dense gate|up [2·I], or an MoE token\'s k expert rows', () => {
    expect(widestActivationRow(qwen3_8b)).toBe(2 * 12288);
    expect(widestActivationRow(qwen3_30b_a3b)).toBe(8 * 2048);   // k·H (expert outputs) over k·2·I_e = 12,288 and 2·I
  });

  it('a discrete GPU with big limits steps 512 tokens at 8B and A3B; integrated 256, mobile 128, CPU rasterizers 64', () => {
    for (const cfg of [qwen3_8b, qwen3_30b_a3b]) {
      const w = widestActivationRow(cfg);
      expect(prefillStepFor('discrete', big, w)).toBe(512);
      expect(prefillStepFor('integrated', big, w)).toBe(256);
      expect(prefillStepFor('mobile', big, w)).toBe(128);
      expect(prefillStepFor('cpu', big, w)).toBe(64);
    }
    expect(PREFILL_STEPS.discrete).toBe(512);
  });

  it('a small-limit adapter halves the step until the widest activation fits its binding and buffer limits', () => {
    const w = widestActivationRow(qwen3_8b);                       // 96 KiB a token
    expect(prefillStepFor('discrete', spec, w)).toBe(512);          // 512 · 96 KiB = 48 MiB ≤ 128 MiB, WebGPU's default
    expect(prefillStepFor('discrete', { maxStorageBufferBindingSize: 32 * MiB, maxBufferSize: 256 * MiB }, w)).toBe(256);
    expect(prefillStepFor('discrete', { maxStorageBufferBindingSize: 2048 * MiB, maxBufferSize: 16 * MiB }, w)).toBe(128);
    expect(prefillStepFor('integrated', { maxStorageBufferBindingSize: 8 * MiB, maxBufferSize: 8 * MiB }, w)).toBe(64);   // never below 64
  });
});
