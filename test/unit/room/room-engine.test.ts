// RoomEngine over CPU reference engines: the room's one multi-device pipeline. Split rooms give the tokens
// of one engine holding everything, prefill micro-chunks do not change them, and stages that do not cover
// the layers in order are refused.
import { describe, expect, it } from 'vitest';
import type { LayerEngine, LayerRange } from '../../../src/model/engine-types.ts';
import { Generator } from '../../../src/model/generator.ts';
import type { GenerateOptions } from '../../../src/model/generate-types.ts';
import { PipelineError } from '../../../src/model/engine-errors.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { RoomEngine } from '../../../src/room/room-engine.ts';
import { syntheticWeights, weightsSubset } from '../model/reference/synthetic-model.ts';

const weights = syntheticWeights({ layers: 3, seed: 5 });
const { hiddenSize, numLayers } = weights.config;
const ctx = 128;
const sys = [1, 9, 4, 22, 61, 7, 7, 30, 2, 15, 80, 33];
const user1 = [40, 41, 3, 90, 11];
const user2 = [70, 5, 5, 12, 64, 8];
const greedy = (max: number): GenerateOptions => ({ maxNewTokens: max });
const part = (a: number, b: number, io = false): ReferenceEngine =>
  new ReferenceEngine(weightsSubset(weights, a, b, { embedding: io, head: io }), { ctx, range: [a, b] });
const room = (host: LayerEngine, stages: LayerEngine[], microChunk?: number): RoomEngine =>
  new RoomEngine(host, stages, { numLayers, hiddenSize, ...(microChunk === undefined ? {} : { microChunk }) });
const single = async (prompt: number[], n: number): Promise<number[]> =>
  (await new Generator(new ReferenceEngine(weights, { ctx }), { ctx }).generate(prompt, greedy(n))).ids;

describe('RoomEngine: the room as one engine', () => {
  for (const microChunk of [0, 4, 16]) {
    it(`stages [0,1) (the host), [1,2), [2,3) give the tokens of one engine (micro-chunks of ${microChunk || 'the whole batch'})`, async () => {
      const host = part(0, 1, true);
      const stages = [host, part(1, 2), part(2, 3)];
      const prompt = [...sys, ...user2];
      const r = await new Generator(room(host, stages, microChunk), { ctx }).generate(prompt, greedy(8));
      expect(r.ids).toEqual(await single(prompt, 8));
      expect(stages.map((s) => s.kvLength())).toEqual([prompt.length + 7, prompt.length + 7, prompt.length + 7]);
    });
  }

  it('a host holding only embedding and head (no layers) around a device holding all layers', async () => {
    const host = part(0, 0, true);
    const device = part(0, 3);
    expect(host.range).toEqual([0, 0]);
    const g = new Generator(room(host, [device]), { ctx });
    const p1 = [...sys, ...user1];
    const a1 = await g.generate(p1, greedy(5));
    expect(a1.ids).toEqual(await single(p1, 5));
    const r = await g.generate([...p1, ...a1.ids, ...user2], greedy(3));
    expect(r.stats.promptReused).toBe(p1.length + 4);
    expect(r.ids).toEqual(await single([...p1, ...a1.ids, ...user2], 3));
  });

  it('decodeToken goes through the stages of a split room and to the host engine in a room of one', async () => {
    const calls: string[] = [];
    const spy = (name: string, e: ReferenceEngine): LayerEngine => Object.assign(Object.create(e) as LayerEngine, {
      runLayers: (r: LayerRange, start: number, h: Float32Array) => { calls.push(`${name}.runLayers`); return e.runLayers(r, start, h); },
      decodeToken: (...args: Parameters<LayerEngine['decodeToken']>) => { calls.push(`${name}.decodeToken`); return e.decodeToken(...args); },
    });
    const prompt = [...sys, ...user1];
    const host = spy('host', part(0, 2, true));
    const split = await new Generator(room(host, [host, spy('guest', part(2, 3))], 0), { ctx }).generate(prompt, greedy(3));
    expect(split.ids).toEqual(await single(prompt, 3));
    expect(calls).not.toContain('host.decodeToken');
    expect(calls.filter((c) => c === 'guest.runLayers')).toHaveLength(3);   // the prompt in one batch, then two fed tokens
    calls.length = 0;
    const alone = spy('host', new ReferenceEngine(weights, { ctx }));
    const one = await new Generator(room(alone, [alone], 0), { ctx }).generate(prompt, greedy(3));
    expect(one.ids).toEqual(split.ids);
    expect(calls).toEqual(['host.runLayers', 'host.decodeToken', 'host.decodeToken']);
  });

  it('stages that do not cover the layers in order, or a host without embedding and head, are refused with PipelineError', () => {
    const host = part(0, 1, true);
    expect(() => room(host, [host, part(2, 3)])).toThrow(/stage \[2,3\] does not continue the pipeline at layer 1/);
    expect(() => room(host, [host])).toThrow(PipelineError);
    expect(() => room(host, [host])).toThrow(/cover layers \[0, 1\) of 3/);
    expect(() => room(host, [part(1, 3)])).toThrow(/does not continue the pipeline at layer 0/);
    expect(() => room(host, [])).toThrow(/cover layers \[0, 0\) of 3/);
    expect(() => room(part(0, 3), [part(0, 3)])).toThrow(/must hold the embedding and the head/);
  });
});
