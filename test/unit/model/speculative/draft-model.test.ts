// Speculative decoding with a small draft model (DraftModelDrafter) on CPU reference engines: greedy tokens
// and caches are plain decoding's on 1, 2 and 3 devices, the same model as its own draft keeps every
// drafted token, the draft's cache after rewinds is a fresh drafter's, a sampled draft's q is the draft
// model's distribution (exactly, and in what it samples), and a draft of another vocabulary is refused.
import { describe, expect, it } from 'vitest';
import type { DecodeRequest, LayerEngine, SamplingOptions, TokenConstraint } from '../../../../src/model/engine-types.ts';
import { DraftVocabularyError, EngineUsageError } from '../../../../src/model/engine-errors.ts';
import type { Constraint } from '../../../../src/model/generate-types.ts';
import { Generator } from '../../../../src/model/generator.ts';
import { ReferenceEngine } from '../../../../src/model/reference/reference-engine.ts';
import { allowOnly, isAllowed, sortedCandidates } from '../../../../src/model/sampler.ts';
import { rowDistribution } from '../../../../src/model/speculative/accept.ts';
import { DraftModelDrafter } from '../../../../src/model/speculative/draft-model.ts';
import { vocabularyOf } from '../../../../src/model/speculative/vocabulary.ts';
import type { SpecialTokenIds } from '../../../../src/model/tokenizer.ts';
import type { ModelWeights } from '../../../../src/model/types.ts';
import { RoomEngine } from '../../../../src/room/room-engine.ts';
import { syntheticWeights, weightsSubset } from '../reference/synthetic-model.ts';

const target = syntheticWeights({ layers: 3, seed: 5 });
const V = target.config.vocabSize;
const ctx = 160;
const prompt = [1, 9, 4, 22, 61, 7, 7, 30, 2, 15, 80, 33, 1, 9, 4, 22, 40, 41, 3, 90, 11, 1, 9];

const earlyExit: ModelWeights = { ...weightsSubset(target, 0, 2, { embedding: true, head: true }), config: { ...target.config, numLayers: 2 } };
// Draft models with the target's vocabulary: the target's first two layers and head (close to it), a
// model of other weights and fewer, narrower layers (far from it), and the target itself.
const drafts: Record<string, () => ReferenceEngine> = {
  'early exit (layers [0, 2) of the target)': () => new ReferenceEngine(earlyExit, { ctx }),
  'another model (2 layers, hidden 32, seed 9)': () => new ReferenceEngine(syntheticWeights({ layers: 2, hidden: 32, seed: 9 }), { ctx }),
  'the target itself': () => new ReferenceEngine(target, { ctx }),
};
const vocabulary = (w: ModelWeights = target) => ({ target: vocabularyOf(target.config), draft: vocabularyOf(w.config) });
const drafterOf = (engine: LayerEngine, draftCtx = ctx) => new DraftModelDrafter(engine, { ctx: draftCtx, vocabulary: vocabulary(), label: 'test' });

const part = (a: number, b: number, io = false): ReferenceEngine =>
  new ReferenceEngine(weightsSubset(target, a, b, { embedding: io, head: io }), { ctx, range: [a, b] });
const layouts: [string, () => { host: ReferenceEngine; stages: ReferenceEngine[] }][] = [
  ['1 device', () => { const h = new ReferenceEngine(target, { ctx }); return { host: h, stages: [h] }; }],
  ['2 devices', () => { const h = part(0, 1, true); return { host: h, stages: [h, part(1, 3)] }; }],
  ['3 devices', () => { const h = part(0, 1, true); return { host: h, stages: [h, part(1, 2), part(2, 3)] }; }],
];
const roomOf = (l: { host: ReferenceEngine; stages: ReferenceEngine[] }): LayerEngine =>
  l.stages.length === 1 ? l.host : new RoomEngine(l.host, l.stages, { numLayers: 3, hiddenSize: target.config.hiddenSize });

