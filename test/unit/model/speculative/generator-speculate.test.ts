// Speculative decoding in the Generator on one CPU engine: the tokens are plain decoding's (greedy and
// seeded sampling, with and without a grammar), the cache after rejections is plain decoding's, and the
// stats count drafted, accepted and passes.
import { describe, expect, it } from 'vitest';
import { Generator } from '../../../../src/model/generator.ts';
import type { Constraint, GenerateOptions } from '../../../../src/model/generate-types.ts';
import type { DecodeRequest, TokenConstraint } from '../../../../src/model/engine-types.ts';
import { ReferenceEngine } from '../../../../src/model/reference/reference-engine.ts';
import { allowOnly } from '../../../../src/model/sampler.ts';
import { PromptLookupDrafter } from '../../../../src/model/speculative/prompt-lookup.ts';
import type { Drafter } from '../../../../src/model/speculative/types.ts';
import { syntheticWeights } from '../reference/synthetic-model.ts';

const weights = syntheticWeights({ layers: 3, seed: 5 });
const V = weights.config.vocabSize;
const ctx = 160;
// Repeats, so prompt lookup finds n-grams that the model does and does not continue.
const prompt = [1, 9, 4, 22, 61, 7, 7, 30, 2, 15, 80, 33, 1, 9, 4, 22, 40, 41, 3, 90, 11, 1, 9];

const engineOf = () => new ReferenceEngine(weights, { ctx });
const run = async (opts: GenerateOptions, engine = engineOf()) => ({ r: await new Generator(engine, { ctx }).generate(prompt, opts), engine });

/** Drafts exactly `answer` from where the context is (an oracle), or wrong tokens when `lie`. */
function oracle(answer: number[], lie = false): Drafter {
  return {
    name: lie ? 'liar' : 'oracle',
    draft: ({ context, max }) => {
      const at = context.length - prompt.length;       // answer tokens already in the context
      const next = answer.slice(at, at + max);
      return { tokens: lie ? next.map((t) => (t + 1) % V) : next };
    },
  };
}

function expectSameCache(a: ReferenceEngine, b: ReferenceEngine): void {
  expect(a.kvLength()).toBe(b.kvLength());
  for (let l = 0; l < weights.config.numLayers; l++) {
    const x = a.cachedKv(l), y = b.cachedKv(l);
    expect(x.keys).toEqual(y.keys);
    expect(x.values).toEqual(y.values);
  }
}

