// RoomEngine over CPU reference engines: the room's one multi-device pipeline. Split rooms give the tokens
// of one engine holding everything, prefill micro-chunks do not change them, and stages that do not cover
// the layers in order are refused.
import { describe, expect, it } from 'vitest';
import { runTokens, type DecodeRequest, type LayerEngine, type LayerRange, type TokenConstraint } from '../../../src/model/engine-types.ts';
import type { Constraint } from '../../../src/model/generate-types.ts';
import { allowOnly } from '../../../src/model/sampler.ts';
import type { Drafter } from '../../../src/model/speculative/types.ts';
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
const room = (host: LayerEngine, stages: LayerEngine[], microChunk?: number | 'auto'): RoomEngine =>
  new RoomEngine(host, stages, { numLayers, hiddenSize, ...(microChunk === undefined ? {} : { microChunk }) });
const single = async (prompt: number[], n: number): Promise<number[]> =>
  (await new Generator(new ReferenceEngine(weights, { ctx }), { ctx }).generate(prompt, greedy(n))).ids;

describe('RoomEngine: the room as one engine', () => {
  for (const microChunk of [0, 4, 16, 'auto'] as const) {
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

  it('a fed token goes through the stages of a split room, and to the host engine\'s decode whole in a room of one', async () => {
    const calls: string[] = [];
    const spy = (name: string, e: ReferenceEngine): LayerEngine => Object.assign(Object.create(e) as LayerEngine, {
      runLayers: (r: LayerRange, start: number, h: Float32Array) => { calls.push(`${name}.runLayers`); return e.runLayers(r, start, h); },
      // the decode calls that feed a token (the one-call decode step); the first token's pick feeds none
      decode: (req: DecodeRequest) => { if (req.tokens) calls.push(`${name}.decodeToken`); return e.decode(req); },
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

describe('RoomEngine: speculative decoding and the host running ahead', () => {
  const repetitive = [...sys, ...user1, ...sys.slice(0, 6), ...user2, ...sys.slice(0, 5)];
  const lookup = async () => (await import('../../../src/model/speculative/prompt-lookup.ts')).PromptLookupDrafter;
  const splits: [string, () => { host: ReferenceEngine; stages: ReferenceEngine[] }][] = [
    ['1 device', () => { const h = new ReferenceEngine(weights, { ctx }); return { host: h, stages: [h] }; }],
    ['2 devices', () => { const h = part(0, 1, true); return { host: h, stages: [h, part(1, 3)] }; }],
    ['3 devices', () => { const h = part(0, 1, true); return { host: h, stages: [h, part(1, 2), part(2, 3)] }; }],
  ];
  for (const [name, make] of splits) {
    it(`${name}: greedy and seeded sampling with prompt lookup give plain decoding's tokens and caches`, async () => {
      const Drafter = await lookup();
      for (const sampling of [{ temperature: 0 }, { temperature: 0.8, topK: 8, seed: 3 }]) {
        const plain = make();
        const a = await new Generator(room(plain.host, plain.stages), { ctx }).generate(repetitive, { maxNewTokens: 40, sampling });
        const spec = make();
        const b = await new Generator(room(spec.host, spec.stages), { ctx }).generate(repetitive, { maxNewTokens: 40, sampling, speculate: { drafter: new Drafter() } });
        expect(b.ids).toEqual(a.ids);
        expect(b.ids).toEqual((await new Generator(new ReferenceEngine(weights, { ctx }), { ctx }).generate(repetitive, { maxNewTokens: 40, sampling })).ids);
        // Drafts were kept and drafts were rejected (so the caches below were cut back on every device).
        expect(b.stats.accepted).toBeGreaterThan(0);
        expect(b.stats.drafted).toBeGreaterThan(b.stats.accepted!);
        expect(b.stats.passes).toBeLessThan(39);
        // The KV after every rejection is plain decoding's, on every device.
        spec.stages.forEach((s, i) => {
          expect(s.kvLength()).toBe(plain.stages[i]!.kvLength());
          for (let l = s.range[0]; l < s.range[1]; l++) expect(s.cachedKv(l)).toEqual(plain.stages[i]!.cachedKv(l));
        });
      }
    });
  }

  it('a speculative pass crosses each guest once (its rows are not split into micro-chunks)', async () => {
    const { host, stages } = splits[1]![1]();
    const guest = stages[1]!;
    let calls = 0;
    const counting = Object.assign(Object.create(guest) as ReferenceEngine, {
      runLayers: (...a: Parameters<ReferenceEngine['runLayers']>) => { if (a[1] >= repetitive.length) calls++; return guest.runLayers(...a); },
    });
    const Drafter = await lookup();
    const r = await new Generator(room(host, [host, counting]), { ctx }).generate(repetitive, { maxNewTokens: 40, speculate: { drafter: new Drafter() } });
    expect(r.stats.accepted).toBeGreaterThan(0);
    expect(calls).toBe(r.stats.passes!);              // after the prompt: one call per pass, plain steps included
  });

  it('2 and 3 devices under a grammar: drafts checked under the lookahead masks, plain decoding\'s tokens and overrules', async () => {
    const V = weights.config.vocabSize;
    const mask = (i: number): TokenConstraint => allowOnly(Array.from({ length: V }, (_, id) => id).filter((id) => id % 3 !== i % 3), V);
    let overruled = 0;
    const grammar = (): Constraint => {
      const c: Constraint = (soFar) => ({ ...mask(soFar.length), overruled: () => { overruled++; } });
      c.lookahead = (soFar, draft) => draft.map((_, i) => mask(soFar.length + i + 1));
      return c;
    };
    const prompt = [...sys, ...user1];
    const plain = await new Generator(new ReferenceEngine(weights, { ctx }), { ctx }).generate(prompt, { maxNewTokens: 24, constraint: grammar() });
    const plainOverruled = overruled;
    expect(plainOverruled).toBeGreaterThan(0);
    for (const make of [splits[1]![1], splits[2]![1]]) {
      const { host, stages } = make();
      overruled = 0;
      const sent: number[] = [];
      // The right answer with every third token wrong: some drafts pass the mask and are rejected by the model,
      // some are cut by the mask before they are sent.
      const drafter: Drafter = { name: 'test', draft: ({ context, max }) => {
        const at = context.length - prompt.length;
        const tokens = plain.ids.slice(at, at + max).map((t, i) => (i === 2 ? (t + 1) % V : t));
        return { tokens };
      } };
      const spy = Object.assign(Object.create(host) as ReferenceEngine, {
        runTokens: (ids: number[], range: LayerRange, start: number) => { if (ids.length > 1 && start >= prompt.length) sent.push(...ids.slice(1).map((id, i) => (mask(start - prompt.length + 1 + i).bits![id >>> 5]! >>> (id & 31)) & 1)); return runTokens(host, ids, range, start); },
      });
      const r = await new Generator(room(spy, stages.map((s) => (s === host ? spy : s))), { ctx }).generate(prompt, { maxNewTokens: 24, constraint: grammar(), speculate: { drafter } });
      expect(r.ids).toEqual(plain.ids);
      expect(overruled).toBe(plainOverruled);
      expect(r.stats.accepted).toBeGreaterThan(5);
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.every((allowed) => allowed === 1)).toBe(true);    // no drafted token the grammar forbids was sent
    }
  });

  it('a split room samples ahead, a room of one does not; speculating, the host runs its layers once a pass and never ahead', async () => {
    const all = part(0, 3);
    expect(room(part(0, 0, true), [all]).samplesAhead).toBe(false);   // the host holds no layers
    const one = new ReferenceEngine(weights, { ctx });
    expect(room(one, [one]).samplesAhead).toBe(false);
    const host = part(0, 1, true);
    const calls: string[] = [];
    const spyHost = Object.assign(Object.create(host) as ReferenceEngine, {
      sampleAndRun: (...a: Parameters<ReferenceEngine['sampleAndRun']>) => { calls.push('sampleAndRun'); return host.sampleAndRun(...a); },
      runLayers: (...a: Parameters<ReferenceEngine['runLayers']>) => { calls.push('runLayers'); return host.runLayers(...a); },
      runTokens: (ids: number[], range: LayerRange, start: number) => { calls.push(`runTokens ${ids.length}`); return runTokens(host, ids, range, start); },
    });
    const guest = part(1, 3);
    const r0 = room(spyHost, [spyHost, guest], 0);
    expect(r0.samplesAhead).toBe(true);
    const prompt = [...sys, ...user1];
    const expected = await single(prompt, 16);
    // The right 2 tokens drafted at answer token 3 only.
    const drafter: Drafter = { name: 'once', draft: ({ context }) => {
      const at = context.length - prompt.length;
      return { tokens: at === 3 ? expected.slice(at, at + 2) : [] };
    } };
    const r = await new Generator(r0, { ctx }).generate(prompt, { maxNewTokens: 16, speculate: { drafter } });
    expect(r.ids).toEqual(expected);
    expect(r.stats).toMatchObject({ drafted: 2, accepted: 2, passes: 13 });
    // The prompt; the first token picked by the head alone (no share of the next token run ahead); then
    // passes only: two of one row, the drafted one of three rows, one-row passes again. Never a share of
    // the host's layers run and dropped.
    expect(calls).toEqual(['runTokens 17', 'runTokens 1', 'runTokens 1', 'runTokens 3', ...Array<string>(10).fill('runTokens 1')]);
  });

  it('the host picks and runs its own layers in one call; the prepared token is dropped when the answer ends', async () => {
    const host = part(0, 1, true);
    const calls: string[] = [];
    const spyHost = Object.assign(Object.create(host) as ReferenceEngine, {
      sampleAndRun: (...a: Parameters<ReferenceEngine['sampleAndRun']>) => { calls.push('sampleAndRun'); return host.sampleAndRun(...a); },
      runLayers: (...a: Parameters<ReferenceEngine['runLayers']>) => { calls.push('runLayers'); return host.runLayers(...a); },
    });
    const guest = part(1, 3);
    const prompt = [...sys, ...user1];
    const g = new Generator(room(spyHost, [spyHost, guest], 0), { ctx });
    const r = await g.generate(prompt, greedy(6));
    expect(r.ids).toEqual(await single(prompt, 6));
    expect(calls).toEqual(['runLayers', ...Array<string>(6).fill('sampleAndRun')]); // the prompt, then one fused call per token
    expect([host.kvLength(), guest.kvLength()]).toEqual([prompt.length + 5, prompt.length + 5]);  // the 7th token's run was cut
    const again = await g.generate([...prompt, ...r.ids], greedy(3));
    expect(again.ids).toEqual(await single([...prompt, ...r.ids], 3));
  });
});