function expectSameKv(a: ReferenceEngine, b: ReferenceEngine): void {
  expect(a.kvLength()).toBe(b.kvLength());
  for (let l = a.range[0]; l < a.range[1]; l++) expect(a.cachedKv(l)).toEqual(b.cachedKv(l));
}

/** The draft model's distribution after `context`, computed apart from the drafter (a fresh engine). */
async function distributionAfter(make: () => ReferenceEngine, context: number[], opts: SamplingOptions) {
  const e = make();
  const hidden = await e.runLayers(e.range, 0, await e.embed(context));
  const H = hidden.length / context.length;
  const row = sortedCandidates(await e.logits(hidden.subarray(hidden.length - H)), opts);
  return rowDistribution(row, opts);
}

describe('DraftModelDrafter in the Generator', () => {
  for (const [layout, make] of layouts) {
    it(`${layout}, greedy: plain decoding's tokens and caches with each draft model; the target as its own draft keeps every token`, async () => {
      const plain = make();
      const expected = await new Generator(roomOf(plain), { ctx }).generate(prompt, { maxNewTokens: 40 });
      expect(new Set(expected.ids).size).toBeGreaterThan(5);
      const kept: Record<string, { drafted: number; accepted: number }> = {};
      for (const [name, draft] of Object.entries(drafts)) {
        const spec = make();
        const r = await new Generator(roomOf(spec), { ctx }).generate(prompt, { maxNewTokens: 40, speculate: { drafter: drafterOf(draft()) } });
        expect(r.ids, name).toEqual(expected.ids);
        kept[name] = { drafted: r.stats.drafted!, accepted: r.stats.accepted! };
        expect(r.stats.passes! + r.stats.accepted!).toBe(39);
        // The KV after every rejection is plain decoding's, on every device.
        spec.stages.forEach((s, i) => expectSameKv(s, plain.stages[i]!));
      }
      const self = kept['the target itself']!;
      expect(self.drafted).toBeGreaterThan(30);
      expect(self.accepted).toBe(self.drafted);
      const close = kept['early exit (layers [0, 2) of the target)']!, far = kept['another model (2 layers, hidden 32, seed 9)']!;
      expect(close.accepted).toBeLessThan(close.drafted);               // rejections happened: caches were cut back
      expect(far.accepted).toBeLessThan(far.drafted);
    });
  }

  it('under a grammar with lookahead: drafts are drawn under the masks, plain decoding\'s tokens', async () => {
    const mask = (i: number): TokenConstraint => allowOnly(Array.from({ length: V }, (_, id) => id).filter((id) => id % 3 !== i % 3), V);
    const grammar = (): Constraint => {
      const c: Constraint = (soFar) => mask(soFar.length);
      c.lookahead = (soFar, d) => d.map((_, i) => mask(soFar.length + i + 1));
      return c;
    };
    const plain = await new Generator(new ReferenceEngine(target, { ctx }), { ctx }).generate(prompt, { maxNewTokens: 30, constraint: grammar() });
    const drafter = drafterOf(drafts['another model (2 layers, hidden 32, seed 9)']!());
    const seen: number[][] = [];
    const spy = { name: drafter.name, draft: async (r: Parameters<DraftModelDrafter['draft']>[0]) => { const d = await drafter.draft(r); seen.push([r.context.length, ...d.tokens]); return d; } };
    const r = await new Generator(new ReferenceEngine(target, { ctx }), { ctx }).generate(prompt, { maxNewTokens: 30, constraint: grammar(), speculate: { drafter: spy } });
    expect(r.ids).toEqual(plain.ids);
    // Every drafted token is one the grammar allows at its position.
    for (const [at, ...tokens] of seen) tokens.forEach((t, i) => expect(isAllowed(mask(at! - prompt.length + i), t)).toBe(true));
    expect(r.stats.drafted).toBeGreaterThan(0);
  });
});

