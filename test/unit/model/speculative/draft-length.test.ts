// The draft model's draft length chosen from what it measures (draft-length.ts, DraftModelDrafter with
// draftLength 'auto'): the cost model's optimum, reading a pass's outcome from the next context, and the
// drafter in the Generator on a virtual clock — a draft that always agrees drafts the max, one that never
// agrees falls to 1 and rises again when it agrees, expensive drafted tokens draft fewer, a fixed length
// is obeyed, rewritten conversations neither throw nor draft past the max; tokens stay plain decoding's.
import { describe, expect, it } from 'vitest';
import type { DecodeRequest, LayerEngine, RowCandidates } from '../../../../src/model/engine-types.ts';
import { EngineUsageError } from '../../../../src/model/engine-errors.ts';
import { Generator } from '../../../../src/model/generator.ts';
import { ReferenceEngine } from '../../../../src/model/reference/reference-engine.ts';
import { AGREEMENT_CEILING, AGREEMENT_FLOOR, bestDraftLength, DraftLengthChooser, expectedTokens, passOutcome, WARMUP_PASSES } from '../../../../src/model/speculative/draft-length.ts';
import { DraftModelDrafter } from '../../../../src/model/speculative/draft-model.ts';
import type { Drafter, DraftRequest } from '../../../../src/model/speculative/types.ts';
import { vocabularyOf } from '../../../../src/model/speculative/vocabulary.ts';
import { syntheticWeights } from '../reference/synthetic-model.ts';

describe('the cost model', () => {
  it('expected tokens a pass: 1 + α + … + α^k', () => {
    expect(expectedTokens(0.5, 3)).toBeCloseTo(1 + 0.5 + 0.25 + 0.125, 12);
    expect(expectedTokens(0.8, 1)).toBeCloseTo(1.8, 12);
    expect(expectedTokens(1, 7)).toBe(8);
    expect(expectedTokens(0, 7)).toBe(1);
  });

  it('the best k: short at low agreement or dear drafted tokens, the max at high agreement and cheap ones', () => {
    // The bench's stated room: a cycle of ≈ 60 ms that does not grow with k, 3.5 ms a further drafted token.
    expect(bestDraftLength(0.5, 60, 3.5, 7)).toBe(3);
    expect(bestDraftLength(0.6, 60, 3.5, 7)).toBe(4);
    expect(bestDraftLength(0.8, 60, 3.5, 7)).toBe(7);
    expect(bestDraftLength(AGREEMENT_CEILING, 60, 3.5, 7)).toBe(7);
    expect(bestDraftLength(AGREEMENT_FLOOR, 60, 3.5, 7)).toBe(1);
    expect(bestDraftLength(0.8, 60, 40, 7)).toBeLessThan(3);            // a drafted token ⅔ of the pass
    expect(bestDraftLength(0.8, 60, 3.5, 4)).toBe(4);                   // never past max
    expect(bestDraftLength(0.8, 60, 0, 1)).toBe(1);
  });
});

describe('passOutcome: what the next context says of a draft', () => {
  const before = [5, 6, 7];
  it('kept tokens, then the target\'s own (a rejection when it is not the draft\'s)', () => {
    expect(passOutcome(before, [1, 2, 3], [...before, 1, 2, 9])).toEqual({ kept: 2, rejected: true });
    expect(passOutcome(before, [1, 2, 3], [...before, 9])).toEqual({ kept: 0, rejected: true });
    expect(passOutcome(before, [1, 2, 3], [...before, 1, 2, 3, 4])).toEqual({ kept: 3, rejected: false });   // all kept, then its own
    expect(passOutcome(before, [1, 2, 3], [...before, 1, 2])).toEqual({ kept: 2, rejected: false });         // the answer stopped there
  });
  it('anything else is not a pass over that draft', () => {
    expect(passOutcome(before, [1, 2, 3], before)).toBeNull();
    expect(passOutcome(before, [1, 2, 3], [...before, 1, 2, 3, 4, 5])).toBeNull();
    expect(passOutcome(before, [1, 2, 3], [5, 0, 7, 1])).toBeNull();                                          // rewritten
    expect(passOutcome(before, [1, 2, 3], [5, 6])).toBeNull();
  });
});

