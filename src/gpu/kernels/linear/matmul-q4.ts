// matmul_q4 (shaders/matmul_q4.wgsl on shaders/lib/matmul_tiles.wgsl): the prefill matmul for an MLC
// q4f16_1 weight, one op per row chunk, in the device's tuned tile.
import tiles from '../../../../shaders/lib/matmul_tiles.wgsl?raw';
import source from '../../../../shaders/matmul_q4.wgsl?raw';
import type { GpuLinear, GpuLinearChunk } from '../../gpu-weights.ts';
import { defineKernel } from '../../kernel.ts';
import type { Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';
import type { MatmulTilesLayout } from '../../tuning.ts';
import { Epilogue, MATMUL_BINDINGS, jobPlain, type LinearTarget } from './linear-contract.ts';
import { matmulTilesOp } from './matmul-tiles.ts';

export const MATMUL_Q4 = defineKernel({
  name: 'matmul_q4',
  source,
  libs: [tiles, jobPlain],
  constants: Epilogue,
  bindings: MATMUL_BINDINGS.q4,
});

export function q4MatmulOp(cache: PipelineCache, tile: MatmulTilesLayout, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget, uniform: GPUBuffer): Op {
  const [qweight, scales] = chunk.buffers as [GPUBuffer, GPUBuffer];
  return matmulTilesOp(cache, MATMUL_Q4, tile, w, chunk, t, {
    consts: {},
    buffers: { step: t.step, qweight, scales, x: t.x, y: t.y, chunk: uniform },
  });
}