describe('DraftModelDrafter: its own cache', () => {
  it('follows the context incrementally and, after rewinds, drafts what a fresh drafter drafts from the same cache', async () => {
    const make = drafts['early exit (layers [0, 2) of the target)']!;
    const engine = make();
    const drafter = drafterOf(engine);
    const ask = (context: number[], max = 5) => drafter.draft({ context, max, sampling: { temperature: 0 }, seed: 0 });
    const a = await ask(prompt);
    expect(drafter.fed).toBe(prompt.length + 4);                      // the context, then the drafts but the last
    expect(drafter.cachedTokens).toEqual([...prompt, ...a.tokens.slice(0, 4)]);
    // The target kept two drafted tokens and picked another: only the new tokens are fed.
    const next = [...prompt, a.tokens[0]!, a.tokens[1]!, (a.tokens[2]! + 1) % V];
    await ask(next);
    expect(drafter.rewinds).toBe(1);
    expect(drafter.fed).toBe(prompt.length + 4 + 1 + 4);
    // A rewritten conversation: back to a common prefix of 10 tokens, then a new tail.
    const rewritten = [...prompt.slice(0, 10), 50, 51, 52, 53];
    const b = await ask(rewritten, 6);
    expect(drafter.rewinds).toBe(2);
    const fresh = drafterOf(make());
    const c = await fresh.draft({ context: rewritten, max: 6, sampling: { temperature: 0 }, seed: 0 });
    expect(b.tokens).toEqual(c.tokens);
    expect(drafter.cachedTokens).toEqual(fresh.cachedTokens);
    expectSameKv(engine, fresh.engine as ReferenceEngine);
    // The same context again: its last token is fed again for its logits, the same draft comes back.
    const again = await ask(rewritten, 6);
    expect(again.tokens).toEqual(b.tokens);
  });

  it('stops at a stop token, honours the signal and the draft engine\'s capacity', async () => {
    const drafter = drafterOf(drafts['the target itself']!());
    const greedy = { sampling: { temperature: 0 }, seed: 0 };
    const all = await drafter.draft({ context: prompt, max: 6, ...greedy });
    expect(all.tokens).toHaveLength(6);
    expect(all.q).toBeUndefined();                                    // greedy drafts are deterministic
    const stop = all.tokens[2]!;
    const first = all.tokens.indexOf(stop);
    expect((await drafter.draft({ context: prompt, max: 6, stopTokens: new Set([stop]), ...greedy })).tokens).toEqual(all.tokens.slice(0, first + 1));
    const aborted = new AbortController();
    aborted.abort();
    expect((await drafter.draft({ context: prompt, max: 6, signal: aborted.signal, ...greedy })).tokens).toEqual([]);
    const small = drafterOf(drafts['the target itself']!(), prompt.length + 2);   // room for the context and 2 more
    expect((await small.draft({ context: prompt, max: 6, ...greedy })).tokens).toEqual(all.tokens.slice(0, 3));
    expect((await small.draft({ context: [...prompt, 1, 2, 3], max: 6, ...greedy })).tokens).toEqual([]);
  });

  it('a failing draft engine turns the drafter off; the answer goes on with plain decoding\'s tokens', async () => {
    const engine = drafts['the target itself']!();
    let calls = 0;
    const failing = Object.assign(Object.create(engine) as ReferenceEngine, {
      decode: async (r: DecodeRequest) => { if (r.tokens && ++calls === 3) throw new Error('lost the draft device'); return engine.decode(r); },   // its third fed token
    });
    const drafter = drafterOf(failing);
    const plain = await new Generator(new ReferenceEngine(target, { ctx }), { ctx }).generate(prompt, { maxNewTokens: 20 });
    const r = await new Generator(new ReferenceEngine(target, { ctx }), { ctx }).generate(prompt, { maxNewTokens: 20, speculate: { drafter } });
    expect(r.finish).toBe('cap');
    expect(r.ids).toEqual(plain.ids);
    expect(drafter.failure?.message).toBe('lost the draft device');
    expect(engine.kvLength()).toBe(0);
  });

  it('a mask the draft cannot sample under ends that draft only', async () => {
    const drafter = drafterOf(drafts['the target itself']!());
    const greedy = { sampling: { temperature: 0 }, seed: 0 };
    const expected = await drafterOf(drafts['the target itself']!()).draft({ context: prompt, max: 4, ...greedy });
    const none = allowOnly([], V);
    const d = await drafter.draft({ context: prompt, max: 4, constraint: (soFar) => (soFar.length === 2 ? none : undefined), ...greedy });
    expect(d.tokens).toEqual(expected.tokens.slice(0, 2));
    expect(drafter.failure).toBeUndefined();
    expect((await drafter.draft({ context: prompt, max: 4, ...greedy })).tokens).toEqual(expected.tokens);
    expect(drafter.cachedTokens).toEqual([...prompt, ...expected.tokens.slice(0, 3)]);
  });
});

