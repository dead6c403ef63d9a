// Token sampling: greedy, temperature, top-k, top-p, with a caller's constraint (allowed-id bitset,
// `greedy` flag). Deterministic for a seed and stateless per call: the random number for one token
// comes from PRNG(seed). The Generator derives a fresh seed per position with `tokenSeed`, so the same
// prompt, seed and options give the same tokens whatever was cached and whichever engine samples.
//
// The exact procedure (a GPU engine that samples on the device must follow it to agree):
//   1. Allowed ids: bit (id % 32) of word floor(id / 32) of `bits` is set (ids past the end of `bits`
//      are not allowed); no `bits` = every id. Ids whose logit is -Infinity are never picked.
//   2. Greedy (temperature <= 0 or constraint.greedy): the allowed id with the largest logit; ties go
//      to the lowest id.
//   3. Otherwise candidates are the allowed ids sorted by logit, descending (ties: lower id first);
//      top-k keeps the first k; p_i = softmax(logit_i / T) over them (in doubles); top-p keeps the
//      shortest prefix whose probabilities sum to >= topP; u = PRNG(seed).nextFloat() in [0, 1);
//      the pick is the first candidate whose running sum exceeds u · (sum of kept p).
//
// PRNG: xoshiro128** (Blackman & Vigna) with its four state words seeded from splitmix32 (a Weyl
// sequence with step 0x9e3779b9 through murmur3's 32-bit finalizer). nextFloat = (next() >>> 8) / 2^24,
// a multiple of 2^-24, exactly representable in f32 (a WGSL port gives the same value).

import type { RowCandidates, SamplingOptions, TokenConstraint } from './sampling-types.ts';
import { SamplingError } from './engine-errors.ts';

/** murmur3's 32-bit finalizer: a bijective mix of a u32. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** Seeded xoshiro128** generator. The seed is taken modulo 2^32. */
export class Prng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(seed: number) {
    let weyl = seed >>> 0;
    const next = (): number => {
      weyl = (weyl + 0x9e3779b9) >>> 0;
      return fmix32(weyl);
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1; // the one forbidden state
  }

  /** Next u32. */
  next(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.s1 << 9) >>> 0;
    this.s2 = (this.s2 ^ this.s0) >>> 0;
    this.s3 = (this.s3 ^ this.s1) >>> 0;
    this.s1 = (this.s1 ^ this.s2) >>> 0;
    this.s0 = (this.s0 ^ this.s3) >>> 0;
    this.s2 = (this.s2 ^ t) >>> 0;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in [0, 1), a multiple of 2^-24. */
  nextFloat(): number {
    return (this.next() >>> 8) / 16777216;
  }
}

/** The seed for sampling the token at sequence position `position` under a generation seed. */
export function tokenSeed(seed: number, position: number): number {
  return fmix32(((seed >>> 0) ^ fmix32((position >>> 0) + 0x632be5ab)) >>> 0);
}

/** True when the constraint allows `id` (no bitset = all ids). */
export function isAllowed(constraint: TokenConstraint | undefined, id: number): boolean {
  const bits = constraint?.bits;
  if (!bits) return true;
  const word = id >>> 5;
  return word < bits.length && ((bits[word]! >>> (id & 31)) & 1) === 1;
}

/** A constraint allowing exactly `ids` over a vocabulary of `vocabSize`. */
export function allowOnly(ids: Iterable<number>, vocabSize: number, greedy = false): TokenConstraint {
  const bits = new Uint32Array(Math.ceil(vocabSize / 32));
  for (const id of ids) {
    if (!Number.isInteger(id) || id < 0 || id >= vocabSize) throw new SamplingError(`allowOnly: token id ${id} outside [0, ${vocabSize})`);
    bits[id >>> 5] = (bits[id >>> 5]! | (1 << (id & 31))) >>> 0;
  }
  return { bits, greedy };
}

function noTokenError(logits: Float32Array): SamplingError {
  return new SamplingError(`the token constraint allows no token with a finite logit (vocabulary ${logits.length})`);
}

/** Index of the largest allowed logit (ties: lowest id). Throws SamplingError when none is allowed. */
export function argmax(logits: Float32Array, constraint?: TokenConstraint): number {
  let best = -1;
  let bestValue = -Infinity;
  for (let id = 0; id < logits.length; id++) {
    const v = logits[id]!;
    if (v > bestValue && isAllowed(constraint, id)) {
      best = id;
      bestValue = v;
    }
  }
  if (best < 0) throw noTokenError(logits);
  return best;
}

