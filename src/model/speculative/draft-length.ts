// How many tokens a draft model drafts per pass, chosen from what the drafter measures (DraftModelDrafter
// with draftLength 'auto'). A longer draft gives more tokens per pass when the draft agrees and costs
// draft time whether or not it does: at a per-token agreement α, drafting k tokens gives on average
//
//     E(k) = 1 + α + α² + … + α^k = (1 − α^(k+1)) / (1 − α)      tokens a pass (the kept ones, then the target's own)
//
// (the pass keeps the longest agreeing prefix: token i is kept when all before it were and it agrees) and
// a cycle of the answer (one draft call, then the pass it feeds) takes
//
//     T(k) = fixed + (k − 1) · perToken
//
// where `fixed` is everything that does not grow with k — the pass itself (in a room: every device's
// layers and the hop chain), the draft's catch-up on the tokens the last pass kept, its first drafted
// token (one head over the row the catch-up left) — and `perToken` is one more drafted token (the draft
// model's layers and head on one row, one after another: the draft is sequential). The chooser picks the
// k in [1, max] with the most E(k) / T(k). At α = 0.5 with a drafted token ≈ 6% of a cycle that is k = 3,
// at α = 0.8 k = 7 (docs/room-speed.md, "Draft model").
//
// What it measures, from the draft calls alone (the Generator need not tell it anything):
//   - agreement: each call's context says what became of the previous call's draft. A pass appends the
//     kept drafted tokens, then the target's own token; so the new context's tail, compared with the
//     draft, gives k tokens kept and (when fewer than all were kept) one rejected. The estimate is the
//     kept share of the tokens seen, weighted to forget (each pass keeps 0.95 of the weight before it:
//     about the last 20 passes count, however long they drafted, so a draft that fell to 1 token comes
//     back as fast as it went), starting from a prior and clamped to [0.05, 0.95] so neither a long run
//     of agreement nor of rejections pins it (at α = 1 the max is always best, at α = 0 drafting never pays).
//     On the bench's modelled agreements, forgetting per pass at 0.9 – 0.95 or per token at 1/16 – 1/64
//     all come within 1.7% of the best fixed k; 0.95 a pass within 1.1%.
//   - time: the gap between one call's end and the next call's start (the pass it waited for, with the
//     Generator's own work), the call's time up to its first drafted token, and the time of each later
//     drafted token, on an injectable clock (the bench's modelled devices run on a virtual one). Medians of
//     the last 9 of each, so a pause (a GC, a busy tab) is one outlier, not a new estimate.
// A call whose context does not continue the last draft as a pass would (a new answer, a rewritten
// conversation: anything else than 1 … k + 1 new tokens after the previous context) teaches nothing and
// unlearns nothing; the next pass measures again.
//
// Before there is data, and for the first WARMUP_PASSES passes, it drafts the max: a pass of up to 8 rows
// costs a memory-bound device about what one row costs, a draft model is picked for being much cheaper per
// token than the room's pass (Qwen3-0.6B ≈ 6% of a 2-device Qwen3-8B pass) and for agreeing often (0.6 –
// 0.8 is what such pairs are quoted at; from 0.7 on the max is within 4% of the best k, at 0.6 within 9%,
// for 4 passes), and the first calls' times are not yet the steady state (pipelines are compiled, caches
// warmed). The prior agreement (0.7, worth 8 tokens) is where those figures put a same-family draft; it
// is forgotten within a few passes.

/** Tokens a pass gives on average when k are drafted and each agrees with probability alpha (given the ones before it did). */
export function expectedTokens(alpha: number, k: number): number {
  if (alpha >= 1) return k + 1;
  return (1 - alpha ** (k + 1)) / (1 - alpha);
}

/** The k in [1, max] with the most expected tokens per unit of time (the smaller k on a tie). */
export function bestDraftLength(alpha: number, fixedMs: number, perTokenMs: number, max: number): number {
  let best = 1;
  let bestRate = -Infinity;
  for (let k = 1; k <= max; k++) {
    const rate = expectedTokens(alpha, k) / Math.max(1e-9, fixedMs + (k - 1) * perTokenMs);
    if (rate > bestRate) { best = k; bestRate = rate; }
  }
  return best;
}

/**
 * What became of a draft, read from the context that follows it: null when `context` is not `previous`
 * followed by 1 … draft.length + 1 tokens (not a pass over that draft). kept: leading drafted tokens the
 * context continued with; rejected: a token after them differs from the draft's (censored otherwise: the
 * answer ended, or all were kept).
 */
export function passOutcome(previous: readonly number[], draft: readonly number[], context: readonly number[]): { kept: number; rejected: boolean } | null {
  const added = context.length - previous.length;
  if (added < 1 || added > draft.length + 1) return null;
  for (let i = previous.length - 1; i >= 0; i--) if (context[i] !== previous[i]) return null;
  let kept = 0;
  while (kept < added && kept < draft.length && context[previous.length + kept] === draft[kept]) kept++;
  return { kept, rejected: kept < added && kept < draft.length };
}