describe('DraftLengthChooser on its own', () => {
  /** n passes of a draft of max tokens (or what it chooses) that keeps `keep(k)` of them; each call costs 1 + k ms, each gap 60 ms. */
  function run(chooser: DraftLengthChooser, clock: { t: number }, passes: number, keep: (k: number) => number, max = 7, perToken = 1): number[] {
    const chosen: number[] = [];
    let context = [1, 2, 3];
    for (let i = 0; i < passes; i++) {
      chooser.begin(context);
      const k = chooser.choose(max);
      chosen.push(k);
      clock.t += 1;
      const first = clock.t;
      clock.t += (k - 1) * perToken;
      const draft = Array.from({ length: k }, (_, j) => 100 + j);
      chooser.end(context, draft, first);
      clock.t += 60;
      const kept = keep(k);
      context = [...context, ...draft.slice(0, kept), 7];
    }
    return chosen;
  }

  it('drafts the max while warming up, falls to 1 when nothing agrees, rises to the max when all does', () => {
    const clock = { t: 0 };
    const chooser = new DraftLengthChooser(() => clock.t);
    const never = run(chooser, clock, 40, () => 0);
    expect(never.slice(0, WARMUP_PASSES)).toEqual(Array(WARMUP_PASSES).fill(7));
    expect(never.slice(-10)).toEqual(Array(10).fill(1));
    expect(chooser.estimate.agreement).toBe(AGREEMENT_FLOOR);
    const always = run(chooser, clock, 40, (k) => k);
    expect(always.slice(-10)).toEqual(Array(10).fill(7));
    expect(chooser.estimate.agreement).toBeGreaterThan(0.8);
    expect(chooser.estimate).toMatchObject({ fixedMs: 61, perTokenMs: 1 });
  });

  it('one pass of rejections does not swing a long record of agreement', () => {
    const clock = { t: 0 };
    const chooser = new DraftLengthChooser(() => clock.t);
    run(chooser, clock, 30, (k) => k);
    const before = chooser.estimate.agreement;
    run(chooser, clock, 1, () => 0);
    expect(chooser.estimate.agreement).toBeGreaterThan(before - 0.05);
    expect(run(chooser, clock, 1, (k) => k)).toEqual([7]);
  });
});

// Drafter tests in the Generator, on a virtual clock that the engines advance: the target's forward
// costs PASS_MS per call, the draft's forward `draftMs` per call (its catch-up, each drafted token after
// the first).
const target = syntheticWeights({ layers: 2, seed: 5 });
const V = target.config.vocabSize;
const ctx = 400;
const prompt = [1, 9, 4, 22, 61, 7, 7, 30, 2, 15, 80, 33, 1, 9, 4, 22, 40, 41, 3, 90, 11, 1, 9];
const PASS_MS = 50;
const vocabulary = { target: vocabularyOf(target.config), draft: vocabularyOf(target.config) };

/**
 * `engine` whose forward calls (runLayers, a decode that feeds tokens) advance the clock by `ms` (others
 * are free); `pick` may replace the candidates its decode returns (so the greedy pick of each row).
 */
function onClock<E extends LayerEngine>(engine: E, clock: { t: number }, ms: () => number, pick: (id: number) => number = (id) => id): E {
  return new Proxy(engine, {
    get(e, prop) {
      const v = Reflect.get(e, prop, e) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        if (prop === 'runLayers' || (prop === 'decode' && (args[0] as DecodeRequest).tokens)) clock.t += ms();
        const out = (v as (...a: unknown[]) => unknown).apply(e, args);
        return prop === 'decode' ? (out as Promise<RowCandidates[]>).then((rows) => rows.map((c) => ({ ...c, ids: c.ids.map(pick) }))) : out;
      };
    },
  });
}

interface Setup { clock: { t: number }; drafter: DraftModelDrafter; lengths: number[]; maxes: number[]; spy: Drafter; generator: Generator }

function setup(opts: { agrees?: () => boolean; draftMs?: number; draftLength?: number | 'auto' } = {}): Setup {
  const clock = { t: 0 };
  const draftMs = opts.draftMs ?? 3;
  const agrees = opts.agrees ?? (() => true);
  // The target as its own draft (always agrees), or, while agrees() is false, one whose every pick is another token.
  const draftEngine = onClock(new ReferenceEngine(target, { ctx }), clock, () => draftMs, (id) => (agrees() ? id : (id + 1) % V));
  const drafter = new DraftModelDrafter(draftEngine, {
    ctx, vocabulary, now: () => clock.t, ...(opts.draftLength !== undefined ? { draftLength: opts.draftLength } : {}),
  });
  const lengths: number[] = [];
  const maxes: number[] = [];
  const spy: Drafter = {
    name: drafter.name,
    draft: async (r: DraftRequest) => {
      const d = await drafter.draft(r);
      expect(d.tokens.length).toBeLessThanOrEqual(r.max);
      lengths.push(d.tokens.length);
      maxes.push(r.max);
      return d;
    },
  };
  const generator = new Generator(onClock(new ReferenceEngine(target, { ctx }), clock, () => PASS_MS), { ctx });
  return { clock, drafter, lengths, maxes, spy, generator };
}

const plain = async (p: number[], n: number) => (await new Generator(new ReferenceEngine(target, { ctx }), { ctx }).generate(p, { maxNewTokens: n })).ids;

