// Prompt lookup: drafts without a model. An agent's answers copy long runs from their context (the old
// text of edit_file, a file rewritten with one change, a page served again, identifiers used across
// files), so the tokens that followed the last occurrence of the context's final n-gram are a good guess
// of what comes next. The longest matching n-gram (maxNgram down to minNgram tokens) wins; among its
// occurrences, the latest. The index grows with the context (each n-gram ending at position i is
// indexed once token i + 1 exists), so a pass costs O(maxNgram) lookups, not a scan of the context.
import type { Draft, Drafter, DraftRequest } from './types.ts';

export interface PromptLookupOptions {
  /** Longest n-gram matched (default 4). */
  maxNgram?: number;
  /** Shortest n-gram matched (default 1). */
  minNgram?: number;
}

export class PromptLookupDrafter implements Drafter {
  readonly name = 'lookup';
  private readonly maxNgram: number;
  private readonly minNgram: number;
  /** n-gram key → the latest position where it ends with a token after it. */
  private index = new Map<string, number>();
  /** The context indexed so far (a copy: it is compared with each new one). */
  private seen: number[] = [];

  constructor(opts: PromptLookupOptions = {}) {
    this.maxNgram = Math.max(1, opts.maxNgram ?? 4);
    this.minNgram = Math.min(this.maxNgram, Math.max(1, opts.minNgram ?? 1));
  }

  draft(r: DraftRequest): Draft {
    const ctx = r.context;
    this.follow(ctx);
    const L = ctx.length;
    for (let n = Math.min(this.maxNgram, L - 1); n >= this.minNgram; n--) {
      const end = this.index.get(key(ctx, L - n, L));
      if (end === undefined) continue;
      const tokens: number[] = [];
      for (let i = end + 1; i < L && tokens.length < r.max; i++) tokens.push(ctx[i]!);
      if (tokens.length > 0) return { tokens };
    }
    return { tokens: [] };
  }

  /** Index the context: extend when it continues the last one, else start over. */
  private follow(ctx: readonly number[]): void {
    let same = Math.min(this.seen.length, ctx.length);
    for (let i = 0; i < same; i++) if (this.seen[i] !== ctx[i]) { same = i; break; }
    if (same < this.seen.length) { this.index = new Map(); this.seen = []; same = 0; }
    // n-grams ending at i get indexed once i + 1 exists: positions seen.length − 1 … ctx.length − 2.
    for (let i = Math.max(0, this.seen.length - 1); i < ctx.length - 1; i++) {
      for (let n = this.minNgram; n <= this.maxNgram && n <= i + 1; n++) this.index.set(key(ctx, i + 1 - n, i + 1), i);
    }
    for (let i = this.seen.length; i < ctx.length; i++) this.seen.push(ctx[i]!);
  }
}

function key(ids: readonly number[], from: number, to: number): string {
  let k = '';
  for (let i = from; i < to; i++) k += `${ids[i]},`;
  return k;
}
