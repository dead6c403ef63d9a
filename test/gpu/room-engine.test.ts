// The room's RoomEngine over WebGPU engines: a room of one decodes through its engine's fused
// decodeToken (one submit per token, not embed + runLayers + sample = three read-backs), and a split room
// decodes through the stages; both give exactly the reference's greedy tokens.
import { beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { createWebGPUEngine } from '../../src/gpu/create-engine.ts';
import { Generator } from '../../src/model/generator.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import type { ModelWeights } from '../../src/model/types.ts';
import { RoomEngine } from '../../src/room/room-engine.ts';
import { loadTiny, testDevice, tinyModelFolder } from './helpers.ts';

const CTX = 64;
const N = 12;
const PROMPT = [9707, 11, 1879, 0, 3555, 374, 264, 1273];

describe('RoomEngine over WebGPU engines', () => {
  let dir: string;
  let weights: ModelWeights;
  let expected: number[];
  beforeAll(async () => {
    dir = path.join(await tinyModelFolder({ layers: 4, seed: 7 }), 'safetensors');
    weights = await loadTiny(dir);
    expected = (await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(PROMPT, { maxNewTokens: N })).ids;
    expect(expected).toHaveLength(N);
  });

  it('a room of one: the reference tokens, one submit per decode token', async () => {
    const device = await testDevice(false);
    const engine = await createWebGPUEngine(weights, { device, ctx: CTX, useF16: false });
    try {
      const room = new RoomEngine(engine, [engine], { numLayers: 4, hiddenSize: weights.config.hiddenSize });
      const before = engine.stats().submits;
      const r = await new Generator(room, { ctx: CTX }).generate(PROMPT, { maxNewTokens: N });
      expect(r.ids).toEqual(expected);
      expect(engine.stats().last).toMatchObject({ op: 'decodeToken', submits: 1 });
      // prefill: embed + runLayers + sample; then one submit for each of the N − 1 fed-back tokens
      expect(engine.stats().submits - before).toBe(3 + (N - 1));
    } finally {
      await engine.dispose();
      device.destroy();
    }
  });

  it('a split room (host [0, 2) + embedding + head, a second engine [2, 4)): the reference tokens', async () => {
    const device = await testDevice(false);
    const hostWeights = await loadTiny(dir, { layers: [0, 2], embedding: true, head: true });
    const stageWeights = await loadTiny(dir, { layers: [2, 4] });
    const host = await createWebGPUEngine(hostWeights, { device, ctx: CTX, useF16: false });
    const stage = await createWebGPUEngine(stageWeights, { device, ctx: CTX, useF16: false });
    try {
      const room = new RoomEngine(host, [host, stage], { numLayers: 4, hiddenSize: weights.config.hiddenSize });
      const r = await new Generator(room, { ctx: CTX }).generate(PROMPT, { maxNewTokens: N });
      expect(r.ids).toEqual(expected);
      expect(host.stats().last.op).toBe('sample');
      expect(stage.kvLength()).toBe(PROMPT.length + N - 1);
    } finally {
      await host.dispose();
      await stage.dispose();
      device.destroy();
    }
  });
});