describe('speculative decoding on one engine', () => {
  it('greedy with prompt lookup: the tokens and the cache of plain decoding; stats count the passes', async () => {
    const plain = await run({ maxNewTokens: 40 });
    const spec = await run({ maxNewTokens: 40, speculate: { drafter: new PromptLookupDrafter() } });
    expect(new Set(plain.r.ids).size).toBeGreaterThan(5);
    expect(spec.r.ids).toEqual(plain.r.ids);
    expect(spec.r.finish).toBe('cap');
    const s = spec.r.stats;
    expect(s.drafted).toBeGreaterThan(0);
    expect(s.accepted).toBeLessThanOrEqual(s.drafted!);
    expect(s.passes).toBe(40 - 1 - s.accepted!);           // every pass emits its kept drafts + one token
    expectSameCache(spec.engine, plain.engine);
  });

  it('an oracle drafter: 8 tokens a pass; a lying one: nothing kept, every cache cut back, same tokens', async () => {
    const plain = await run({ maxNewTokens: 33 });
    const good = await run({ maxNewTokens: 33, speculate: { drafter: oracle(plain.r.ids) } });
    expect(good.r.ids).toEqual(plain.r.ids);
    expect(good.r.stats).toMatchObject({ drafted: 28, accepted: 28, passes: 4 });   // 1 + 4 passes × (7 kept + 1)
    expectSameCache(good.engine, plain.engine);
    const bad = await run({ maxNewTokens: 33, speculate: { drafter: oracle(plain.r.ids, true), maxDraft: 3 } });
    expect(bad.r.ids).toEqual(plain.r.ids);
    expect(bad.r.stats).toMatchObject({ accepted: 0, passes: 32 });
    expect(bad.r.stats.drafted).toBeGreaterThan(32);
    expectSameCache(bad.engine, plain.engine);   // the KV after every rejection is plain decoding's
  });

  it('a stop token or the cap inside a pass ends the answer where plain decoding ends it, with its cache', async () => {
    const plain = await run({ maxNewTokens: 30 });
    const stop = plain.r.ids[17]!;
    const first = plain.r.ids.indexOf(stop);
    const a = await run({ maxNewTokens: 30, stopTokens: [stop] });
    const b = await run({ maxNewTokens: 30, stopTokens: [stop], speculate: { drafter: oracle(plain.r.ids) } });
    expect(b.r).toMatchObject({ ids: a.r.ids, finish: 'stop-token', stopToken: stop });
    expect(b.r.ids).toHaveLength(first);
    expectSameCache(b.engine, a.engine);
    const c = await run({ maxNewTokens: 13, speculate: { drafter: oracle(plain.r.ids) } });
    expect(c.r.ids).toEqual(plain.r.ids.slice(0, 13));
    const d = await run({ maxNewTokens: 13 });
    expectSameCache(c.engine, d.engine);
  });

  it('seeded sampling (temperature, top-k, top-p): the same tokens as plain sampling with the same seed', async () => {
    for (const sampling of [{ temperature: 0.9, seed: 7 }, { temperature: 0.7, topK: 5, seed: 8 }, { temperature: 1.1, topP: 0.8, seed: 9 }]) {
      const plain = await run({ maxNewTokens: 30, sampling });
      const spec = await run({ maxNewTokens: 30, sampling, speculate: { drafter: oracle(plain.r.ids) } });
      expect(spec.r.ids).toEqual(plain.r.ids);
      expect(spec.r.stats.accepted).toBe(29 - spec.r.stats.passes!);   // every draft kept: 7, 7, 7, then 4 before the cap
      expect(spec.r.stats.passes).toBe(4);
      const lookup = await run({ maxNewTokens: 30, sampling, speculate: { drafter: new PromptLookupDrafter() } });
      expect(lookup.r.ids).toEqual(plain.r.ids);
      expectSameCache(lookup.engine, plain.engine);
    }
  });

  it('under a grammar with lookahead: the same tokens, drafts the grammar forbids are never sent', async () => {
    // Position-dependent masks: token i of the answer may be any id ≡ i (mod 3) or ≡ i + 1 (mod 3).
    const mask = (i: number): TokenConstraint => allowOnly(Array.from({ length: V }, (_, id) => id).filter((id) => id % 3 === i % 3 || id % 3 === (i + 1) % 3), V);
    const masks = Array.from({ length: 40 }, (_, i) => mask(i));
    let overruled = 0;
    const make = (): Constraint => {
      const c: Constraint = (soFar) => ({ ...masks[soFar.length]!, overruled: () => { overruled++; } });
      c.lookahead = (soFar, draft) => draft.map((_, i) => masks[soFar.length + i + 1]!);
      return c;
    };
    overruled = 0;
    const plain = await run({ maxNewTokens: 30, constraint: make() });
    const plainOverruled = overruled;
    expect(plainOverruled).toBeGreaterThan(0);
    overruled = 0;
    const sent: number[][] = [];
    const drafter: Drafter = { name: 'all', draft: ({ context, max }) => { const t = oracle(plain.r.ids).draft({ context, max, sampling: { temperature: 0 }, seed: 0 }) as { tokens: number[] }; sent.push(t.tokens); return { tokens: [...t.tokens.slice(0, 2), 1, 2, 3] }; } };
    const spec = await run({ maxNewTokens: 30, constraint: make(), speculate: { drafter } });
    expect(spec.r.ids).toEqual(plain.r.ids);
    expect(overruled).toBe(plainOverruled);                   // the grammar hears of every overrule once
    expect(spec.r.stats.accepted).toBeGreaterThan(10);
    const noLookahead: Constraint = (soFar) => masks[soFar.length]!;
    const off = await run({ maxNewTokens: 10, constraint: noLookahead, speculate: { drafter } });
    expect(off.r.stats).toMatchObject({ drafted: 0, speculationOff: expect.stringMatching(/cannot look ahead/) });
    expect(off.r.ids).toEqual(plain.r.ids.slice(0, 10));
  });

  it('speculating, each step is one decode call that never lets the engine start the next token early (nothing drafted: a pass of one row); plain steps do', async () => {
    // A split room's host starts its share of the next token when a step lets it (ahead): a pass coming
    // next would drop that work, so speculation never asks for it, from the first token on.
    const recorded = (engine: ReferenceEngine, calls: string[]) => Object.assign(Object.create(engine) as ReferenceEngine, {
      decode: (r: DecodeRequest) => { calls.push(`${r.tokens ? r.tokens.length : 'prompt'}${r.ahead ? ' ahead' : ''}`); return engine.decode(r); },
    });
    const plainCalls: string[] = [];
    const plain = await run({ maxNewTokens: 30 }, recorded(engineOf(), plainCalls));
    expect(plainCalls).toEqual(['prompt ahead', ...Array<string>(29).fill('1 ahead')]);
    // Right drafts at answer token 5 only; nothing drafted elsewhere.
    const once: Drafter = { name: 'once', draft: ({ context, max }) => {
      const at = context.length - prompt.length;
      return { tokens: at === 5 ? plain.r.ids.slice(at, at + Math.min(max, 3)) : [] };
    } };
    const engine = engineOf();
    const calls: string[] = [];
    const r = await run({ maxNewTokens: 30, speculate: { drafter: once } }, recorded(engine, calls));
    expect(r.r.error).toBeUndefined();
    expect(r.r.ids).toEqual(plain.r.ids);
    expect(r.r.stats).toMatchObject({ drafted: 3, accepted: 3, passes: 29 - 3 });
    // The first token after the prompt's row, steps 1–4 one row each, the pass of 4 rows, one-row steps again.
    expect(calls).toEqual(['prompt', ...Array<string>(4).fill('1'), '4', ...Array<string>(29 - 3 - 5).fill('1')]);
    expectSameCache(engine, plain.engine);
  });

  it('a recurrent engine turns speculation off, saying why', async () => {
    const engine = Object.defineProperty(engineOf(), 'recurrent', { value: true });
    const r = await new Generator(engine, { ctx }).generate(prompt, { maxNewTokens: 5, speculate: { drafter: new PromptLookupDrafter() } });
    expect(r.stats).toMatchObject({ drafted: 0, passes: 4, speculationOff: expect.stringMatching(/recurrent/) });
  });
});
