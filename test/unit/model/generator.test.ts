import { describe, expect, it } from 'vitest';
import type { LayerEngine, LayerRange } from '../../../src/model/engine-types.ts';
import { Generator } from '../../../src/model/generator.ts';
import type { GenerateOptions } from '../../../src/model/generate-types.ts';
import { EngineError, EngineUsageError } from '../../../src/model/engine-errors.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { allowOnly, argmax } from '../../../src/model/sampler.ts';
import { syntheticWeights, weightsSubset } from './reference/synthetic-model.ts';

const weights = syntheticWeights({ layers: 3, seed: 5 });
const L = weights.config.numLayers;
const sys = [1, 9, 4, 22, 61, 7, 7, 30, 2, 15, 80, 33];    // "system prompt + tools": pinAt = 12
const user1 = [40, 41, 3, 90, 11];
const user2 = [70, 5, 5, 12, 64, 8];
const ctx = 128;

const fresh = (): Generator => new Generator(new ReferenceEngine(weights, { ctx }), { ctx });
const greedy = (max: number, extra: Partial<GenerateOptions> = {}): GenerateOptions => ({ maxNewTokens: max, ...extra });

/** Greedy tokens by hand on a fresh engine: the definition the Generator must meet. */
async function handLoop(prompt: number[], count: number): Promise<number[]> {
  const e = new ReferenceEngine(weights, { ctx });
  let hidden = await e.runLayers([0, L], 0, await e.embed(prompt));
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const id = argmax(await e.logits(hidden));
    out.push(id);
    hidden = await e.runLayers([0, L], prompt.length + i, await e.embed([id]));
  }
  return out;
}

describe('Generator: one engine', () => {
  it('greedy tokens equal a hand-driven loop; stats count the prompt and the answer', async () => {
    const prompt = [...sys, ...user1];
    const r = await fresh().generate(prompt, greedy(10));
    expect(r.finish).toBe('cap');
    expect(r.ids).toEqual(await handLoop(prompt, 10));
    expect(new Set(r.ids).size).toBeGreaterThan(3);
    expect(r.stats).toMatchObject({ promptTokens: 17, promptComputed: 17, promptReused: 0, generated: 10 });
    expect(r.stats.seconds).toBeGreaterThan(0);
    expect(r.stats.prefillTokensPerSecond).toBeGreaterThan(0);
    expect(r.stats.decodeTokensPerSecond).toBeGreaterThan(0);
  });

  it('prefill in chunks gives the same tokens, and chunks break at the pinned position', async () => {
    const engine = new ReferenceEngine(weights, { ctx });
    const calls: [number, number][] = [];
    const recording: LayerEngine = Object.assign(Object.create(engine) as LayerEngine, {
      runLayers: (range: LayerRange, start: number, hidden: Float32Array) => {
        calls.push([start, hidden.length / weights.config.hiddenSize]);
        return engine.runLayers(range, start, hidden);
      },
    });
    const prompt = [...sys, ...user1];
    const r = await new Generator(recording, { ctx, prefillChunk: 5 }).generate(prompt, greedy(4, { pinAt: 12 }));
    expect(r.ids).toEqual(await handLoop(prompt, 4));
    expect(calls.slice(0, 4)).toEqual([[0, 5], [5, 5], [10, 2], [12, 5]]);
  });

  it('an engine without the embedding or the head is refused, naming what it lacks', () => {
    const front = new ReferenceEngine(weightsSubset(weights, 0, 1, { embedding: true }));
    const back = new ReferenceEngine(weightsSubset(weights, 2, 3, { head: true }));
    expect(() => new Generator(front, { ctx })).toThrow(EngineUsageError);
    expect(() => new Generator(front, { ctx })).toThrow(/layers \[0,1\], no head/);
    expect(() => new Generator(back, { ctx })).toThrow(/holds layers \[2,3\]/);
  });
});

