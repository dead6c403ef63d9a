// Upper bounds for prompt lookup on the corpus: drafters that know the answer (the script) and draft
// the longest run of the next tokens that a copy from the context could give, and nothing they know to
// be wrong. They are measurements, not products: they say how far a better lookup could go, and whether
// the gap to the target is in what the drafter picks or in what a pass costs.
//
//   - 'anywhere': the next tokens as the longest run found anywhere earlier in the context (a perfect
//     copy drafter, free to pick any source);
//   - 'anchored': the same, among the runs that follow an earlier occurrence of the context's last
//     token (what any drafter keyed on the final n-gram can reach, whatever n-gram and occurrence it
//     chooses).
import type { Draft, Drafter, DraftRequest } from '../../src/model/speculative/types.ts';
import type { Script } from './target.ts';

export type OracleKind = 'anywhere' | 'anchored';

/** The longest m ≤ max such that truth[0, m) occurs in context at some s (after its last token, when anchored). */
export function oracleRun(context: readonly number[], truth: readonly number[], max: number, kind: OracleKind): number {
  const L = context.length;
  const last = context[L - 1];
  let best = 0;
  for (let s = 0; s < L && best < max; s++) {
    if (context[s] !== truth[0]) continue;
    if (kind === 'anchored' && (s === 0 || context[s - 1] !== last)) continue;
    let m = 0;
    while (m < max && m < truth.length && s + m < L && context[s + m] === truth[m]) m++;
    if (m > best) best = m;
  }
  return best;
}

/** Drafts exactly the run oracleRun finds (the script's next tokens), so every drafted token is kept. */
export class OracleDrafter implements Drafter {
  readonly name: string;
  constructor(private readonly script: Script, private readonly kind: OracleKind) {
    this.name = `oracle:${kind}`;
  }

  draft(r: DraftRequest): Draft {
    const at = r.context.length;
    const truth = this.script.tokens.slice(at, at + r.max);
    return { tokens: truth.slice(0, oracleRun(r.context, truth, r.max, this.kind)) };
  }
}
