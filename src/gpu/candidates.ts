// Candidate selection on the device, shared by the WebGPU engine's sampling paths: how many candidates a
// pick needs (1 = argmax), and topk_blocks' read-back (value, id) pairs turned into sorted candidates.
import type { SamplingOptions, TokenConstraint } from '../model/engine-types.ts';
import { SamplingError } from '../model/engine-errors.ts';

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
