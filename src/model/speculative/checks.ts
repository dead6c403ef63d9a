// When speculation can run, and whether a drafted row was picked under the constraint the real grammar
// gives that position.
import type { LayerEngine, TokenConstraint } from '../engine-types.ts';
import type { GenerateOptions } from '../generate-types.ts';

/** Why speculation cannot run for this request on this engine, or null when it can. */
export function speculationOff(engine: LayerEngine, opts: GenerateOptions): string | null {
  if (engine.recurrent) return 'the model has recurrent layers, whose state a rejected draft cannot be cut back from (attention-only models for now)';
  if (opts.constraint && !opts.constraint.lookahead) return 'the token constraint cannot look ahead, so drafted tokens cannot be checked against it';
  return null;
}

function sameBits(a: Uint32Array | undefined, b: Uint32Array | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether two constraints allow the same tokens the same way (null/undefined = free). */
export function sameConstraint(a: TokenConstraint | null | undefined, b: TokenConstraint | null | undefined): boolean {
  if (!a || !b) return !a === !b || (!a?.bits && !b?.bits && !a?.greedy && !b?.greedy);
  return Boolean(a.greedy) === Boolean(b.greedy) && sameBits(a.bits, b.bits);
}
