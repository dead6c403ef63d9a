// Guests standing by (loaded, dealt nothing because the model fits on the host and a split is slower): who
// they are, what a split by memory alone would deal them, and the factor it would run at, from the
// devices' measured speeds and the guest's round trip. The times are worked out by hand here.
import { describe, expect, test } from 'vitest';
import { factorText, layerFlops, splitByMemory, standByNote, standingBy, tokenSeconds } from '../../../src/app/stand-by.ts';
import { dealCost, dealLayers } from '../../../src/room/deal.ts';
import type { DeviceInfo } from '../../../src/room/host.ts';
import type { ModelConfig } from '../../../src/model/types.ts';

const GiB = 2 ** 30;
const config: ModelConfig = {
  modelType: 'qwen3', hiddenSize: 64, numLayers: 4, numHeads: 4, numKvHeads: 2, headDim: 16, intermediateSize: 128,
  vocabSize: 1000, ropeTheta: 1e6, rmsNormEps: 1e-6, tieWordEmbeddings: true, maxPositionEmbeddings: 4096, eosTokenIds: [0],
};
const cost = dealCost(config, 'safetensors', 1024);

function device(id: string, speed: number, extra: Partial<DeviceInfo> = {}): DeviceInfo {
  return {
    id, name: id === 'host' ? 'Laptop' : `Phone ${id}`, isHost: id === 'host', status: 'ready', range: [0, 0], bytesDone: 0, bytesTotal: 0,
    networkBytes: 0, cacheBytes: 0, rttMs: 0, badFrames: 0, tokensPerSecond: 0, snapshotBytes: 0, snapshots: 0,
    caps: { adapter: 'x', isFallbackAdapter: false, shaderF16: false, maxStorageBufferBindingSize: 0, maxBufferSize: 0, engine: 'webgpu', deviceMemoryGiB: 0, memoryBudgetBytes: 2 * GiB, speed },
    ...extra,
  };
}

describe('guests standing by', () => {
  const devices = [device('host', 1), device('g1', 0.1, { rttMs: 4 })];
  // The automatic deal, as the host makes it: a guest a tenth as fast rounds to no layers.
  const auto = dealLayers(devices.map((d) => ({ id: d.id, name: d.name, memoryBudgetBytes: d.caps.memoryBudgetBytes, speed: d.caps.speed })), cost);

  test('the automatic deal leaves a slow guest standing by, and it is named', () => {
    expect(auto).toEqual([{ deviceId: 'host', range: [0, 4] }, { deviceId: 'g1', range: [4, 4] }]);
    expect(standingBy(devices, auto).map((d) => d.id)).toEqual(['g1']);
    // Still loading, or gone: not standing by.
    expect(standingBy([devices[0]!, { ...devices[1]!, status: 'loading' }], auto)).toEqual([]);
  });

  test('a layer\'s multiply-adds from its shapes (attention + MLP), twice for FLOPs', () => {
    const attention = 64 * (4 + 2 * 2) * 16 + 4 * 16 * 64;   // q, k, v in; o out
    expect(layerFlops(config, 0)).toBe(2 * (attention + 3 * 64 * 128));
  });

  test('split by memory alone deals the guest half, and the factor is the hand-worked time ratio', () => {
    const split = splitByMemory(devices, cost);
    expect(split).toEqual([{ deviceId: 'host', range: [0, 2] }, { deviceId: 'g1', range: [2, 4] }]);
    const head = 2 * 1000 * 64, layer = layerFlops(config, 0);
    const single = (head + 4 * layer) / 1e9;
    const twoWay = (head + 2 * layer) / 1e9 + (2 * layer) / 0.1e9 + 0.004;
    expect(tokenSeconds(config, auto, devices)).toBeCloseTo(single, 12);
    expect(tokenSeconds(config, split, devices)).toBeCloseTo(twoWay, 12);
    const note = standByNote(config, cost, devices, auto)!;
    expect(note.names).toEqual(['Phone g1']);
    expect(note.split).toEqual(split);
    expect(note.factor).toBeCloseTo(single / twoWay, 12);
    expect(note.factor).toBeLessThan(1);
  });

  test('no note when every guest holds layers, or there is no guest', () => {
    const even = [device('host', 1), device('g1', 1)];
    const deal = dealLayers(even.map((d) => ({ id: d.id, name: d.name, memoryBudgetBytes: d.caps.memoryBudgetBytes, speed: 1 })), cost);
    expect(standByNote(config, cost, even, deal)).toBeNull();
    expect(standByNote(config, cost, [device('host', 1)], [{ deviceId: 'host', range: [0, 4] }])).toBeNull();
  });

  test('a guest whose memory holds no layer stands by with nothing to split onto', () => {
    const tiny = [device('host', 1), device('g1', 1, { caps: { ...device('g1', 1).caps, memoryBudgetBytes: 1000 } })];
    const note = standByNote(config, cost, tiny, [{ deviceId: 'host', range: [0, 4] }, { deviceId: 'g1', range: [4, 4] }])!;
    expect(note.split).toBeNull();
    expect(note.factor).toBe(1);
  });

  test('the factor as the panel prints it', () => {
    expect(factorText(0.8)).toBe('~0.8×');
    expect(factorText(0.0512)).toBe('~0.051×');
    expect(factorText(1.26)).toBe('~1.3×');
  });
});