describe('Generator: prefix reuse and checkpoints', () => {
  it('restoring the pinned checkpoint with a different suffix equals a fresh run, computing only the suffix', async () => {
    const g = fresh();
    await g.generate([...sys, ...user1], greedy(6, { pinAt: sys.length }));
    expect(g.checkpoints.pinned).toBe(sys.length);
    const prompt = [...sys, ...user2];
    const again = await g.generate(prompt, greedy(8, { pinAt: sys.length }));
    expect(again.stats).toMatchObject({ promptReused: sys.length, promptComputed: user2.length });
    expect(again.ids).toEqual((await fresh().generate(prompt, greedy(8))).ids);
  });

  it('pin(position) marks the pinned checkpoint for this and later prompts, like pinAt', async () => {
    const g = fresh();
    await g.generate([...sys, ...user1], greedy(3));
    expect(g.checkpoints.pinned).toBeUndefined();
    g.pin(sys.length);
    expect(g.checkpoints.pinned).toBe(sys.length);
    await g.generate([...sys, ...user2], greedy(3));
    const r = await g.generate([...sys, ...user1], greedy(3));
    expect(r.stats.promptReused).toBe(sys.length);
    expect(() => g.pin(-1)).toThrow(/not a position/);
  });

  it('a prompt that extends the cache reuses everything cached (the live end)', async () => {
    const g = fresh();
    const p1 = [...sys, ...user1];
    const a1 = await g.generate(p1, greedy(5));
    const p2 = [...p1, ...a1.ids, ...user2];
    const r = await g.generate(p2, greedy(6));
    expect(r.stats.promptReused).toBe(p1.length + a1.ids.length - 1); // the last answer token was never fed
    expect(r.ids).toEqual((await fresh().generate(p2, greedy(6))).ids);
  });

  it('an answer rewritten in the history restores the answer checkpoint (ckpt = N)', async () => {
    const g = new Generator(new ReferenceEngine(weights, { ctx }), { ctx, ckpt: 2 });
    const p1 = [...sys, ...user1];
    const a1 = await g.generate(p1, greedy(5, { pinAt: sys.length }));
    expect(g.checkpoints.answers).toEqual([p1.length]);
    const rewritten = [(a1.ids[0]! + 1) % 97, ...a1.ids.slice(1)]; // e.g. thinking stripped from the history
    const p2 = [...p1, ...rewritten, ...user2];
    const r = await g.generate(p2, greedy(6, { pinAt: sys.length }));
    expect(r.stats).toMatchObject({ promptReused: p1.length, promptComputed: p2.length - p1.length });
    expect(r.ids).toEqual((await fresh().generate(p2, greedy(6))).ids);
    expect(g.checkpoints.answers).toEqual([p1.length, p2.length]);
  });

  it('ckpt = 1 keeps only the latest answer checkpoint; the pinned one is never counted or evicted', async () => {
    const run = async (ckpt: number): Promise<number> => {
      const g = new Generator(new ReferenceEngine(weights, { ctx }), { ctx, ckpt });
      const p1 = [...sys, ...user1];
      const a1 = await g.generate(p1, greedy(4, { pinAt: sys.length }));
      await g.generate([...p1, ...a1.ids, ...user2], greedy(4, { pinAt: sys.length }));
      expect(g.checkpoints.pinned).toBe(sys.length);
      expect(g.checkpoints.answers.length).toBe(Math.min(ckpt, 2));
      const p3 = [...p1, 3, 3, 3];  // diverges right after the first prompt
      const r = await g.generate(p3, greedy(4, { pinAt: sys.length }));
      expect(r.ids).toEqual((await fresh().generate(p3, greedy(4))).ids);
      return r.stats.promptReused;
    };
    expect(await run(2)).toBe(sys.length + user1.length);
    expect(await run(1)).toBe(sys.length);
  });

  it('ckpt = 0: no checkpoints (pinned included); only the live end is reused', async () => {
    const g = new Generator(new ReferenceEngine(weights, { ctx }), { ctx, ckpt: 0 });
    const p1 = [...sys, ...user1];
    const a1 = await g.generate(p1, greedy(4, { pinAt: sys.length }));
    expect(g.checkpoints).toEqual({ answers: [] });
    const extended = [...p1, ...a1.ids, ...user2];
    expect((await g.generate(extended, greedy(3))).stats.promptReused).toBe(p1.length + 3);
    const diverged = [...sys, ...user2];
    const r = await g.generate(diverged, greedy(5, { pinAt: sys.length }));
    expect(r.stats).toMatchObject({ promptReused: 0, promptComputed: diverged.length });
    expect(r.ids).toEqual((await fresh().generate(diverged, greedy(5))).ids);
  });

  it('the same prompt again reuses all of it from its answer checkpoint and gives the same tokens', async () => {
    const g = fresh();
    const p = [...sys, ...user1];
    const first = await g.generate(p, greedy(6));
    const second = await g.generate(p, greedy(6));
    expect(second.stats).toMatchObject({ promptReused: p.length, promptComputed: 0 });
    expect(second.ids).toEqual(first.ids);
  });

  it('seeded sampling gives the same tokens cached or fresh', async () => {
    const sampling = { temperature: 1, topK: 20, seed: 77 };
    const g = fresh();
    await g.generate([...sys, ...user1], greedy(5, { pinAt: sys.length, sampling }));
    const prompt = [...sys, ...user2];
    const cached = await g.generate(prompt, greedy(10, { pinAt: sys.length, sampling }));
    const scratch = await fresh().generate(prompt, greedy(10, { sampling }));
    expect(cached.stats.promptReused).toBe(sys.length);
    expect(cached.ids).toEqual(scratch.ids);
    expect(cached.stats.seed).toBe(77);
    const other = await fresh().generate(prompt, greedy(10, { sampling: { ...sampling, seed: 78 } }));
    expect(other.ids).not.toEqual(scratch.ids);
  });

  it('follows the engine when its cache was truncated behind the Generator\'s back', async () => {
    const engine = new ReferenceEngine(weights, { ctx });
    const g = new Generator(engine, { ctx });
    const p = [...sys, ...user1];
    await g.generate(p, greedy(3));
    await engine.truncate(5);
    const r = await g.generate([...p, 9], greedy(3));
    expect(r.stats.promptReused).toBe(5);
    expect(r.ids).toEqual((await fresh().generate([...p, 9], greedy(3))).ids);
  });
});