describe('DraftModelDrafter: sampled drafts', () => {
  const sampling = { temperature: 1, topK: 6 };

  it('q is the draft model\'s own distribution at each drafted position', async () => {
    const make = drafts['another model (2 layers, hidden 32, seed 9)']!;
    const drafter = drafterOf(make());
    const d = await drafter.draft({ context: prompt, max: 3, sampling: { ...sampling, seed: 4 }, seed: 4 });
    expect(d.tokens).toHaveLength(3);
    for (let i = 0; i < 3; i++) {
      const expected = await distributionAfter(make, [...prompt, ...d.tokens.slice(0, i)], sampling);
      expect(d.q![i]!.ids).toEqual(expected.ids);
      d.q![i]!.probs.forEach((p, j) => expect(p).toBeCloseTo(expected.probs[j]!, 6));
      expect(d.q![i]!.ids).toContain(d.tokens[i]);
    }
  });

  it('the drafted token is distributed as q (4,000 seeds)', async () => {
    const make = drafts['another model (2 layers, hidden 32, seed 9)']!;
    const drafter = drafterOf(make());
    const q = await distributionAfter(make, prompt, sampling);
    const counts = new Map<number, number>();
    const n = 4000;
    for (let seed = 0; seed < n; seed++) {
      const d = await drafter.draft({ context: prompt, max: 1, sampling: { ...sampling, seed }, seed });
      counts.set(d.tokens[0]!, (counts.get(d.tokens[0]!) ?? 0) + 1);
    }
    expect([...counts.keys()].every((id) => q.ids.includes(id))).toBe(true);
    expect(q.probs[0]!).toBeLessThan(0.9);                              // a spread distribution, not one token
    // Within 4 standard deviations of q for every candidate.
    q.ids.forEach((id, i) => {
      const p = q.probs[i]!;
      expect(Math.abs((counts.get(id) ?? 0) / n - p)).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / n) + 1e-3);
    });
  });

  it('the pass keeps the target\'s distribution: the first checked token over 2,500 seeds follows p', async () => {
    // The first answer token is forced (greedy), so the second is always row 0 of the first pass: the
    // draft's token kept with min(1, p/q), or else a draw from the residual.
    const first: Constraint = (soFar) => (soFar.length === 0 ? { greedy: true } : undefined);
    first.lookahead = (_soFar, d) => d.map(() => undefined);
    const engine = new ReferenceEngine(target, { ctx });
    const generator = new Generator(engine, { ctx });
    const drafter = drafterOf(drafts['another model (2 layers, hidden 32, seed 9)']!());
    const counts = new Map<number, number>();
    let head = -1, drafted = 0, accepted = 0;
    const n = 2500;
    for (let seed = 0; seed < n; seed++) {
      const r = await generator.generate(prompt, { maxNewTokens: 3, sampling: { ...sampling, seed }, constraint: first, speculate: { drafter, maxDraft: 1 } });
      head = r.ids[0]!;
      counts.set(r.ids[1]!, (counts.get(r.ids[1]!) ?? 0) + 1);
      drafted += r.stats.drafted!;
      accepted += r.stats.accepted!;
    }
    const p = await distributionAfter(() => new ReferenceEngine(target, { ctx }), [...prompt, head], sampling);
    const q = await distributionAfter(drafts['another model (2 layers, hidden 32, seed 9)']!, [...prompt, head], sampling);
    expect(drafted).toBe(n);
    expect(accepted).toBeGreaterThan(0);
    expect(accepted).toBeLessThan(n);                                 // q is not p: drafts were rejected too
    const overlap = p.ids.reduce((s, id, i) => s + Math.min(p.probs[i]!, q.probs[q.ids.indexOf(id)] ?? 0), 0);
    expect(Math.abs(accepted / n - overlap)).toBeLessThan(0.04);      // kept with probability Σ min(p, q)
    p.ids.forEach((id, i) => {
      const pi = p.probs[i]!;
      expect(Math.abs((counts.get(id) ?? 0) / n - pi)).toBeLessThan(4 * Math.sqrt((pi * (1 - pi)) / n) + 1e-3);
    });
  });

  it('seeded sampling with the target as its own draft: every drafted token kept, the same answer for the same seed', async () => {
    const run = () => new Generator(new ReferenceEngine(target, { ctx }), { ctx }).generate(prompt, {
      maxNewTokens: 33, sampling: { temperature: 0.9, topP: 0.9, seed: 21 }, speculate: { drafter: drafterOf(drafts['the target itself']!()) },
    });
    const r = await run();
    expect(r.finish).toBe('cap');
    expect(r.ids).toHaveLength(33);
    expect(r.stats).toMatchObject({ drafted: 28, accepted: 28, passes: 4 });   // 1 + 4 passes × (7 kept + 1)
    expect(new Set(r.ids).size).toBeGreaterThan(5);
    expect((await run()).ids).toEqual(r.ids);
  });
});

