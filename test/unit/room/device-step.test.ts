// The deal counts each device's scratch at its own prefill step (src/room/device-step.ts, README "The
// prefill step"): a step of 512 holds ~70 MB more activations and read-back at Qwen3-8B's shape than 64,
// and that comes out of the device's layers; a device whose offer is tight is dealt a smaller step.
import { describe, expect, test } from 'vitest';
import { ENGINES } from '../../../src/engines/table.ts';
import type { ModelConfig } from '../../../src/model/types.ts';
import { dealLayers, deviceFixed, shareTotal, type DealDevice } from '../../../src/room/deal.ts';
import { ENGINE_MAX_BATCH, LOAD_PEAK_BYTES } from '../../../src/room/device-bytes.ts';
import { dealtStep, STEP_BUDGET_SHARE } from '../../../src/room/device-step.ts';
import { dealDevices, roomDealCost } from '../../../src/room/host-deal.ts';
import { HostDevice } from '../../../src/room/host-device.ts';
import { PREFILL_STEPS, prefillStepFor, type AdapterClass } from '../../../src/gpu/tuning.ts';
import { caps } from './helpers.ts';

const GiB = 2 ** 30, MiB = 2 ** 20;
/** Qwen3-8B's shape. */
const QWEN3_8B = {
  modelType: 'qwen3', hiddenSize: 4096, numLayers: 36, numHeads: 32, numKvHeads: 8, headDim: 128, intermediateSize: 12288,
  vocabSize: 151936, tieWordEmbeddings: false, ropeTheta: 1e6, rmsNormEps: 1e-6, maxPositionEmbeddings: 40960,
} as unknown as ModelConfig;
const CTX = 4096;
const gpu = ENGINES.webgpu!;
const scratchAt = (step: number) => gpu.scratchBytes(QWEN3_8B, { ctx: CTX, maxBatch: step });

