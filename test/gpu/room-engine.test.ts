// The room's RoomEngine over WebGPU engines: a room of one decodes through its engine's fused
// decodeToken (one submit per token, not embed + runLayers + sample = three read-backs), and a split room
// decodes through the stages with one read-back per token on the host (sampleAndRun), greedy and sampled
// (the pick on the device, checked by the reference sampler, redone when they differ); both give exactly
// the reference's tokens, with speculative decoding too.
import { beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { createWebGPUEngine } from '../../src/gpu/create-engine.ts';
import { Generator } from '../../src/model/generator.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import type { ModelWeights } from '../../src/model/types.ts';
import { RoomEngine } from '../../src/room/room-engine.ts';
import type { WebGPUEngine } from '../../src/gpu/engine.ts';
import type { Constraint } from '../../src/model/generate-types.ts';
import { allowOnly } from '../../src/model/sampler.ts';
import type { Drafter } from '../../src/model/speculative/types.ts';
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
      // prefill: embedding + layers in one submit (runTokens), then sample; then one submit for each of
      // the N − 1 fed-back tokens, and one for the token after the last, which greedy decoding submits
      // ahead (before the last read-back returns) and the answer's end drops
      expect(engine.stats().submits - before).toBe(2 + (N - 1) + 1);
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
      expect(host.stats().last.op).toBe('sampleAndRun');
      expect(stage.kvLength()).toBe(PROMPT.length + N - 1);
    } finally {
      await host.dispose();
      await stage.dispose();
      device.destroy();
    }
  });

  /** Host [0, 2) with embedding and head, and a second engine [2, 4), on one device. */
  async function split(): Promise<{ host: WebGPUEngine; stage: WebGPUEngine; room: RoomEngine; done(): Promise<void> }> {
    const device = await testDevice(false);
    const host = await createWebGPUEngine(await loadTiny(dir, { layers: [0, 2], embedding: true, head: true }), { device, ctx: CTX, useF16: false });
    const stage = await createWebGPUEngine(await loadTiny(dir, { layers: [2, 4] }), { device, ctx: CTX, useF16: false });
    const room = new RoomEngine(host, [host, stage], { numLayers: 4, hiddenSize: weights.config.hiddenSize });
    return { host, stage, room, done: async () => { await host.dispose(); await stage.dispose(); device.destroy(); } };
  }

  it('a split room: the host reads back once per decode token (pick + its own layers in one submit)', async () => {
    const { host, stage, room, done } = await split();
    try {
      const before = host.stats().readbacks;
      const r = await new Generator(room, { ctx: CTX }).generate(PROMPT, { maxNewTokens: N });
      expect(r.ids).toEqual(expected);
      // one read-back for the prompt (embedding + its layers fused), then one per token picked
      expect(host.stats().readbacks - before).toBe(1 + N);
      expect(host.stats().last.op).toBe('sampleAndRun');
      // the run ahead for the token after the last one was cut: both caches hold what plain decoding holds
      expect([host.kvLength(), stage.kvLength()]).toEqual([PROMPT.length + N - 1, PROMPT.length + N - 1]);
      const more = await new Generator(room, { ctx: CTX }).generate([...PROMPT, ...r.ids], { maxNewTokens: 4 });
      const reference = await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate([...PROMPT, ...r.ids], { maxNewTokens: 4 });
      expect(more.ids).toEqual(reference.ids);
    } finally {
      await done();
    }
  });

  // The agent's prose sampling (src/agent/engine-backend.ts): the host picks on the device (sample_pick)
  // and the reference sampler checks the pick on the read-back candidates.
  const SAMPLED = { temperature: 0.7, topP: 0.8, topK: 20, seed: 1234 };

  it('a split room sampling (T 0.7, top-p 0.8, top-k 20): one device\'s sampled tokens, one host read-back per decode token', async () => {
    const device = await testDevice(false);
    const whole = await createWebGPUEngine(weights, { device, ctx: CTX, useF16: false });
    const { host, stage, room, done } = await split();
    try {
      const single = await new Generator(new RoomEngine(whole, [whole], { numLayers: 4, hiddenSize: weights.config.hiddenSize }), { ctx: CTX })
        .generate(PROMPT, { maxNewTokens: N, sampling: SAMPLED });
      const reference = await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(PROMPT, { maxNewTokens: N, sampling: SAMPLED });
      expect(single.ids).toEqual(reference.ids);
      expect(single.ids).not.toEqual(expected);                     // it samples: not the greedy answer
      const before = host.stats();
      const r = await new Generator(room, { ctx: CTX }).generate(PROMPT, { maxNewTokens: N, sampling: SAMPLED });
      expect(r.ids).toEqual(single.ids);
      expect(host.stats().pickRedos - before.pickRedos).toBe(0);
      // one read-back for the prompt (embedding + its layers fused), then one per token picked
      expect(host.stats().readbacks - before.readbacks).toBe(1 + N);
      expect(host.stats().last).toMatchObject({ op: 'sampleAndRun', submits: 1 });
      expect([host.kvLength(), stage.kvLength()]).toEqual([PROMPT.length + N - 1, PROMPT.length + N - 1]);
    } finally {
      await whole.dispose();
      device.destroy();
      await done();
    }
  });

  it('a split room whose device picks are skewed off the reference\'s: each redone (its layers run again on the reference\'s token), the same tokens and caches', async () => {
    const reference = await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(PROMPT, { maxNewTokens: N, sampling: SAMPLED });
    const { host, stage, room, done } = await split();
    try {
      host.skewDeviceUniform = (u) => (u + 0.5) % 1;               // test seam: the device draws another u
      const before = host.stats();
      const g = new Generator(room, { ctx: CTX });
      const r = await g.generate(PROMPT, { maxNewTokens: N, sampling: SAMPLED });
      expect(r.ids).toEqual(reference.ids);
      const redos = host.stats().pickRedos - before.pickRedos;
      expect(redos).toBeGreaterThan(0);
      expect(host.stats().readbacks - before.readbacks).toBe(1 + N + redos);
      // the redone positions hold the reference token's K/V: the answer continues as the reference's
      host.skewDeviceUniform = undefined;
      expect([host.kvLength(), stage.kvLength()]).toEqual([PROMPT.length + N - 1, PROMPT.length + N - 1]);
      const more = await g.generate([...PROMPT, ...r.ids], { maxNewTokens: 4 });
      const plain = await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate([...PROMPT, ...r.ids], { maxNewTokens: 4 });
      expect(more.stats.promptReused).toBe(PROMPT.length + N - 1);
      expect(more.ids).toEqual(plain.ids);
    } finally {
      await done();
    }
  });

  it.each([
    ['greedy', undefined], ['sampled (T 0.7, top-p 0.8, top-k 20; 41 ids allowed)', SAMPLED],
  ] as const)('a split room under a mask that overrules the model, %s: the reference\'s tokens and the same overrules', async (_name, sampling) => {
    const V = weights.config.vocabSize;
    let overruled = 0;
    const ids = Array.from({ length: V }, (_, id) => id);
    const allowed = allowOnly(sampling ? ids.slice(1000, 1041) : ids.filter((id) => !expected.includes(id)), V);
    const constraint: Constraint = () => ({ ...allowed, overruled: () => { overruled++; } });
    const opts = { maxNewTokens: 6, constraint, ...(sampling ? { sampling } : {}) };
    const reference = await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(PROMPT, opts);
    const referenceOverruled = overruled;
    expect(referenceOverruled).toBeGreaterThan(0);
    const { host, room, done } = await split();
    try {
      overruled = 0;
      const before = host.stats().readbacks;
      const r = await new Generator(room, { ctx: CTX }).generate(PROMPT, opts);
      expect(r.ids).toEqual(reference.ids);
      expect(overruled).toBe(referenceOverruled);
      expect(host.stats().readbacks - before).toBe(1 + 6);
    } finally {
      await done();
    }
  });

  it('speculative decoding through WebGPU stages (1 and 2 devices): the reference tokens; rejected drafts cut from every cache', async () => {
    // The right answer with its third drafted token wrong: each pass keeps two, rejects one.
    const drafter: Drafter = { name: 'test', draft: ({ context, max }) => {
      const at = context.length - PROMPT.length;
      return { tokens: expected.slice(at, at + max).map((t, i) => (i === 2 ? (t + 1) % weights.config.vocabSize : t)) };
    } };
    const device = await testDevice(false);
    const whole = await createWebGPUEngine(weights, { device, ctx: CTX, useF16: false });
    const { host, stage, room, done } = await split();
    try {
      for (const [engine, caches] of [[new RoomEngine(whole, [whole], { numLayers: 4, hiddenSize: weights.config.hiddenSize }), [whole]], [room, [host, stage]]] as const) {
        const g = new Generator(engine, { ctx: CTX });
        const r = await g.generate(PROMPT, { maxNewTokens: N, speculate: { drafter } });
        expect(r.ids).toEqual(expected);
        expect(r.stats.accepted).toBeGreaterThan(N / 3);
        expect(r.stats.drafted).toBeGreaterThan(r.stats.accepted!);
        for (const c of caches) expect(c.kvLength()).toBe(PROMPT.length + N - 1);
        // what the caches hold is plain decoding's: the answer continues as the reference's does
        const more = await g.generate([...PROMPT, ...r.ids], { maxNewTokens: 4 });
        const reference = await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate([...PROMPT, ...r.ids], { maxNewTokens: 4 });
        expect(more.ids).toEqual(reference.ids);
      }
    } finally {
      await whole.dispose();
      device.destroy();
      await done();
    }
  });
});