describe('Generator: finish reasons', () => {
  const prompt = [...sys, ...user1];

  it('stop token: the answer ends before it and reports it', async () => {
    const ref = await handLoop(prompt, 8);
    const stop = ref[3]!;
    const cut = ref.indexOf(stop);
    const r = await fresh().generate(prompt, greedy(8, { stopTokens: [stop] }));
    expect(r).toMatchObject({ finish: 'stop-token', stopToken: stop, ids: ref.slice(0, cut) });
  });

  it('context full: stops when prompt + answer reach ctx; a prompt of ctx tokens computes nothing', async () => {
    const g = new Generator(new ReferenceEngine(weights, { ctx: 20 }), { ctx: 20 });
    const r = await g.generate(prompt, greedy(10));
    expect(r.finish).toBe('context');
    expect(r.ids.length).toBe(20 - prompt.length);
    const long = Array.from({ length: 20 }, (_, i) => i);
    const full = await g.generate(long, greedy(10));
    expect(full).toMatchObject({ finish: 'context', ids: [] });
    expect(full.stats.promptComputed).toBe(0);
  });

  it('stopped: an abort during generation ends it with the tokens so far', async () => {
    const ac = new AbortController();
    const seen: number[] = [];
    const r = await fresh().generate(prompt, greedy(10, { signal: ac.signal, onToken: (id, all) => { seen.push(id); if (all.length === 3) ac.abort(); } }));
    expect(r.finish).toBe('stopped');
    expect(r.ids).toEqual(seen);
    expect(r.ids.length).toBe(3);
    const before = new AbortController();
    before.abort();
    const none = await fresh().generate(prompt, greedy(10, { signal: before.signal }));
    expect(none).toMatchObject({ finish: 'stopped', ids: [] });
  });

  it('error: an engine failure is returned, not thrown, and the cache is forgotten', async () => {
    const engine = new ReferenceEngine(weights, { ctx });
    let calls = 0;
    const failing: LayerEngine = Object.assign(Object.create(engine) as LayerEngine, {
      runLayers: (range: LayerRange, start: number, hidden: Float32Array) => {
        if (++calls === 3) return Promise.reject(new EngineError('device lost'));
        return engine.runLayers(range, start, hidden);
      },
    });
    const g = new Generator(failing, { ctx });
    const r = await g.generate(prompt, greedy(10));
    expect(r.finish).toBe('error');
    expect(r.error?.message).toBe('device lost');
    expect(r.ids.length).toBe(2);
    expect(g.cachedTokens).toEqual([]);
    expect(engine.kvLength()).toBe(0);
    expect((await g.generate(prompt, greedy(3))).ids).toEqual(await handLoop(prompt, 3));
  });

  it('a failure outside the engines (a constraint allowing nothing) keeps the cache for the next prompt', async () => {
    const g = fresh();
    const r = await g.generate(prompt, greedy(5, { constraint: (so) => (so.length === 2 ? { bits: new Uint32Array(4) } : null) }));
    expect(r.finish).toBe('error');
    expect(r.error?.name).toBe('SamplingError');
    expect(r.ids.length).toBe(2);
    expect(g.cachedTokens).toEqual([...prompt, ...r.ids]);
    const next = await g.generate([...prompt, ...r.ids, 4], greedy(2));
    expect(next.stats.promptReused).toBe(prompt.length + 2);
  });

  it('bad arguments are an error result naming the problem; the cache is untouched', async () => {
    const g = fresh();
    await g.generate(prompt, greedy(2));
    const cached = g.cachedTokens.length;
    expect((await g.generate([], greedy(2))).error?.message).toMatch(/the prompt is empty/);
    expect((await g.generate([1.5], greedy(2))).error?.message).toMatch(/not a token id/);
    expect(g.cachedTokens.length).toBe(cached);
  });

  it('a constraint restricts every sampled token', async () => {
    const allowed = [3, 8, 50];
    const r = await fresh().generate(prompt, greedy(6, { constraint: () => allowOnly(allowed, 97) }));
    expect(r.ids.length).toBe(6);
    expect(r.ids.every((id) => allowed.includes(id))).toBe(true);
  });
});