describe('DraftModelDrafter with draftLength auto (the default), in the Generator', () => {
  it('a draft that always agrees, its tokens cheap: the max every pass; plain decoding\'s tokens', async () => {
    const s = setup();
    expect(s.drafter.draftLength).toBe('auto');
    const r = await s.generator.generate(prompt, { maxNewTokens: 90, speculate: { drafter: s.spy } });
    expect(r.ids).toEqual(await plain(prompt, 90));
    expect(s.lengths.slice(0, -1).every((n) => n === 7)).toBe(true);     // the last is cut by the answer's cap
    expect(r.stats.accepted).toBe(r.stats.drafted);
    expect(s.drafter.estimate.agreement).toBe(AGREEMENT_CEILING);
  });

  it('a draft that never agrees falls to 1 token; when it agrees again, it rises back to the max', async () => {
    let agreeing = false;
    const s = setup({ agrees: () => agreeing });
    const first = await s.generator.generate(prompt, { maxNewTokens: 40, speculate: { drafter: s.spy } });
    expect(first.ids).toEqual(await plain(prompt, 40));
    expect(first.stats.accepted).toBe(0);
    expect(s.lengths.slice(0, WARMUP_PASSES)).toEqual(Array(WARMUP_PASSES).fill(7));
    expect(s.lengths.slice(-15)).toEqual(Array(15).fill(1));
    // The conversation goes on (the next prompt extends the last), and the draft agrees now.
    agreeing = true;
    s.lengths.length = 0;
    const next = [...prompt, ...first.ids, 5, 6];
    const second = await s.generator.generate(next, { maxNewTokens: 100, speculate: { drafter: s.spy } });
    expect(second.ids).toEqual(await plain(next, 100));
    expect(s.lengths.slice(-6, -1)).toEqual(Array(5).fill(7));
  });

  it('drafted tokens that cost nearly a pass draft fewer than cheap ones, with the same tokens', async () => {
    const cheap = setup({ draftMs: 3 });
    const dear = setup({ draftMs: 40 });
    const expected = await plain(prompt, 120);
    for (const s of [cheap, dear]) {
      const r = await s.generator.generate(prompt, { maxNewTokens: 120, speculate: { drafter: s.spy } });
      expect(r.ids).toEqual(expected);
    }
    const late = (s: Setup) => s.lengths.slice(WARMUP_PASSES + 2, -1);
    expect(late(cheap).every((n) => n === 7)).toBe(true);
    expect(Math.max(...late(dear))).toBeLessThanOrEqual(3);
    expect(dear.drafter.estimate.perTokenMs).toBe(40);
    expect(dear.drafter.estimate.fixedMs).toBeCloseTo(PASS_MS + 40, 6);  // the pass, then the draft's catch-up
  });

  it('a fixed draftLength is obeyed (capped by the request\'s max), whatever the agreement', async () => {
    for (const agrees of [true, false]) {
      const s = setup({ draftLength: 3, agrees: () => agrees });
      const r = await s.generator.generate(prompt, { maxNewTokens: 60, speculate: { drafter: s.spy } });
      expect(r.ids).toEqual(await plain(prompt, 60));
      expect(s.lengths.length).toBeGreaterThan(10);
      expect(s.lengths).toEqual(s.maxes.map((max) => Math.min(3, max)));
    }
    const two = setup({ draftLength: 9 });
    await two.generator.generate(prompt, { maxNewTokens: 30, speculate: { drafter: two.spy, maxDraft: 2 } });
    expect(two.lengths).toEqual(two.maxes.map((max) => Math.min(2, max)));
    expect(two.maxes.filter((max) => max === 2).length).toBeGreaterThan(5);
    for (const bad of [0, -1, 2.5, Number.NaN]) {
      expect(() => new DraftModelDrafter(new ReferenceEngine(target, { ctx }), { ctx, vocabulary, draftLength: bad })).toThrow(EngineUsageError);
    }
    expect(() => new DraftModelDrafter(new ReferenceEngine(target, { ctx }), { ctx, vocabulary, now: 5 as unknown as () => number })).toThrow(/now must be a function/);
  });

  it('rewritten conversations: no throw, never past the max, the estimate learns only from passes', async () => {
    let agreeing = false;
    const s = setup({ agrees: () => agreeing });
    await s.generator.generate(prompt, { maxNewTokens: 30, speculate: { drafter: s.spy } });
    const passes = s.drafter.estimate.passes;
    expect(passes).toBeGreaterThan(WARMUP_PASSES);
    // Direct calls on contexts that do not continue the last draft: cut back, other tails, repeats.
    const greedy = { sampling: { temperature: 0 }, seed: 0 };
    for (const [i, context] of [prompt.slice(0, 5), [...prompt.slice(0, 10), 50, 51], [3, 4], [3, 4], prompt].entries()) {
      const d = await s.drafter.draft({ context, max: 1 + (i % 4), ...greedy });
      expect(d.tokens.length).toBeLessThanOrEqual(1 + (i % 4));
      expect(d.tokens.length).toBeGreaterThan(0);
    }
    expect(s.drafter.rewinds).toBeGreaterThan(2);
    expect(s.drafter.estimate.passes).toBe(passes);
    // Answers on a rewritten conversation still match plain decoding, and the chooser goes on learning.
    agreeing = true;
    const rewritten = [...prompt.slice(0, 8), 70, 71, 72];
    const r = await s.generator.generate(rewritten, { maxNewTokens: 120, speculate: { drafter: s.spy } });
    expect(r.ids).toEqual(await plain(rewritten, 120));
    expect(s.drafter.estimate.passes).toBeGreaterThan(passes);
    expect(s.lengths.slice(-4, -1)).toEqual([7, 7, 7]);
  });
});