describe('each device\'s scratch at its own step', () => {
  test('a device\'s fixed bytes are its engine row\'s scratch at its step: 512 costs ~70 MB more than 64 at 8B', () => {
    const cost = roomDealCost({ config: QWEN3_8B, format: 'gguf' }, CTX, ENGINES);
    for (const step of [16, 64, 128, 256, 512]) expect(deviceFixed(cost, 'webgpu', step)).toBe(scratchAt(step) + LOAD_PEAK_BYTES);
    expect(deviceFixed(cost, 'webgpu')).toBe(scratchAt(ENGINE_MAX_BATCH) + LOAD_PEAK_BYTES);   // no step reported: the default
    const extra = deviceFixed(cost, 'webgpu', 512) - deviceFixed(cost, 'webgpu', 64);
    expect(extra).toBeGreaterThan(60e6);
    expect(extra).toBeLessThan(80e6);
    // A share's total counts its device's step.
    expect(shareTotal(cost, [4, 8], 1, 'webgpu', 512) - shareTotal(cost, [4, 8], 1, 'webgpu', 64)).toBe(extra);
  });

  test('two guests with the same offer: the one at 512 tokens a step is dealt fewer layers when the step\'s bytes cross a layer', () => {
    const cost = roomDealCost({ config: QWEN3_8B, format: 'mlc' }, CTX, ENGINES);   // q4f16_1: every layer the same size
    expect(cost.layerBytes).toBeUndefined();
    const perLayer = cost.bytesPerLayer;
    // An offer that holds 6 layers at 64 tokens a step, with 30 MB to spare: not enough for 512's ~70 MB.
    const budget = deviceFixed(cost, 'webgpu', 64) + 6 * perLayer + 30e6;
    const devices: DealDevice[] = [
      { id: 'host', name: 'host', memoryBudgetBytes: 64 * GiB, speed: 1, engine: 'webgpu', step: 64 },
      { id: 'big', name: 'big', memoryBudgetBytes: budget, speed: 16, engine: 'webgpu', step: 512 },
      { id: 'small', name: 'small', memoryBudgetBytes: budget, speed: 16, engine: 'webgpu', step: 64 },
    ];
    const deal = dealLayers(devices, cost);
    const layers = (id: string) => { const e = deal.find((x) => x.deviceId === id)!; return e.range[1] - e.range[0]; };
    expect(layers('small')).toBe(6);
    expect(layers('big')).toBe(5);
    deal.forEach((e, i) => expect(shareTotal(cost, e.range, i, devices[i]!.engine, devices[i]!.step)).toBeLessThanOrEqual(devices[i]!.memoryBudgetBytes));
  });

  test('the step dealt: the one reported while its extra bytes stay within 1/16 of the offer, halved otherwise, never below 64', () => {
    const at = (step: number | undefined, budget: number) => dealtStep(QWEN3_8B, { ctx: CTX }, ENGINES, { engine: 'webgpu', ...(step !== undefined ? { step } : {}) }, budget);
    expect(at(512, 6 * GiB)).toBe(512);
    expect(at(512, 768 * MiB)).toBe(256);
    expect(at(512, 64 * MiB)).toBe(64);
    expect(at(128, 6 * GiB)).toBe(128);                // a phone's class step stays its own
    expect(at(16, 64 * MiB)).toBe(16);                 // a step below the default is never raised or cut
    expect(at(undefined, 6 * GiB)).toBeUndefined();    // no step reported (the WASM engine): the row's default
    for (const budget of [256 * MiB, 768 * MiB, 1.5 * GiB, 3 * GiB]) {
      const step = at(512, budget)!;
      const extra = (s: number) => scratchAt(s) - scratchAt(64);
      if (step > 64) expect(extra(step)).toBeLessThanOrEqual(budget * STEP_BUDGET_SHARE);
      if (step < 512) expect(extra(step * 2)).toBeGreaterThan(budget * STEP_BUDGET_SHARE);
    }
  });

  test('the host reads each device\'s step from its hello (dealDevices), at its offer less what the host keeps back', () => {
    const devices = new Map([
      ['host', new HostDevice('host', 'Host', { ...caps(6 * GiB), engine: 'webgpu', step: 512 }, null)],
      ['phone', new HostDevice('phone', 'Phone', { ...caps(768 * MiB), engine: 'webgpu', step: 512 }, null)],
      ['wasm', new HostDevice('wasm', 'Laptop', { ...caps(6 * GiB), engine: 'wasm' }, null)],
    ]);
    const model = { config: QWEN3_8B, format: 'gguf' as const, ctx: CTX };
    expect(dealDevices(devices, ENGINES, 'host', 0, model).map((d) => d.step)).toEqual([512, 256, undefined]);
    expect(dealDevices(devices, ENGINES, 'host', 6 * GiB - 64 * MiB, model).map((d) => d.step)).toEqual([64, 256, undefined]);
  });

  test('with room to spare, the product\'s step on each adapter class is the GPU bench\'s (maxBatch auto, reported as prefillStep)', () => {
    // The bench's engine: prefillStepFor within WebGPU's default limits at 8B's widest row (gate|up, 2I floats).
    const limits = { maxStorageBufferBindingSize: 128 * MiB, maxBufferSize: 256 * MiB };
    for (const c of Object.keys(PREFILL_STEPS) as AdapterClass[]) {
      const bench = prefillStepFor(c, limits, 2 * QWEN3_8B.intermediateSize);
      // The product: the device reports its class's step, the deal gives it at a 6 GiB offer, the engine runs 'auto' capped at it.
      const dealt = dealtStep(QWEN3_8B, { ctx: CTX }, ENGINES, { engine: 'webgpu', step: PREFILL_STEPS[c] }, 6 * GiB)!;
      expect(Math.min(bench, dealt)).toBe(bench);
    }
    expect(prefillStepFor('discrete', limits, 2 * QWEN3_8B.intermediateSize)).toBe(512);
  });
});
