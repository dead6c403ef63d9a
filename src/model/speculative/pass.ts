// One speculative decode pass for the Generator: ask the drafter, cut the draft where it cannot be kept,
// feed [last token, ...draft] through every layer in one decode call, pick each row and keep the longest
// prefix the model agrees with. The cache is cut back past what was kept (the caller may cut more).
import { rowOf, type LayerEngine, type SamplingOptions, type TokenConstraint } from '../engine-types.ts';
import type { Constraint } from '../generate-types.ts';
import { isAllowed, isGreedy, pickRow, tokenSeed } from '../sampler.ts';
import { rowDistribution, ruleUniforms, speculativeSample } from './accept.ts';
import type { Draft, Drafter } from './types.ts';

export interface PassRequest {
  engine: LayerEngine;
  drafter: Drafter;
  /** The prompt and the answer so far (its last token is fed now; the cache holds all before it). */
  context: readonly number[];
  /** Tokens of the answer so far (what the constraint is asked with). */
  answer: readonly number[];
  /** Most tokens to draft (already limited by the answer cap and the context). */
  maxDraft: number;
  sampling: SamplingOptions;
  seed: number;
  stopTokens: ReadonlySet<number>;
  constraint?: Constraint | undefined;
  /** The real constraint of the next token (row 0), already asked for. */
  first: TokenConstraint | null | undefined;
  signal?: AbortSignal | undefined;
}

/** The tokens a step chose, in order: picks[0] follows the fed token, picks[j] the j-th kept drafted one. */
export interface PassResult {
  picks: number[];
  /** The constraint each pick was chosen under (picks ≥ 1: from lookahead; the caller checks them against the real ones). */
  constraints: (TokenConstraint | null | undefined)[];
  /** picks[j]'s row saw its top choice overruled by the grammar (j ≥ 1; row 0 reported directly). */
  overruled: boolean[];
  drafted: number;
  kept: number;
}

/** The drafted tokens worth checking: up to max, none the grammar forbids, none past a stop token. */
function cutDraft(draft: Draft, max: number, rowConstraints: (TokenConstraint | null | undefined)[], stopTokens: ReadonlySet<number>): number {
  let n = 0;
  while (n < Math.min(max, draft.tokens.length)) {
    const id = draft.tokens[n]!;
    if (!Number.isInteger(id) || id < 0) break;
    const c = rowConstraints[n];
    if (c && !isAllowed(c, id)) break;
    n++;
    if (stopTokens.has(id)) break;
  }
  return n;
}

/**
 * The grammar's mask for the next drafted token, as the drafter is asked for it: row 0's real constraint,
 * then the lookahead's. Without its `overruled` callback: a draft model's choice is not the target's.
 */
function maskAfter(r: PassRequest): (drafted: readonly number[]) => TokenConstraint | null | undefined {
  return (drafted) => {
    const c = drafted.length === 0 ? r.first : r.constraint!.lookahead!(r.answer, drafted)[drafted.length - 1];
    if (!c) return c;
    return { ...(c.bits ? { bits: c.bits } : {}), ...(c.greedy ? { greedy: true } : {}) };
  };
}

/**
 * The tokens the pass chose: the kept drafted ones, then the model's own next token. Nothing drafted
 * that could be kept is a pass of one row: the fed token, and the model's pick (plain decoding's step).
 */
export async function speculativePass(r: PassRequest): Promise<PassResult> {
  const { engine, context } = r;
  const start = engine.kvLength();             // = context.length − 1
  const fed = context[context.length - 1]!;
  const draft = r.maxDraft <= 0 ? { tokens: [] } : await r.drafter.draft({
    context, max: r.maxDraft, sampling: r.sampling, seed: r.seed, stopTokens: r.stopTokens,
    ...(r.signal ? { signal: r.signal } : {}), ...(r.constraint ? { constraint: maskAfter(r) } : {}),
  });
  // Row i picks the token after draft[0..i): row 0 under the real constraint, the rest under lookahead.
  const ahead = r.constraint && draft.tokens.length > 0 ? r.constraint.lookahead!(r.answer, draft.tokens.slice(0, r.maxDraft)) : [];
  const overruled: boolean[] = [];
  // Rows ≥ 1 hear of an overruled top choice through a flag: the real constraint is told only for picks used.
  const rowConstraints: (TokenConstraint | null | undefined)[] = [r.first, ...ahead.map((c, i) => c && (c.bits
    ? { ...c, overruled: () => { overruled[i + 1] = true; } }
    : c))];
  const k = cutDraft(draft, r.maxDraft, rowConstraints, r.stopTokens);
  const tokens = draft.tokens.slice(0, k);
  const position0 = context.length;            // where row 0's pick sits
  const rows = Array.from({ length: k + 1 }, (_, i) => rowOf({ ...r.sampling, seed: tokenSeed(r.seed, position0 + i) }, rowConstraints[i]));
  const candidates = await engine.decode({ tokens: [fed, ...tokens], rows });
  const picks: number[] = [];
  for (let i = 0; i <= k; i++) {
    const { opts, constraint } = rows[i]!;
    if (i === k) { picks.push(pickRow(candidates[i]!, opts, constraint)); break; }
    const x = tokens[i]!;
    const q = draft.q?.[i];
    if (q && !isGreedy(opts, constraint)) {
      const [uAccept, uResidual] = ruleUniforms(opts.seed!);
      const s = speculativeSample(rowDistribution(candidates[i]!, opts, constraint), q, x, uAccept, uResidual);
      picks.push(s.token);
      if (!s.kept) break;
    } else {
      const pick = pickRow(candidates[i]!, opts, constraint);
      picks.push(pick);
      if (pick !== x) break;
    }
  }
  const kept = picks.length - 1;
  if (engine.kvLength() > start + 1 + kept) await engine.truncate(start + 1 + kept);
  return {
    picks, constraints: rowConstraints.slice(0, picks.length), overruled: Array.from({ length: picks.length }, (_, i) => overruled[i] === true),
    drafted: k, kept,
  };
}
