// Prompt lookup drafts what followed the latest earlier occurrence of the context's longest final n-gram;
// after a new last token, what followed the token in its place after the n-gram before it; weak matches
// draft fewer tokens.
import { describe, expect, it } from 'vitest';
import { DEFAULT_ROWS_FOR, PromptLookupDrafter } from '../../../../src/model/speculative/prompt-lookup.ts';

const ask = (d: PromptLookupDrafter, context: number[], max = 4) => d.draft({ context, max, sampling: { temperature: 0 }, seed: 0 }).tokens;

describe('PromptLookupDrafter', () => {
  it('continues the longest matching n-gram, from its latest occurrence', () => {
    const d = new PromptLookupDrafter({ maxNgram: 3, skipNewToken: false, rowsFor: () => Infinity });
    //            0  1  2  3  4  5  6  7  8  9 10 11
    const ctx = [5, 6, 7, 8, 9, 1, 6, 7, 2, 3, 5, 6, 7];
    expect(ask(d, ctx)).toEqual([8, 9, 1, 6]);          // "5 6 7" matched at 0..2 (a 3-gram beats the later "6 7")
    expect(ask(d, [...ctx.slice(0, 8)])).toEqual([8, 9, 1, 6]); // a shorter context (not a continuation): re-indexed; "6 7" at 1..2
    expect(ask(d, [1, 2, 3, 9, 9, 2])).toEqual([3, 9, 9, 2]);    // a 1-gram when nothing longer matches
    expect(ask(d, [1, 2, 3, 4])).toEqual([]);
    expect(ask(d, [4, 4, 4, 4], 8)).toEqual([4]);        // the continuation stops at the end of the context
  });

  it('after a new last token, continues past the token in its place after the n-gram before it', () => {
    const d = new PromptLookupDrafter({ rowsFor: () => Infinity });
    //            0  1  2  3  4  5  6  7  8  9
    const ctx = [3, 4, 5, 6, 7, 8, 3, 4, 9, 3, 4, 99];    // 99 is new: "3 4" last stood before 9 (at 7..8), then "3 4 5" at 0..2
    expect(ask(d, ctx)).toEqual([3, 4, 99]);                // "3 4" ended at 7 with two tokens after it: skip 9, continue at 9
    expect(ask(d, [3, 4, 5, 6, 7, 8, 3, 4, 99], 3)).toEqual([6, 7, 8]);   // "3 4" before: 0..1 (skip 5), continue at 3
    expect(ask(d, [5, 6, 7, 1, 2, 99])).toEqual([]);        // nothing before the new token occurred earlier either
    expect(ask(new PromptLookupDrafter({ skipNewToken: false }), [3, 4, 5, 6, 7, 8, 3, 4, 99])).toEqual([]);
    // The last token itself matches: no skip, even when a longer n-gram before it would.
    expect(ask(d, [1, 2, 3, 1, 2, 8, 3])).toEqual([1, 2, 8, 3]);
  });

  it('drafts fewer tokens for weaker matches (rowsFor by n-gram length and skip)', () => {
    expect([1, 2, 3, 4].map((n) => DEFAULT_ROWS_FOR(n, false))).toEqual([5, 6, Infinity, Infinity]);
    expect([1, 2, 3, 4].map((n) => DEFAULT_ROWS_FOR(n, true))).toEqual([2, 2, 4, 4]);
    const long = Array.from({ length: 12 }, (_, i) => 20 + i);
    const d = new PromptLookupDrafter();
    expect(ask(d, [...long, 1, ...long.slice(0, 3)], 7)).toEqual(long.slice(3, 10));   // a 3-gram: the request's 7
    expect(ask(d, [...long, 1, 2, 22], 7)).toEqual(long.slice(3, 8));                  // a 1-gram: 5
    expect(ask(d, [...long, 1, 2, 21, 22], 7)).toEqual(long.slice(3, 9));              // a 2-gram: 6
    expect(ask(d, [...long, 1, 2, 20, 21, 22, 99], 7)).toEqual(long.slice(4, 8));      // new token after a 3-gram: 4
    expect(ask(d, [...long, 1, 2, 22, 99], 7)).toEqual(long.slice(4, 6));              // new token after a 1-gram: 2
    const calls: [number, boolean][] = [];
    const custom = new PromptLookupDrafter({ rowsFor: (n, skipped) => { calls.push([n, skipped]); return 1.7; } });
    expect(ask(custom, [...long, 1, 2, 22], 7)).toEqual([23]);                           // floored
    expect(calls).toEqual([[1, false]]);
  });

  it('follows a growing context incrementally and gives what a fresh index gives', () => {
    const seq = Array.from({ length: 400 }, (_, i) => (i * 7919 + (i >> 3)) % 23);
    const incremental = new PromptLookupDrafter();
    for (let n = 2; n <= seq.length; n += 3) {
      const ctx = seq.slice(0, n);
      expect(ask(incremental, ctx, 6)).toEqual(ask(new PromptLookupDrafter(), ctx, 6));
    }
    // New tokens now and then (the skip match reads the index of n-grams with two tokens after them).
    const fresh = seq.map((t, i) => (i % 17 === 16 ? 1000 + i : t));
    const again = new PromptLookupDrafter();
    for (let n = 2; n <= fresh.length; n += 1) {
      const ctx = fresh.slice(0, n);
      expect(ask(again, ctx, 6)).toEqual(ask(new PromptLookupDrafter(), ctx, 6));
    }
  });
});
