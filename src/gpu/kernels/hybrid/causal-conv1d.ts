// causal_conv1d (shaders/causal_conv1d.wgsl): Gated DeltaNet's depthwise causal conv over the q|k|v
// channels, then SiLU, continuing the layer's rolling conv state [K−1, C] (updated in place).
import source from '../../../../shaders/causal_conv1d.wgsl?raw';
import { defineKernel, read, rw, STEP, type BufferSet } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';

export const CAUSAL_CONV1D = defineKernel({
  name: 'causal_conv1d',
  source,
  bindings: {
    step: STEP,                  // n = tokens
    x: read('array<f32>'),       // [n, XS]: q|k|v in the first C columns of a row
    weight: read('array<f32>'),  // [C, K]
    state: rw('array<f32>'),     // [K−1, C] the previous K−1 inputs, oldest first
    y: rw('array<f32>'),         // [n, C]
  },
});

/** Conv taps the kernel keeps in registers at most. */
export const MAX_CONV_KERNEL = 8;

export interface ConvShape {
  C: number;                   // channels
  K: number;                   // taps, 2 ≤ K ≤ MAX_CONV_KERNEL
  XS: number;                  // row stride of x (≥ C)
}

const WG = 64;

export function causalConv1dOp(cache: PipelineCache, buffers: BufferSet<typeof CAUSAL_CONV1D.bindings>, s: ConvShape, label: string): Op {
  if (!(s.K >= 2 && s.K <= MAX_CONV_KERNEL)) throw new RangeError(`causal_conv1d: ${s.K} taps, the kernel takes 2 .. ${MAX_CONV_KERNEL}`);
  return kernelOp(cache, CAUSAL_CONV1D, { label, consts: { C: s.C, K: s.K, XS: s.XS, WG }, buffers, grid: () => [Math.ceil(s.C / WG), 1, 1] });
}
