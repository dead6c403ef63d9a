// Which drafted tokens the model keeps. Two rules, both leaving the output distribution unchanged:
//
// - Deterministic drafts (prompt lookup, a greedy draft model): row i is picked exactly as plain decoding
//   picks the token at its position (the same candidates, the same uniform number from the position's
//   seed), and a drafted token is kept when it is that pick. For q = δ(x) this is the standard rule
//   below (keep x with probability p(x); otherwise a draw from p without x), with the accept test and
//   the residual draw sharing one uniform number, so seeded answers are identical to plain decoding's,
//   token for token, greedy or sampled.
// - Sampled drafts (a draft model sampling from its own q): the standard speculative sampling rule
//   (Leviathan et al. 2023, Chen et al. 2023): keep x with probability min(1, p(x) / q(x)); on a
//   rejection draw from max(0, p − q), renormalised.
import type { RowCandidates, SamplingOptions, TokenConstraint } from '../engine-types.ts';
import { isGreedy, keptWeights, Prng } from '../sampler.ts';
import type { DraftDistribution } from './types.ts';


/** The target's distribution p over a row's kept candidates (one-hot for a greedy row). */
export function rowDistribution(c: RowCandidates, opts: SamplingOptions, constraint?: TokenConstraint): DraftDistribution {
  if (isGreedy(opts, constraint)) return { ids: [c.ids[0]!], probs: [1] };
  const { weights, kept, total } = keptWeights(c.logits, c.ids.length, opts);
  return { ids: c.ids.slice(0, kept), probs: Array.from(weights.subarray(0, kept), (w) => w / total) };
}


/**
 * The standard rule for a drafted token x drawn from q, against the target's p: keep x when
 * uAccept < p(x) / q(x); otherwise draw from norm(max(0, p − q)) with uResidual (in p's order).
 */
export function speculativeSample(p: DraftDistribution, q: DraftDistribution, x: number, uAccept: number, uResidual: number): { token: number; kept: boolean } {
  // q by id, once: a row without top-k holds the whole vocabulary (151,936 ids for Qwen3).
  const qById = new Map<number, number>();
  q.ids.forEach((id, i) => qById.set(id, q.probs[i]!));
  const xi = p.ids.indexOf(x);
  const px = xi < 0 ? 0 : p.probs[xi]!, qx = qById.get(x) ?? 0;
  if (qx > 0 && uAccept < px / qx) return { token: x, kept: true };
  const residual = p.ids.map((id, i) => Math.max(0, p.probs[i]! - (qById.get(id) ?? 0)));
  const total = residual.reduce((a, b) => a + b, 0);
  // total is 0 only when p ≤ q everywhere, i.e. p = q: then x is always kept above (or q never drew x).
  const weights = total > 0 ? residual : p.probs;
  const target = uResidual * (total > 0 ? total : 1);
  let running = 0;
  for (let i = 0; i < weights.length; i++) {
    running += weights[i]!;
    if (running > target) return { token: p.ids[i]!, kept: false };
  }
  return { token: p.ids[p.ids.length - 1]!, kept: false };
}

/** The two uniform numbers of the standard rule at a position (its seed), apart from plain sampling's. */
export function ruleUniforms(seed: number): [number, number] {
  const prng = new Prng((seed ^ 0x5bd1e995) >>> 0);
  return [prng.nextFloat(), prng.nextFloat()];
}
