// pick_best (shaders/pick_best.wgsl): the argmax over topk_blocks' per-block winners, written into the
// ids buffer the embedding gather reads, so a picked token is fed on the device.
import source from '../../../../shaders/pick_best.wgsl?raw';
import bestCandidate from '../../../../shaders/lib/best_candidate.wgsl?raw';
import { defineKernel, read, rw, type BufferSet } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';

export const PICK_BEST = defineKernel({
  name: 'pick_best',
  source,
  libs: [bestCandidate],
  bindings: {
    best: read('array<vec2<u32>>'),  // [blocks]: (f32 bits, id) from top-1 blocks
    ids: rw('array<u32>'),           // [≥ 1]: ids[0] = the pick
  },
});

export function pickBestOp(cache: PipelineCache, buffers: BufferSet<typeof PICK_BEST.bindings>, blocks: number): Op {
  return kernelOp(cache, PICK_BEST, { label: 'pick best', consts: { BLOCKS: blocks, WG: 64 }, buffers, grid: () => [1, 1, 1] });
}
