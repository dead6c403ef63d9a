// The WebGPU engine's token picks on the device (engine.ts's decode of one row, and sampleAndRun): head →
// argmax or top-k under the mask in the same submit as the work before it, one read-back, finished like the
// reference sampler. Kept apart so engine.ts stays about its calls, their order and the KV cache.
import type { RowCandidates, SamplingOptions, TokenConstraint } from '../model/engine-types.ts';
import { SamplingError } from '../model/engine-errors.ts';
import { isAllowed } from '../model/sampler.ts';
import { bestOf, candidatesOf, checkDevicePick, pickUniform } from './candidates.ts';
import type { HeadState } from './head.ts';
import { uniformWords } from './kernel.ts';
import { TOPK_BLOCKS } from './kernels/sampling/topk-blocks.ts';
import { samplePickWords } from './kernels/sampling/sample-pick.ts';
import type { Op } from './op.ts';
import type { Readbacks } from './readback.ts';

/** What a pick runs on; each submit is counted by the read-backs' hooks. The step uniform is written by the caller. */
export interface PickTarget {
  device: GPUDevice;
  head: HeadState;
  reads: Readbacks;
}

/** sampleAndRun's pick: the head's input row is written; the pick goes on through `layerOps`. */
export interface PickAndRunTarget extends PickTarget {
  x: GPUBuffer;                // the activations' x: the head's input row, then the layers' output row
  ids: GPUBuffer;              // [maxBatch] u32: the token the embedding gathers
  hiddenSize: number;
  layerOps: readonly Op[];     // embedding gather + the layers the pick runs through
  /** The engine's test seam (skewDeviceUniform): maps the uniform given to the device's sampled pick. */
  skewUniform: ((u: number) => number) | undefined;
  /** The reference sampler overruled the device's pick: the layers run again (counted in pickRedos). */
  onRedo(): void;
}

/** Typed arrays from any caller (maybe over a SharedArrayBuffer view) as a writeBuffer source. */
const src = (a: Float32Array | Uint32Array): GPUAllowSharedBufferSource => a as unknown as GPUAllowSharedBufferSource;

async function submitAndRead(t: PickTarget, ops: readonly Op[], from: GPUBuffer, bytes: number): Promise<ArrayBuffer> {
  return (await t.reads.readMany(ops, 1, [{ src: from, bytes }]))[0]!;
}

/**
 * Encode `before`, the head and top-k in one submit, read the row's candidates back (the first k, best
 * first: what pickRow finishes the choice from, as the reference does). When the caller asks whether the
 * mask overrules the model (`overruled`), the same pass also reports each block's best logit with no
 * mask: the model's own top choice, checked against the mask here.
 */
export async function candidatesOnDevice(t: PickTarget, before: Op[], k: number, constraint?: TokenConstraint): Promise<RowCandidates> {
  const bits = constraint?.bits;
  const report = Boolean(bits && constraint?.overruled);
  const { cands, top } = await candidates(t, [...before, ...t.head.logitOps], k, bits, report);
  if (report && top !== undefined && !isAllowed(constraint!, top)) constraint!.overruled!();
  const best = cands.slice(0, k);
  return { ids: best.map((c) => c.id), logits: best.map((c) => c.value) };
}

/**
 * Runs `ops` then top-k (under `bits` when given) in one submit; the candidates, best first, and with
 * `report` the best id with no mask.
 */
async function candidates(t: PickTarget, ops: Op[], k: number, bits: Uint32Array | undefined, report: boolean): Promise<{ cands: { id: number; value: number }[]; top?: number }> {
  const { head } = t;
  const maskWords = bits ? Math.min(bits.length, head.maskWords) : 0;
  if (bits && maskWords > 0) t.device.queue.writeBuffer(head.mask, 0, src(bits), 0, maskWords);
  const params = { use_mask: bits ? 1 : 0, mask_words: maskWords, report_top: report ? 1 : 0 };
  t.device.queue.writeBuffer(head.params, 0, src(uniformWords(TOPK_BLOCKS.bindings.params, params)));
  const topk = k === 1 ? head.argmaxOp : head.topkOp(k);
  const pairs = new Uint32Array(await submitAndRead(t, [...ops, topk], head.best, head.blocks * (k + (report ? 1 : 0)) * 8));
  const f = new Float32Array(pairs.buffer);
  const read = (from: number, to: number) => {
    const out: { id: number; value: number }[] = [];
    for (let i = from * 2; i < to * 2; i += 2) if (pairs[i + 1] !== 0xffffffff) out.push({ value: f[i]!, id: pairs[i + 1]! });
    return out.sort((a, b) => b.value - a.value || a.id - b.id);
  };
  const cands = read(0, head.blocks * k);
  if (cands.length === 0) throw new SamplingError(`the token constraint allows no token with a finite logit (vocabulary ${head.vocab})`);
  const top = report ? read(head.blocks * k, head.blocks * (k + 1))[0]?.id : undefined;
  return top === undefined ? { cands } : { cands, top };
}