function checkOptions(opts: SamplingOptions): void {
  if (Number.isNaN(opts.temperature)) throw new SamplingError('temperature is NaN');
  if (opts.topK !== undefined && !(Number.isInteger(opts.topK) && opts.topK >= 0)) {
    throw new SamplingError(`topK must be a whole number >= 0, got ${opts.topK}`);
  }
  if (opts.topP !== undefined && !(opts.topP > 0 && opts.topP <= 1)) {
    throw new SamplingError(`topP must be in (0, 1], got ${opts.topP}`);
  }
}

/**
 * The kept candidates of a sorted candidate list and their unnormalised weights: temperature, top-k and
 * top-p as described at the top of this file. `weights[i]` belongs to candidate i; `kept` of them remain
 * (the first ones), summing to `total`. Shared by pickFromSorted and speculative sampling, so both see
 * the same distribution, computed the same way.
 */
export function keptWeights(logits: ArrayLike<number>, count: number, opts: SamplingOptions): { weights: Float64Array; kept: number; total: number } {
  const n = opts.topK ? Math.min(opts.topK, count) : count;
  if (n === 0) throw new SamplingError('no candidate tokens to sample from');
  const max = logits[0]!;
  const weights = new Float64Array(n);
  let all = 0;
  for (let i = 0; i < n; i++) {
    weights[i] = Math.exp((logits[i]! - max) / opts.temperature);
    all += weights[i]!;
  }
  let kept = n;
  if (opts.topP !== undefined && opts.topP < 1) {
    let running = 0;
    for (let i = 0; i < n; i++) {
      running += weights[i]! / all;
      if (running >= opts.topP) {
        kept = i + 1;
        break;
      }
    }
  }
  let total = 0;
  for (let i = 0; i < kept; i++) total += weights[i]!;
  return { weights, kept, total };
}

/**
 * Pick a token from candidate (id, logit) pairs already sorted by logit descending (ties: lower id
 * first) with uniform u in [0, 1): temperature, top-k, top-p as described at the top of this file.
 * Exported so an engine that finds the top candidates on the device can finish the choice identically.
 */
export function pickFromSorted(ids: ArrayLike<number>, logits: ArrayLike<number>, opts: SamplingOptions, u: number): number {
  const { weights, kept, total } = keptWeights(logits, ids.length, opts);
  const target = u * total;
  let running = 0;
  for (let i = 0; i < kept; i++) {
    running += weights[i]!;
    if (running > target) return ids[i]!;
  }
  return ids[kept - 1]!;
}

/**
 * The candidates sampling chooses from, best first: the allowed argmax alone when greedy, else every
 * allowed id with a finite logit, sorted by logit (ties: lower id). Reports an overruled top choice
 * like sampleLogits. What an engine without on-device selection returns for one row of a verification
 * pass (speculative decoding); sampleLogits is pickFromSorted over these.
 */
export function sortedCandidates(logits: Float32Array, opts: SamplingOptions, constraint?: TokenConstraint): { ids: number[]; logits: number[] } {
  checkOptions(opts);
  if (constraint?.bits && constraint.overruled && !isAllowed(constraint, argmax(logits))) constraint.overruled();
  if (constraint?.greedy || !(opts.temperature > 0)) {
    const id = argmax(logits, constraint);
    return { ids: [id], logits: [logits[id]!] };
  }
  const ids: number[] = [];
  for (let id = 0; id < logits.length; id++) {
    if (logits[id]! > -Infinity && isAllowed(constraint, id)) ids.push(id);
  }
  if (ids.length === 0) throw noTokenError(logits);
  ids.sort((a, b) => logits[b]! - logits[a]! || a - b);
  return { ids, logits: ids.map((id) => logits[id]!) };
}

/** True when a row with these options and constraint is picked greedily (argmax under the mask). */
export function isGreedy(opts: SamplingOptions, constraint?: TokenConstraint | null): boolean {
  return Boolean(constraint?.greedy) || !(opts.temperature > 0);
}

/**
 * The token plain decoding picks from a row's candidates (an engine's decode, or sortedCandidates),
 * seeded by opts.seed: the same token sampleLogits gives on the row's logits.
 */
export function pickRow(c: RowCandidates, opts: SamplingOptions, constraint?: TokenConstraint | null): number {
  if (c.ids.length === 0) throw new SamplingError('no candidate tokens to sample from');
  if (isGreedy(opts, constraint)) return c.ids[0]!;
  return pickFromSorted(c.ids, c.logits, opts, new Prng(opts.seed ?? 0).nextFloat());
}

/** Sample one token id from logits [V]. Greedy when temperature <= 0 or the constraint says so. */
export function sampleLogits(logits: Float32Array, opts: SamplingOptions, constraint?: TokenConstraint): number {
  return pickRow(sortedCandidates(logits, opts, constraint), opts, constraint);
}
