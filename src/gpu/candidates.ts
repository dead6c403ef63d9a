// Candidate selection on the device, shared by the WebGPU engine's sampling paths: how many candidates a
// pick needs (1 = argmax), topk_blocks' read-back (value, id) pairs turned into sorted candidates, and the
// check of a pick made on the device (sample_pick, in f32) against the reference sampler (in doubles).
import type { SamplingOptions, TokenConstraint } from '../model/engine-types.ts';
import { SamplingError } from '../model/engine-errors.ts';
import { Prng, pickFromSorted } from '../model/sampler.ts';

/** Largest candidate list sampled on the device; larger top-k (or none) reads all logits back. */
export const MAX_DEVICE_TOPK = 64;

/** k for on-device candidates: 1 when greedy, topK when ≤ MAX_DEVICE_TOPK, 0 = needs all logits. */
export function deviceTopK(opts: SamplingOptions, constraint?: TokenConstraint): number {
  if (Number.isNaN(opts.temperature)) throw new SamplingError('temperature is NaN');
  if (constraint?.greedy || !(opts.temperature > 0)) return 1;
  const k = opts.topK ?? 0;
  return k > 0 && k <= MAX_DEVICE_TOPK ? k : 0;
}

/** topk_blocks' (f32 bits, id) pairs as candidates, best first, ties to the lower id; empty slots dropped. */
export function candidatesOf(pairs: ArrayBuffer): { id: number; value: number }[] {
  const ids = new Uint32Array(pairs), values = new Float32Array(pairs);
  const cands: { id: number; value: number }[] = [];
  for (let i = 0; i < ids.length; i += 2) if (ids[i + 1] !== 0xffffffff) cands.push({ value: values[i]!, id: ids[i + 1]! });
  return cands.sort((a, b) => b.value - a.value || a.id - b.id);
}

/** The best id of top-1 block winners (as candidates() picks); undefined when none. */
export function bestOf(pairs: ArrayBuffer): number | undefined {
  return candidatesOf(pairs)[0]?.id;
}

/** The uniform the reference sampler draws for a token sampled with `opts` (its per-token seed). */
export function pickUniform(opts: SamplingOptions): number {
  return new Prng(opts.seed ?? 0).nextFloat();
}

/** The reference sampler's pick, and whether the device's own pick (already fed to the layers) must be redone. */
export interface PickCheck {
  token: number;
  redo: boolean;
}

/**
 * The pick the reference sampler makes from the device's candidates (best first, as candidatesOf gives
 * them; the first k count), with u = pickUniform(opts), checked against what the device picked (and fed
 * to the layers that ran after it). The two differ only where f32 and doubles round a running sum to
 * different sides of u's target; then the token is still the reference's and the caller redoes the work
 * that followed the device's pick. Throws SamplingError when there are no candidates.
 */
export function checkDevicePick(cands: readonly { id: number; value: number }[], k: number, opts: SamplingOptions, devicePick: number): PickCheck {
  const best = cands.slice(0, k);
  if (best.length === 0) throw new SamplingError('the token constraint allows no token with a finite logit');
  const token = pickFromSorted(best.map((c) => c.id), best.map((c) => c.value), opts, pickUniform(opts));
  return { token, redo: token !== devicePick };
}