describe('DraftModelDrafter: the tokenizer check', () => {
  const special = (over: Partial<SpecialTokenIds> = {}): SpecialTokenIds => ({ imStart: 90, imEnd: 91, endOfText: 92, ...over });
  const engine = () => drafts['the target itself']!();

  it('refuses a draft model of another vocabulary size or other special-token ids, by name', () => {
    const other = syntheticWeights({ layers: 2, vocab: 101, seed: 9 });
    expect(() => new DraftModelDrafter(new ReferenceEngine(other, { ctx }), { ctx, vocabulary: vocabulary(other), label: 'Other' }))
      .toThrow(DraftVocabularyError);
    expect(() => new DraftModelDrafter(new ReferenceEngine(other, { ctx }), { ctx, vocabulary: vocabulary(other), label: 'Other' }))
      .toThrow(/draft model Other does not share the target's tokenizer: vocabulary size 101 \(the target's: 97\)/);
    const tok = (s: SpecialTokenIds) => ({ vocabSize: 95, special: s });
    const differentEnd = { target: vocabularyOf(target.config, tok(special())), draft: vocabularyOf(target.config, tok(special({ imEnd: 93 }))) };
    expect(() => new DraftModelDrafter(engine(), { ctx, vocabulary: differentEnd })).toThrow(/special token imEnd = 93 \(the target's: 91\)/);
    const fewerIds = { target: vocabularyOf(target.config, tok(special())), draft: vocabularyOf(target.config, { vocabSize: 94, special: special() }) };
    expect(() => new DraftModelDrafter(engine(), { ctx, vocabulary: fewerIds })).toThrow(/94 tokenizer ids \(the target's: 95\)/);
    const same = { target: vocabularyOf(target.config, tok(special())), draft: vocabularyOf(target.config, tok(special())) };
    expect(new DraftModelDrafter(engine(), { ctx, vocabulary: same }).name).toBe('draft:model');
  });

  it('refuses an engine that is not a whole attention-only model', () => {
    expect(() => drafterOf(part(0, 1))).toThrow(EngineUsageError);
    const recurrent = Object.defineProperty(engine(), 'recurrent', { value: true });
    expect(() => drafterOf(recurrent)).toThrow(/attention only/);
  });
});
