import { describe, expect, it } from 'vitest';
import { SamplingError } from '../../../src/model/engine-errors.ts';
import { allowOnly, argmax, isAllowed, pickFromSorted, Prng, sampleLogits, tokenSeed } from '../../../src/model/sampler.ts';

const softmax = (logits: number[], T: number): number[] => {
  const m = Math.max(...logits);
  const e = logits.map((l) => Math.exp((l - m) / T));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / z);
};

/** Frequencies of sampled ids over `draws` seeds derived like the Generator derives them. */
function frequencies(logits: Float32Array, opts: Parameters<typeof sampleLogits>[1], draws: number): number[] {
  const counts = new Array<number>(logits.length).fill(0);
  for (let i = 0; i < draws; i++) counts[sampleLogits(logits, { ...opts, seed: tokenSeed(opts.seed ?? 0, i) })]!++;
  return counts.map((c) => c / draws);
}

describe('Prng', () => {
  it('is deterministic for a seed and differs between seeds', () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const c = new Prng(43);
    const seqA = Array.from({ length: 16 }, () => a.next());
    expect(Array.from({ length: 16 }, () => b.next())).toEqual(seqA);
    expect(Array.from({ length: 16 }, () => c.next())).not.toEqual(seqA);
    expect(new Set(seqA).size).toBe(16);
  });

  it('nextFloat is a multiple of 2^-24 in [0, 1) and uniform over 10 bins', () => {
    const r = new Prng(7);
    const bins = new Array<number>(10).fill(0);
    const draws = 50_000;
    let outside = 0;
    for (let i = 0; i < draws; i++) {
      const u = r.nextFloat();
      if (!(u >= 0 && u < 1 && Number.isInteger(u * 2 ** 24))) outside++;
      bins[Math.floor(u * 10)]!++;
    }
    expect(outside).toBe(0);
    // Chi-square with 9 degrees of freedom; 27.9 is the 0.999 quantile.
    const chi2 = bins.reduce((s, c) => s + (c - draws / 10) ** 2 / (draws / 10), 0);
    expect(chi2).toBeLessThan(27.9);
  });

  it('tokenSeed gives distinct seeds for neighbouring positions and seeds', () => {
    const seeds = new Set<number>();
    for (let s = 0; s < 10; s++) for (let p = 0; p < 100; p++) seeds.add(tokenSeed(s, p));
    expect(seeds.size).toBe(1000);
  });
});

describe('greedy', () => {
  it('argmax picks the largest logit; ties go to the lowest id', () => {
    expect(argmax(Float32Array.of(1, 3, 2))).toBe(1);
    expect(argmax(Float32Array.of(0, 5, 1, 5))).toBe(1);
    expect(sampleLogits(Float32Array.of(0, 5, 1, 5), { temperature: 0 })).toBe(1);
  });

  it('a constraint bitset restricts the choice; `greedy` forces argmax even at temperature 1', () => {
    const logits = Float32Array.of(9, 1, 2, 8);
    const only12 = allowOnly([1, 2], 4);
    expect(isAllowed(only12, 0)).toBe(false);
    expect(isAllowed(only12, 2)).toBe(true);
    expect(argmax(logits, only12)).toBe(2);
    for (let s = 0; s < 50; s++) expect(sampleLogits(logits, { temperature: 5, seed: s }, { ...allowOnly([0, 3], 4), greedy: true })).toBe(0);
  });

  it('ids past the end of the bitset are not allowed (a tokenizer vocabulary shorter than the model\'s)', () => {
    const logits = new Float32Array(100);
    logits[99] = 10;
    logits[31] = 1;
    expect(argmax(logits, allowOnly([31], 32))).toBe(31);
  });

  it('no allowed token: SamplingError', () => {
    const logits = Float32Array.of(1, 2);
    expect(() => argmax(logits, { bits: new Uint32Array(1) })).toThrow(SamplingError);
    expect(() => sampleLogits(Float32Array.of(-Infinity, -Infinity), { temperature: 1 })).toThrow(/allows no token/);
  });
});

