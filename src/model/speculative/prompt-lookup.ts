// Prompt lookup: drafts without a model. An agent's answers copy long runs from their context (the old
// text of edit_file, a file rewritten with one change, a page served again, identifiers used across
// files), so the tokens that followed the last occurrence of the context's final n-gram are a good guess
// of what comes next. The longest matching n-gram (maxNgram down to minNgram tokens) wins; among its
// occurrences, the latest. The index grows with the context (each n-gram ending at position i is
// indexed once token i + 1 exists), so a pass costs O(maxNgram) lookups, not a scan of the context.
//
// Two refinements, both measured on the agent corpus (docs/room-speed.md):
//   - a new last token. When the context's last token never occurred before (a new name, a new
//     number), the n-gram before it is matched instead and the draft continues after the token that
//     stood in its place there: "id=\"total\"" after an earlier "id=\"tip\"" guesses the "\"" that
//     followed "tip". One token in ten of these drafts is kept, so they are drafted short.
//   - draft length by match strength. Every drafted token is a row that crosses each hop of a room
//     (16 KiB of hidden state apiece), while a kept one saves a whole pass; a weak match (a 1-gram, a
//     skipped token) is kept only a few tokens deep, so it drafts fewer rows (`rowsFor`).
import type { Draft, Drafter, DraftRequest } from './types.ts';

export interface PromptLookupOptions {
  /** Longest n-gram matched (default 4). */
  maxNgram?: number;
  /** Shortest n-gram matched (default 1). */
  minNgram?: number;
  /** Draft after a new last token from the n-gram before it (default true). */
  skipNewToken?: boolean;
  /** Most tokens drafted for a match of n tokens (skipped: after a new last token); default DEFAULT_ROWS_FOR. */
  rowsFor?: (n: number, skipped: boolean) => number;
}

/**
 * Drafted tokens by match strength, from how deep such drafts are kept on the agent corpus (a row is
 * worth sending while about 1 draft in 80 still agrees that far: a row costs ~0.7 ms on a 2-device
 * room's hops at 5 ms, a pass ~54 ms): 3+ tokens matched copy on (the request's max); a 2-gram 6, a
 * 1-gram 5; after a new last token 4 when 3+ tokens before it matched, else 2.
 */
export const DEFAULT_ROWS_FOR = (n: number, skipped: boolean): number => {
  if (skipped) return n >= 3 ? 4 : 2;
  return n >= 3 ? Infinity : n === 2 ? 6 : 5;
};

export class PromptLookupDrafter implements Drafter {
  readonly name = 'lookup';
  private readonly maxNgram: number;
  private readonly minNgram: number;
  private readonly skipNewToken: boolean;
  private readonly rowsFor: (n: number, skipped: boolean) => number;
  /** n-gram key → the latest position where it ends with a token after it. */
  private index = new Map<string, number>();
  /** n-gram key → the latest position where it ends with two tokens after it (the skip match looks here). */
  private earlier = new Map<string, number>();
  /** The context indexed so far (a copy: it is compared with each new one). */
  private seen: number[] = [];

  constructor(opts: PromptLookupOptions = {}) {
    this.maxNgram = Math.max(1, opts.maxNgram ?? 4);
    this.minNgram = Math.min(this.maxNgram, Math.max(1, opts.minNgram ?? 1));
    this.skipNewToken = opts.skipNewToken ?? true;
    this.rowsFor = opts.rowsFor ?? DEFAULT_ROWS_FOR;
  }

  draft(r: DraftRequest): Draft {
    const ctx = r.context;
    this.follow(ctx);
    const L = ctx.length;
    const from = (start: number, n: number, skipped: boolean): Draft => {
      const max = Math.min(r.max, Math.max(0, Math.floor(this.rowsFor(n, skipped))));
      return { tokens: ctx.slice(start, Math.min(L, start + max)) };
    };
    for (let n = Math.min(this.maxNgram, L - 1); n >= this.minNgram; n--) {
      const end = this.index.get(key(ctx, L - n, L));
      if (end !== undefined) return from(end + 1, n, false);
    }
    // The last token is new (no earlier occurrence with a token after it, when minNgram is 1): match the
    // n-gram before it and continue past the token in its place.
    if (this.skipNewToken && this.minNgram === 1) {
      for (let n = Math.min(this.maxNgram, L - 2); n >= 1; n--) {
        const end = this.earlier.get(key(ctx, L - 1 - n, L - 1));
        if (end !== undefined) return from(end + 2, n, true);
      }
    }
    return { tokens: [] };
  }

  /** Index the context: extend when it continues the last one, else start over. */
  private follow(ctx: readonly number[]): void {
    let same = Math.min(this.seen.length, ctx.length);
    for (let i = 0; i < same; i++) if (this.seen[i] !== ctx[i]) { same = i; break; }
    if (same < this.seen.length) { this.index = new Map(); this.earlier = new Map(); this.seen = []; same = 0; }
    // n-grams ending at i get indexed once i + 1 exists: positions seen.length − 1 … ctx.length − 2;
    // into `earlier` once i + 2 exists: positions seen.length − 2 … ctx.length − 3.
    for (let i = Math.max(0, this.seen.length - 1); i < ctx.length - 1; i++) this.put(this.index, ctx, i);
    for (let i = Math.max(0, this.seen.length - 2); i < ctx.length - 2; i++) this.put(this.earlier, ctx, i);
    for (let i = this.seen.length; i < ctx.length; i++) this.seen.push(ctx[i]!);
  }

  private put(map: Map<string, number>, ctx: readonly number[], i: number): void {
    for (let n = this.minNgram; n <= this.maxNgram && n <= i + 1; n++) map.set(key(ctx, i + 1 - n, i + 1), i);
  }
}

function key(ids: readonly number[], from: number, to: number): string {
  let k = '';
  for (let i = from; i < to; i++) k += `${ids[i]},`;
  return k;
}