export const AGREEMENT_PRIOR = 0.7;
const PRIOR_WEIGHT = 8;
/** Each observed pass keeps this share of the weight already gathered (about the last 20 passes count). */
const KEEP_PER_PASS = 0.95;
export const AGREEMENT_FLOOR = 0.05;
export const AGREEMENT_CEILING = 0.95;
/** Passes observed before the measurements are trusted (until then: the max). */
export const WARMUP_PASSES = 4;
const TIMING_WINDOW = 9;

/** What the chooser believes now (for stats and tests). */
export interface DraftEstimate {
  /** Per-token agreement, clamped. */
  agreement: number;
  /** Passes observed (continuations of a draft). */
  passes: number;
  /** Median ms of the cycle's part that does not grow with k (undefined before any pass was timed). */
  fixedMs: number | undefined;
  /** Median ms of a drafted token after the first (undefined before any was timed). */
  perTokenMs: number | undefined;
}

/** Recent samples; the median of the last `size`. */
class RecentMedian {
  private readonly values: number[] = [];
  constructor(private readonly size: number) {}
  add(v: number): void {
    if (!Number.isFinite(v) || v < 0) return;
    this.values.push(v);
    if (this.values.length > this.size) this.values.shift();
  }
  get median(): number | undefined {
    if (this.values.length === 0) return undefined;
    const s = [...this.values].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  }
}

/**
 * One drafter's measurements and choice. Per call: begin(context) at its start, choose(max), then end()
 * with what was drafted and when its first drafted token was ready (or abandon() when it drafted
 * nothing worth learning from).
 */
export class DraftLengthChooser {
  private agreed = AGREEMENT_PRIOR * PRIOR_WEIGHT;
  private seen = PRIOR_WEIGHT;
  private observed = 0;
  private readonly gap = new RecentMedian(TIMING_WINDOW);        // one call's end to the next call's start
  private readonly head = new RecentMedian(TIMING_WINDOW);       // a call's start to its first drafted token
  private readonly perToken = new RecentMedian(TIMING_WINDOW);   // each drafted token after the first
  private last: { context: readonly number[]; draft: readonly number[]; endedAt: number } | undefined;
  private startedAt = 0;
  private continued = false;

  /** now: the clock, in ms. */
  constructor(readonly now: () => number = () => performance.now()) {}

  /** A draft call starts: learn what became of the previous draft (when `context` continues it as a pass would). */
  begin(context: readonly number[]): void {
    this.startedAt = this.now();
    const last = this.last;
    this.last = undefined;
    this.continued = false;
    if (!last) return;
    const outcome = passOutcome(last.context, last.draft, context);
    if (!outcome) return;
    const seenNow = outcome.kept + (outcome.rejected ? 1 : 0);
    this.agreed = this.agreed * KEEP_PER_PASS + outcome.kept;
    this.seen = this.seen * KEEP_PER_PASS + seenNow;
    this.gap.add(this.startedAt - last.endedAt);
    this.observed++;
    this.continued = true;
  }

  /** Tokens to draft now, in [1, max] (max ≥ 1). */
  choose(max: number): number {
    if (max <= 1) return Math.max(0, max);
    const { fixedMs, perTokenMs } = this.estimate;
    if (this.observed < WARMUP_PASSES || fixedMs === undefined || perTokenMs === undefined) return max;
    return bestDraftLength(this.estimate.agreement, fixedMs, perTokenMs, max);
  }

  /**
   * The call drafted `draft` after `context`; its first drafted token was ready at `firstAt` (the clock's
   * time; undefined when none was drafted).
   */
  end(context: readonly number[], draft: readonly number[], firstAt: number | undefined): void {
    const endedAt = this.now();
    // The head of a call that caught up a new context (a whole prompt) is not a pass's: only continuations.
    if (firstAt !== undefined && this.continued) this.head.add(firstAt - this.startedAt);
    if (firstAt !== undefined && draft.length > 1) this.perToken.add((endedAt - firstAt) / (draft.length - 1));
    this.last = { context: [...context], draft: [...draft], endedAt };
  }

  /** The call ended without a draft to learn from (aborted, failed): the next call starts afresh. */
  abandon(): void {
    this.last = undefined;
  }

  get estimate(): DraftEstimate {
    const gap = this.gap.median, head = this.head.median;
    return {
      agreement: Math.min(AGREEMENT_CEILING, Math.max(AGREEMENT_FLOOR, this.agreed / this.seen)),
      passes: this.observed,
      fixedMs: gap === undefined ? undefined : gap + (head ?? 0),
      perTokenMs: this.perToken.median,
    };
  }
}
