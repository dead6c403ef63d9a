import { describe, expect, test } from 'vitest';
import { dealCost, dealLayers, validateDeal, type DealDevice } from '../../../src/room/deal.ts';
import { headScratchBytes } from '../../../src/room/device-bytes.ts';
import { DealError } from '../../../src/room/errors.ts';

const GiB = 2 ** 30;
const dev = (id: string, budgetGiB: number, speed = 1): DealDevice => ({ id, name: id, memoryBudgetBytes: budgetGiB * GiB, speed });
const cost = { numLayers: 28, bytesPerLayer: 0.1 * GiB, hostFixedBytes: 0.6 * GiB };
const sizes = (d: ReturnType<typeof dealLayers>) => d.map((e) => e.range[1] - e.range[0]);

describe('dealLayers', () => {
  test('equal devices get equal contiguous shares covering every layer', () => {
    const deal = dealLayers([dev('host', 100), dev('a', 100), dev('b', 100)], cost);
    expect(deal.map((e) => e.range)).toEqual([[0, 10], [10, 19], [19, 28]]);
  });

  test('shares follow speed, and memory caps a fast device with little memory', () => {
    expect(sizes(dealLayers([dev('host', 100, 1), dev('a', 100, 3)], cost))).toEqual([7, 21]);
    // "a" is 10× faster but only fits 5 layers (0.5 GiB / 0.1 GiB)
    expect(sizes(dealLayers([dev('host', 100, 1), dev('a', 0.5, 10)], cost))).toEqual([23, 5]);
    // the host's embedding + head come out of its budget: 1 GiB − 0.6 GiB fits 4 layers
    expect(sizes(dealLayers([dev('host', 1), dev('a', 100)], cost))).toEqual([4, 24]);
  });

  test('a host with no room for layers still keeps layer 0 (the first layer\'s input is the embedding of the prompt)', () => {
    expect(dealLayers([dev('host', 0.6), dev('a', 2), dev('b', 2)], cost).map((e) => e.range)).toEqual([[0, 1], [1, 15], [15, 28]]);
  });

  test('a room too small for the model is a DealError naming each device', () => {
    expect(() => dealLayers([dev('host', 1), dev('phone', 1)], cost)).toThrowError(DealError);
    expect(() => dealLayers([dev('host', 1), dev('phone', 1)], cost)).toThrowError(/holds 14 of 28 layers \(host: 4, phone: 10\)/);
  });

  test('dealCost counts q4 at about a quarter of bf16 and adds the KV cache', () => {
    const config = { hiddenSize: 2048, headDim: 128, numHeads: 16, numKvHeads: 8, intermediateSize: 6144, vocabSize: 151936, numLayers: 28, tieWordEmbeddings: true } as never;
    const bf16 = dealCost(config, 'safetensors', 0);
    const q4 = dealCost(config, 'mlc', 0);
    expect(bf16.bytesPerLayer / 1e6).toBeCloseTo(100.7, 0); // docs/platform.md, Weight formats: bf16 ≈100.7 MB/layer
    expect(q4.bytesPerLayer / 1e6).toBeCloseTo(28.3, 0);   // docs/platform.md, Weight formats: ≈28.3 MB/layer
    expect(dealCost(config, 'mlc', 1000).bytesPerLayer - q4.bytesPerLayer).toBe(1000 * 4096); // 4,096 B/token/layer
  });
});

describe('validateDeal', () => {
  const ids = ['host', 'a', 'b'];
  test('accepts a contiguous cover in any listing order and appends empty devices', () => {
    expect(validateDeal([{ deviceId: 'b', range: [2, 4] }, { deviceId: 'a', range: [0, 2] }], ids, 4)).toEqual([
      { deviceId: 'a', range: [0, 2] }, { deviceId: 'b', range: [2, 4] }, { deviceId: 'host', range: [4, 4] },
    ]);
  });
  test.each([
    [[{ deviceId: 'a', range: [0, 2] }, { deviceId: 'b', range: [3, 4] }], /leaves layers \[2, 3\) to no device/],
    [[{ deviceId: 'a', range: [0, 3] }, { deviceId: 'b', range: [2, 4] }], /overlaps at layer 2/],
    [[{ deviceId: 'a', range: [0, 3] }], /covers layers \[0, 3\) of 4/],
    [[{ deviceId: 'zz', range: [0, 4] }], /"zz", which is not in the room/],
    [[{ deviceId: 'a', range: [0, 5] }], /not a layer range of a 4-layer model/],
  ])('rejects %j', (deal, message) => {
    expect(() => validateDeal(deal as never, ids, 4)).toThrowError(message);
  });
});

