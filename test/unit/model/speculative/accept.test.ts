// The speculative sampling rule leaves the output distribution unchanged: exactly (on a grid of the two
// uniform numbers) on a tiny vocabulary, and statistically with the seeded PRNG; the target's row
// distribution is what pickFromSorted samples.
import { describe, expect, it } from 'vitest';
import { Prng, pickFromSorted } from '../../../../src/model/sampler.ts';
import { rowDistribution, speculativeSample } from '../../../../src/model/speculative/accept.ts';
import type { DraftDistribution } from '../../../../src/model/speculative/types.ts';

const V = 5;
const dense = (d: DraftDistribution): number[] => {
  const out = new Array<number>(V).fill(0);
  d.ids.forEach((id, i) => { out[id] = d.probs[i]!; });
  return out;
};
// Target p (sorted by probability, as a row's candidates are) and a draft q that disagrees with it.
const p: DraftDistribution = { ids: [2, 0, 4, 1, 3], probs: [0.4, 0.25, 0.2, 0.1, 0.05] };
const qs: DraftDistribution[] = [
  { ids: [0, 1, 2, 3, 4], probs: [0.1, 0.5, 0.1, 0.2, 0.1] },
  { ids: [3, 4], probs: [0.7, 0.3] },                 // q's support misses most of p's
  { ids: [2, 0, 4, 1, 3], probs: [0.4, 0.25, 0.2, 0.1, 0.05] }, // q = p: every draft kept
];

describe('speculative sampling rule', () => {
  it.each(qs.map((q, i) => [i, q] as const))('exact on a grid of (uAccept, uResidual): the output is p (q #%i)', (_i, q) => {
    const N = 500;
    const out = new Array<number>(V).fill(0);
    let keptMass = 0;
    q.ids.forEach((x, xi) => {
      for (let a = 0; a < N; a++) {
        for (let b = 0; b < N; b++) {
          const s = speculativeSample(p, q, x, (a + 0.5) / N, (b + 0.5) / N);
          const w = q.probs[xi]! / (N * N);
          out[s.token]! += w;
          if (s.kept) keptMass += w;
        }
      }
    });
    const target = dense(p);
    for (let y = 0; y < V; y++) expect(out[y]).toBeCloseTo(target[y]!, 2);
    // The chance a draft is kept is Σ min(p, q) (the overlap of the two distributions).
    const overlap = dense(q).reduce((acc, qy, y) => acc + Math.min(qy, target[y]!), 0);
    expect(keptMass).toBeCloseTo(overlap, 2);
  });

  it('statistically with the seeded PRNG: 40,000 draws stay within 1% of p', () => {
    const prng = new Prng(12345);
    const q = qs[0]!;
    const counts = new Array<number>(V).fill(0);
    const n = 40_000;
    for (let i = 0; i < n; i++) {
      let u = prng.nextFloat(), x = q.ids[q.ids.length - 1]!;
      for (let j = 0, run = 0; j < q.ids.length; j++) { run += q.probs[j]!; if (u < run) { x = q.ids[j]!; break; } }
      counts[speculativeSample(p, q, x, prng.nextFloat(), prng.nextFloat()).token]!++;
    }
    const target = dense(p);
    for (let y = 0; y < V; y++) expect(Math.abs(counts[y]! / n - target[y]!)).toBeLessThan(0.01);
  });

  it('rowDistribution is the distribution pickFromSorted samples (temperature, top-k, top-p)', () => {
    const ids = [7, 3, 9, 1, 4, 8];
    const logits = [2.0, 1.5, 1.4, 0.3, -0.5, -2];
    for (const opts of [{ temperature: 0.8 }, { temperature: 1.2, topK: 3 }, { temperature: 1, topP: 0.7 }]) {
      const d = rowDistribution({ ids, logits }, opts);
      const N = 20_000;
      const freq = new Map<number, number>();
      for (let i = 0; i < N; i++) { const id = pickFromSorted(ids, logits, opts, (i + 0.5) / N); freq.set(id, (freq.get(id) ?? 0) + 1 / N); }
      expect([...freq.keys()].sort()).toEqual([...d.ids].sort());
      d.ids.forEach((id, i) => expect(freq.get(id)).toBeCloseTo(d.probs[i]!, 3));
    }
    expect(rowDistribution({ ids, logits }, { temperature: 0 })).toEqual({ ids: [7], probs: [1] });
  });
});