/**
 * sampleAndRun's one submit: head → candidates (k = 1: argmax → pick_best; else top-k per block →
 * sample_pick) → the pick into the ids buffer → `layerOps`, reading back the candidates, the device's pick
 * and the layers' row together. The reference sampler checks a sampled pick; when it differs the layers
 * run again on the reference's token over the same position (a second read-back). The caller advances
 * the layers' KV length by one.
 */
export async function pickAndRunOnDevice(t: PickAndRunTarget, k: number, opts: SamplingOptions, constraint: TokenConstraint | undefined): Promise<{ token: number; candidates: RowCandidates; hidden: Float32Array }> {
  const { device, head } = t;
  const H = t.hiddenSize;
  const bits = constraint?.bits;
  const maskWords = bits ? Math.min(bits.length, head.maskWords) : 0;
  if (bits && maskWords > 0) device.queue.writeBuffer(head.mask, 0, src(bits), 0, maskWords);
  const report = Boolean(bits && constraint?.overruled);
  device.queue.writeBuffer(head.params, 0, src(uniformWords(TOPK_BLOCKS.bindings.params, { use_mask: bits ? 1 : 0, mask_words: maskWords, report_top: report ? 1 : 0 })));
  const sampled = k > 1;
  if (sampled) {
    const u = pickUniform(opts);
    device.queue.writeBuffer(head.pickParams, 0, src(samplePickWords({ k, temperature: opts.temperature, topP: opts.topP ?? 1, u: t.skewUniform?.(u) ?? u })));
  }
  const pickOps = sampled ? [head.topkOp(k), head.samplePickOp] : [head.argmaxOp, head.pickOp];
  const pairBytes = head.blocks * k * 8;
  // best: [blocks, k] masked candidates, then [blocks] unmasked bests when reporting (topk_blocks' report_top)
  const [pairs, picked, rows] = await t.reads.readMany([...head.logitOps, ...pickOps, ...t.layerOps], 1, [
    { src: head.best, bytes: pairBytes + (report ? head.blocks * 8 : 0) }, { src: head.picked, bytes: sampled ? 4 : 0 }, { src: t.x, bytes: H * 4 },
  ]);
  const cands = candidatesOf(pairs!.slice(0, pairBytes));
  if (cands.length === 0) throw new SamplingError(`the token constraint allows no token with a finite logit (vocabulary ${head.vocab})`);
  if (report && !isAllowed(constraint!, bestOf(pairs!.slice(pairBytes)) ?? cands[0]!.id)) constraint!.overruled!();
  const { token, redo } = sampled ? checkDevicePick(cands, k, opts, new Uint32Array(picked!)[0]!) : { token: cands[0]!.id, redo: false };
  let out = rows!;
  if (redo) {
    // the layers ran on the device's pick at pos0: run them on the reference's token over it
    t.onRedo();
    device.queue.writeBuffer(t.ids, 0, new Uint32Array([token]));
    out = await submitAndRead(t, t.layerOps, t.x, H * 4);
  }
  const best = cands.slice(0, k);
  return { token, candidates: { ids: best.map((c) => c.id), logits: best.map((c) => c.value) }, hidden: new Float32Array(out) };
}

/** What submitGreedy reads back: the argmax's block pairs and the id the device picked (and fed on). */
export interface GreedyRead { pairs: ArrayBuffer; picked: number }

/**
 * Plain greedy decoding's submit, with no mask: `before` (gather → layers) → head → argmax → the pick
 * written into ids[0]; the argmax's pairs and ids[0] copied out. The pick on the device lets the next
 * token's submit go in before this read-back returns (engine.ts decodeOne); greedyCandidates reads it.
 */
export function submitGreedy(t: PickTarget & { ids: GPUBuffer }, before: readonly Op[]): Promise<GreedyRead> {
  const { head } = t;
  t.device.queue.writeBuffer(head.params, 0, src(uniformWords(TOPK_BLOCKS.bindings.params, { use_mask: 0, mask_words: 0, report_top: 0 })));
  return t.reads.readMany([...before, ...head.logitOps, head.argmaxOp, head.pickOp], 1, [{ src: head.best, bytes: head.blocks * 8 }, { src: t.ids, bytes: 4 }])
    .then(([pairs, picked]) => ({ pairs: pairs!, picked: new Uint32Array(picked!)[0]! }));
}

/** The candidate in submitGreedy's pairs (the argmax, best first as candidates() sorts): what pickRow finishes a greedy choice from. */
export function greedyCandidates(head: HeadState, read: GreedyRead): RowCandidates {
  const cands = candidatesOf(read.pairs);
  if (cands.length === 0) throw new SamplingError(`no token has a finite logit (vocabulary ${head.vocab})`);
  return { ids: [cands[0]!.id], logits: [cands[0]!.value] };
}
