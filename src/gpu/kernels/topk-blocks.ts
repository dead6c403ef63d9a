// topk_blocks (shaders/topk_blocks.wgsl): the k best allowed logits of each block of ids, on the device.
import source from '../../../shaders/topk_blocks.wgsl?raw';
import { defineKernel, read, rw, uniformStruct, type BufferSet } from '../kernel.ts';
import { kernelOp, type Op } from '../op.ts';
import type { PipelineCache } from '../pipelines.ts';

export const TOPK_BLOCKS = defineKernel({
  name: 'topk_blocks',
  source,
  bindings: {
    params: uniformStruct('Params', ['use_mask', 'mask_words']),   // written per sample
    logits: read('array<f32>'),      // [V]
    mask: read('array<u32>'),        // [≥ 1] allowed-id bitset
    best: rw('array<vec2<u32>>'),    // [blocks, TOPK]: (f32 bits, id); id 0xffffffff = none
  },
});

export const TOPK_WG = 128;
export const TOPK_ITEMS = 8;
/** Ids per block. */
export const TOPK_BLOCK = TOPK_WG * TOPK_ITEMS;

export function topkBlocks(V: number): number {
  return Math.ceil(V / TOPK_BLOCK);
}

export function topkOp(cache: PipelineCache, buffers: BufferSet<typeof TOPK_BLOCKS.bindings>, V: number, k: number): Op {
  const blocks = topkBlocks(V);
  return kernelOp(cache, TOPK_BLOCKS, {
    label: `top-${k}`, consts: { V, TOPK: k, ITEMS: TOPK_ITEMS, WG: TOPK_WG }, buffers, grid: () => [blocks, 1, 1],
  });
}
