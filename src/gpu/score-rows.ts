// A speculative pass's candidates for every row of hidden [m, H] in one submit and one read-back. The
// rows, each row's sampling params and mask are staged in a scratch buffer; per row the encoder copies
// them into the head's input, params and mask, runs head → top-k (with each block's unmasked best when the
// row's constraint wants to hear of an overrule) in a compute pass of its own, and copies the row's candidates
// out, so one map reads them all.
import type { RowCandidates, RowSampling } from '../model/engine-types.ts';
import { SamplingError } from '../model/engine-errors.ts';
import { isAllowed } from '../model/sampler.ts';
import { candidatesOf } from './candidates.ts';
import type { HeadState } from './head.ts';
import { uniformWords } from './kernel.ts';
import { TOPK_BLOCKS } from './kernels/sampling/topk-blocks.ts';
import { encodeOps } from './op.ts';
import type { Readbacks } from './readback.ts';

export interface ScoreTarget {
  device: GPUDevice;
  head: HeadState;
  x: GPUBuffer;                // the head's input row (the activations' x, row 0)
  hiddenSize: number;
  reads: Readbacks;
}

/** ks[i]: candidates row i needs on the device (1 = argmax; none may be 0). The step uniform must say n = 1. */
export async function scoreRowsOnDevice(t: ScoreTarget, hidden: Float32Array, rows: readonly RowSampling[], ks: readonly number[]): Promise<RowCandidates[]> {
  const { device, head } = t;
  const H = t.hiddenSize, m = rows.length, maskBytes = head.maskWords * 4;
  // scratch: [rows m·H f32][per row: params 16 B][per row: mask maskWords u32]
  const paramsAt = m * H * 4, masksAt = paramsAt + m * 16;
  const scratch = t.reads.scratch(masksAt + m * maskBytes);
  const src = (a: Float32Array | Uint32Array) => a as unknown as GPUAllowSharedBufferSource;
  device.queue.writeBuffer(scratch, 0, src(hidden));
  const reports = rows.map((r) => Boolean(r.constraint?.bits && r.constraint.overruled));
  for (const [i, r] of rows.entries()) {
    const bits = r.constraint?.bits;
    const words = bits ? Math.min(bits.length, head.maskWords) : 0;
    device.queue.writeBuffer(scratch, paramsAt + i * 16, src(uniformWords(TOPK_BLOCKS.bindings.params, { use_mask: bits ? 1 : 0, mask_words: words, report_top: reports[i] ? 1 : 0 })));
    if (bits && words > 0) device.queue.writeBuffer(scratch, masksAt + i * maskBytes, src(bits), 0, words);
  }
  const sizes = rows.map((_, i) => ({ masked: head.blocks * ks[i]! * 8, unmasked: reports[i] ? head.blocks * 8 : 0 }));
  const total = sizes.reduce((sum, r) => sum + r.masked + r.unmasked, 0);
  const staging = t.reads.staging(total);
  const encoder = device.createCommandEncoder();
  let at = 0, dispatches = 0;
  for (const [i, r] of rows.entries()) {
    encoder.copyBufferToBuffer(scratch, i * H * 4, t.x, 0, H * 4);
    encoder.copyBufferToBuffer(scratch, paramsAt + i * 16, head.params, 0, 16);
    if (r.constraint?.bits) encoder.copyBufferToBuffer(scratch, masksAt + i * maskBytes, head.mask, 0, maskBytes);
    const pass = encoder.beginComputePass();
    dispatches += encodeOps(pass, [...head.logitOps, ks[i] === 1 ? head.argmaxOp : head.topkOp(ks[i]!)], 1);
    pass.end();
    // best: [blocks, k] candidates, then [blocks] unmasked bests when reporting (topk_blocks' report_top)
    encoder.copyBufferToBuffer(head.best, 0, staging, at, sizes[i]!.masked + sizes[i]!.unmasked);
    at += sizes[i]!.masked + sizes[i]!.unmasked;
  }
  const mapped = await t.reads.submit(encoder, staging, total, dispatches);
  at = 0;
  return rows.map((r, i) => {
    const cands = candidatesOf(mapped.slice(at, at + sizes[i]!.masked)).slice(0, ks[i]!);
    at += sizes[i]!.masked;
    const unmasked = reports[i] ? candidatesOf(mapped.slice(at, at + sizes[i]!.unmasked)) : undefined;
    at += sizes[i]!.unmasked;
    if (cands.length === 0) throw new SamplingError(`the token constraint allows no token with a finite logit (vocabulary ${head.vocab})`);
    if (unmasked && !isAllowed(r.constraint!, unmasked[0]?.id ?? cands[0]!.id)) r.constraint!.overruled!();
    return { ids: cands.map((c) => c.id), logits: cands.map((c) => c.value) };
  });
}
