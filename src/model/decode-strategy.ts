// How the Generator's decode loop turns one step into accepted tokens: plain decoding (feed the last
// token, pick the next) or speculative decoding (feed it with a drafter's guesses and keep what the model
// agrees with, docs/room-speed.md). Both reach the engine through its one decode call; they differ only in
// how many rows they ask for and whether the engine may start on the next token early (`ahead`).
import { rowOf, type LayerEngine, type SamplingOptions, type TokenConstraint } from './engine-types.ts';
import type { GenerateOptions } from './generate-types.ts';
import { pickRow, tokenSeed } from './sampler.ts';
import { speculationOff } from './speculative/checks.ts';
import { speculativePass, type PassResult } from './speculative/pass.ts';
import { DEFAULT_MAX_DRAFT } from './speculative/types.ts';

/** Where a step starts: the answer so far and what the next token is picked after. */
export interface DecodeStep {
  /** The token fed now (the answer's last); undefined on the first step, picked after `hidden`. */
  previous: number | undefined;
  /** The prompt's last hidden row [H] (read on the first step only). */
  hidden: Float32Array;
  /** The prompt and the answer so far. */
  context: readonly number[];
  /** The answer so far (what the constraint is asked with). */
  answer: readonly number[];
  /** The real constraint of the next token, already asked for. */
  first: TokenConstraint | null | undefined;
  /** Tokens the answer may still take after the next one (the answer cap and the context). */
  room: number;
}

/** What a step accepted: its picks in order, the constraints they were chosen under, drafted and kept counts. */
export type AcceptedTokens = PassResult;

export interface DecodeStrategy {
  step(s: DecodeStep): Promise<AcceptedTokens>;
}

/** The strategy for a request, and why speculation asked for is off (null when it is on or not asked for). */
export function decodeStrategy(engine: LayerEngine, opts: GenerateOptions, sampling: SamplingOptions, seed: number): { strategy: DecodeStrategy; off: string | null } {
  const spec = opts.speculate;
  const off = spec ? speculationOff(engine, opts) : null;
  const maxDraft = spec && !off ? Math.max(0, Math.floor(spec.maxDraft ?? DEFAULT_MAX_DRAFT)) : 0;
  const pick = (s: DecodeStep, ahead: boolean) => pickOne(engine, s, { ...sampling, seed: tokenSeed(seed, s.context.length) }, ahead);
  // Speculating with no draft length at all is plain decoding (the step's counts still say passes).
  if (!spec || maxDraft === 0) return { strategy: { step: (s) => pick(s, true) }, off };
  const stopTokens = new Set(opts.stopTokens ?? []);
  return {
    off,
    strategy: {
      // Never ahead: the next step is a pass, which would drop a next token started early. Nothing
      // drafted is a pass of one row: the fed token and the model's pick.
      step: (s) => (s.previous === undefined ? pick(s, false) : speculativePass({
        engine, drafter: spec.drafter, context: s.context, answer: s.answer, maxDraft: Math.max(0, Math.min(maxDraft, s.room)),
        sampling, seed, stopTokens, constraint: opts.constraint, first: s.first, signal: opts.signal,
      })),
    },
  };
}

/** One row: feed the last token (or take the prompt's row) and pick the next. */
async function pickOne(engine: LayerEngine, s: DecodeStep, opts: SamplingOptions, ahead: boolean): Promise<AcceptedTokens> {
  const rows = [rowOf(opts, s.first)];
  const input = s.previous === undefined ? { hidden: s.hidden } : { tokens: [s.previous] };
  const [row] = await engine.decode({ ...input, rows, ...(ahead ? { ahead } : {}) });
  return { picks: [pickRow(row!, opts, s.first)], constraints: [s.first], overruled: [false], drafted: 0, kept: 0 };
}
