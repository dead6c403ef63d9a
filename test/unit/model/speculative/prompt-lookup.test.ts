// Prompt lookup drafts what followed the latest earlier occurrence of the context's longest final n-gram.
import { describe, expect, it } from 'vitest';
import { PromptLookupDrafter } from '../../../../src/model/speculative/prompt-lookup.ts';

const ask = (d: PromptLookupDrafter, context: number[], max = 4) => d.draft({ context, max, sampling: { temperature: 0 }, seed: 0 }).tokens;

describe('PromptLookupDrafter', () => {
  it('continues the longest matching n-gram, from its latest occurrence', () => {
    const d = new PromptLookupDrafter({ maxNgram: 3 });
    //            0  1  2  3  4  5  6  7  8  9 10 11
    const ctx = [5, 6, 7, 8, 9, 1, 6, 7, 2, 3, 5, 6, 7];
    expect(ask(d, ctx)).toEqual([8, 9, 1, 6]);          // "5 6 7" matched at 0..2 (a 3-gram beats the later "6 7")
    expect(ask(d, [...ctx.slice(0, 8)])).toEqual([8, 9, 1, 6]); // a shorter context (not a continuation): re-indexed; "6 7" at 1..2
    expect(ask(d, [1, 2, 3, 9, 9, 2])).toEqual([3, 9, 9, 2]);    // a 1-gram when nothing longer matches
    expect(ask(d, [1, 2, 3, 4])).toEqual([]);
    expect(ask(d, [4, 4, 4, 4], 8)).toEqual([4]);        // the continuation stops at the end of the context
  });

  it('follows a growing context incrementally and gives what a fresh index gives', () => {
    const seq = Array.from({ length: 400 }, (_, i) => (i * 7919 + (i >> 3)) % 23);
    const incremental = new PromptLookupDrafter();
    for (let n = 2; n <= seq.length; n += 3) {
      const ctx = seq.slice(0, n);
      expect(ask(incremental, ctx, 6)).toEqual(ask(new PromptLookupDrafter(), ctx, 6));
    }
  });
});
