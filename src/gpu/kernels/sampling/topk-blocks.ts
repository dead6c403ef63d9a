// topk_blocks (shaders/topk_blocks.wgsl): the k best allowed logits of each block of ids, on the device.
import source from '../../../../shaders/topk_blocks.wgsl?raw';
import bestCandidate from '../../../../shaders/lib/best_candidate.wgsl?raw';
import { defineKernel, read, rw, uniformStruct, type BufferSet } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';
import { TOPK_GPU_LAYOUT, type TopkLayout } from '../../tuning.ts';

export const TOPK_BLOCKS = defineKernel({
  name: 'topk_blocks',
  source,
  libs: [bestCandidate],
  bindings: {
    params: uniformStruct('Params', ['use_mask', 'mask_words', 'report_top']),   // written per sample
    logits: read('array<f32>'),      // [V]
    mask: read('array<u32>'),        // [≥ 1] allowed-id bitset
    best: rw('array<vec2<u32>>'),    // [blocks, TOPK] (+ [blocks] unmasked bests with report_top): (f32 bits, id); id 0xffffffff = none
  },
});

export function topkBlocks(V: number, layout: TopkLayout = TOPK_GPU_LAYOUT): number {
  return Math.ceil(V / (layout.WG * layout.ITEMS));
}

export function topkOp(cache: PipelineCache, buffers: BufferSet<typeof TOPK_BLOCKS.bindings>, V: number, k: number, layout: TopkLayout = TOPK_GPU_LAYOUT): Op {
  const blocks = topkBlocks(V, layout);
  return kernelOp(cache, TOPK_BLOCKS, {
    label: `top-${k}`, consts: { V, TOPK: k, ITEMS: layout.ITEMS, WG: layout.WG }, buffers, grid: () => [blocks, 1, 1],
  });
}