describe('temperature, top-k, top-p', () => {
  const logits = Float32Array.of(2, 1, 0.5, 0, -1);

  it('the same seed gives the same token; different seeds vary', () => {
    const opts = { temperature: 1, seed: 1234 };
    const first = sampleLogits(logits, opts);
    for (let i = 0; i < 5; i++) expect(sampleLogits(logits, opts)).toBe(first);
    const picks = new Set(Array.from({ length: 200 }, (_, s) => sampleLogits(logits, { temperature: 1, seed: s })));
    expect(picks.size).toBe(5);
  });

  it('frequencies follow softmax(logits / T)', () => {
    for (const T of [0.5, 1.5]) {
      const want = softmax([...logits], T);
      frequencies(logits, { temperature: T, seed: 9 }, 20_000).forEach((f, i) => expect(Math.abs(f - want[i]!)).toBeLessThan(0.015));
    }
  });

  it('top-k keeps the k most likely and renormalises', () => {
    const freq = frequencies(logits, { temperature: 1, topK: 2, seed: 3 }, 10_000);
    const want = softmax([2, 1], 1);
    expect(freq.slice(2).every((f) => f === 0)).toBe(true);
    expect(Math.abs(freq[0]! - want[0]!)).toBeLessThan(0.02);
  });

  it('top-p keeps the shortest prefix reaching p and renormalises', () => {
    const p = softmax([...logits], 1); // ≈ [0.52, 0.19, 0.12, 0.07, 0.03]
    const topP = p[0]! + p[1]! + 0.01; // needs three tokens
    const freq = frequencies(logits, { temperature: 1, topP, seed: 5 }, 10_000);
    expect(freq.slice(3).every((f) => f === 0)).toBe(true);
    const z = p[0]! + p[1]! + p[2]!;
    freq.slice(0, 3).forEach((f, i) => expect(Math.abs(f - p[i]! / z)).toBeLessThan(0.02));
  });

  it('a constraint applies before top-k', () => {
    const freq = frequencies(logits, { temperature: 1, topK: 1, seed: 1 }, 200);
    expect(freq[0]).toBe(1);
    for (let s = 0; s < 100; s++) expect(sampleLogits(logits, { temperature: 1, topK: 1, seed: s }, allowOnly([3, 4], 5))).toBe(3);
  });

  it('pickFromSorted over pre-sorted candidates agrees with sampleLogits', () => {
    const order = [0, 1, 2, 3, 4];
    for (let s = 0; s < 100; s++) {
      const opts = { temperature: 0.8, topK: 4, topP: 0.9, seed: s };
      const u = new Prng(s).nextFloat();
      expect(pickFromSorted(order, [...logits], opts, u)).toBe(sampleLogits(logits, opts));
    }
  });

  it('equal logits are ordered by id, so the pick is reproducible', () => {
    const flat = new Float32Array(8);
    const u = 0.3; // falls in the third of eight equal slices
    expect(pickFromSorted([0, 1, 2, 3, 4, 5, 6, 7], [...flat], { temperature: 1 }, u)).toBe(2);
  });

  it('impossible options: SamplingError naming the option', () => {
    expect(() => sampleLogits(logits, { temperature: 1, topP: 0 })).toThrow(/topP must be in \(0, 1\]/);
    expect(() => sampleLogits(logits, { temperature: 1, topK: 1.5 })).toThrow(/topK must be a whole number/);
    expect(() => sampleLogits(logits, { temperature: Number.NaN })).toThrow(/temperature is NaN/);
  });
});

it('a constraint that asks is told when its mask overrules the argmax; the pick is the same', () => {
  const logits = Float32Array.from([0.1, 2.5, 0.3, 1.9, -1]);
  let reports = 0;
  const overruled = () => { reports++; };
  const noTop = allowOnly([0, 2, 3], 5);
  expect(sampleLogits(logits, { temperature: 0 }, { ...noTop, overruled })).toBe(sampleLogits(logits, { temperature: 0 }, noTop));
  expect(reports).toBe(1);
  const sampled = { temperature: 0.9, topK: 3, seed: 11 };
  expect(sampleLogits(logits, sampled, { ...noTop, overruled })).toBe(sampleLogits(logits, sampled, noTop));
  expect(reports).toBe(2);
  sampleLogits(logits, { temperature: 0 }, { ...allowOnly([1, 3], 5), overruled });   // the argmax (1) is allowed
  sampleLogits(logits, { temperature: 0 }, { overruled });                               // no mask at all
  expect(reports).toBe(2);
});