describe('dealing counts bytes', () => {
  const MiB = 2 ** 20;
  const ids = (n: number) => Array.from({ length: n }, (_, i) => i);

  test('layers of different sizes: each device\'s share follows bytes, and fits its budget', () => {
    // 8 layers: 4 light (100 MiB) then 4 heavy (300 MiB) — e.g. dense layers, then MoE layers.
    const layerBytes = [...Array(4).fill(100 * MiB), ...Array(4).fill(300 * MiB)];
    const c = { numLayers: 8, bytesPerLayer: 300 * MiB, layerBytes, hostFixedBytes: 200 * MiB };
    const deal = dealLayers([dev('host', 10), dev('a', 10)], c);
    const weigh = (r: [number, number]) => layerBytes.slice(r[0], r[1]).reduce((x, y) => x + y, 0);
    // Equal speeds and roomy budgets: the cut nearest half the bytes (800 MiB), not half the layers.
    expect(deal.map((e) => e.range)).toEqual([[0, 5], [5, 8]]);
    expect(deal.map((e) => weigh(e.range) / MiB)).toEqual([700, 900]);
    // A device with 700 MiB holds at most two heavy layers.
    const tight = dealLayers([dev('host', 10), dev('a', 700 / 1024)], c);
    expect(weigh(tight[1]!.range)).toBeLessThanOrEqual(700 * MiB);
    expect(tight.map((e) => e.range)).toEqual([[0, 6], [6, 8]]);
    const tighter = dealLayers([dev('host', 10), dev('a', 500 / 1024)], c);
    expect(tighter.map((e) => e.range)).toEqual([[0, 7], [7, 8]]);
    for (const d of [deal, tight, tighter]) expect(d.flatMap((e) => ids(8).filter((i) => i >= e.range[0] && i < e.range[1]))).toEqual(ids(8));
  });

  test('too little memory for the heavy layers is a DealError that says how much is needed', () => {
    const c = { numLayers: 4, bytesPerLayer: 300 * MiB, layerBytes: [100, 100, 300, 300].map((b) => b * MiB), hostFixedBytes: 0 };
    expect(() => dealLayers([dev('host', 0.2), dev('a', 0.2)], c)).toThrowError(/does not hold the model's 4 layers \(0\.78 GiB/);
  });

  test('dealCost weighs an MoE layer with all its experts, and the KV cache at ctx', () => {
    const base = { hiddenSize: 2048, headDim: 128, numHeads: 32, numKvHeads: 4, intermediateSize: 6144, vocabSize: 151936, numLayers: 48, tieWordEmbeddings: false };
    const moe = { ...base, modelType: 'qwen3_moe', moe: { numExperts: 128, numExpertsPerTok: 8, moeIntermediateSize: 768, normTopkProb: true, decoderSparseStep: 1, mlpOnlyLayers: [] } } as never;
    const dense = { ...base, modelType: 'qwen3' } as never;
    const m = dealCost(moe, 'gguf', 0);
    const d = dealCost(dense, 'gguf', 0);
    expect(m.bytesPerLayer / d.bytesPerLayer).toBeGreaterThan(8);
    // Qwen3-30B-A3B-Q4_K_M.gguf is 18.56 GB (≈8 MB of it header): the Q4_K_M mix's Q6_K layers counted, within 0.5%.
    const weights = m.layerBytes!.reduce((a, b) => a + b, 0) + m.hostFixedBytes - headScratchBytes(moe);
    expect(Math.abs(weights / 18.55e9 - 1)).toBeLessThan(0.005);
    // use_more_bits layers (0: yes, 6: no) hold Q6_K ffn_down_exps: 52 MB more than a Q4_K layer's.
    expect((m.layerBytes![0]! - m.layerBytes![6]!) / 1e6).toBeCloseTo((128 * 2048 * 768 * (210 - 144)) / 256 / 1e6 + (512 * 2048 * 66) / 256 / 1e6, 1);
    expect(dealCost(moe, 'gguf', 4096).bytesPerLayer - m.bytesPerLayer).toBe(4096 * 2 * 4 * 128 * 2);
    const mixed = dealCost({ ...(moe as object), moe: { ...(moe as { moe: object }).moe, mlpOnlyLayers: [0] } } as never, 'gguf', 0);
    expect(mixed.layerBytes![0]).toBeLessThan(mixed.layerBytes![1]!);
  });
});
