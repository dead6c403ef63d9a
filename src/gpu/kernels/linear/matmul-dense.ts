// matmul_dense (shaders/matmul_dense.wgsl on shaders/lib/matmul_tiles.wgsl): the prefill matmul for a
// dense F32 / F16 / BF16 weight, one op per row chunk, in the device's tuned tile.
import tiles from '../../../../shaders/lib/matmul_tiles.wgsl?raw';
import source from '../../../../shaders/matmul_dense.wgsl?raw';
import { wdtypeOf, type GpuLinear, type GpuLinearChunk } from '../../gpu-weights.ts';
import { defineKernel } from '../../kernel.ts';
import type { Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';
import type { MatmulTilesLayout } from '../../tuning.ts';
import { Epilogue, MATMUL_BINDINGS, jobPlain, type LinearTarget } from './linear-contract.ts';
import { matmulTilesOp } from './matmul-tiles.ts';

export const MATMUL_DENSE = defineKernel({
  name: 'matmul_dense',
  source,
  libs: [tiles, jobPlain],
  constants: Epilogue,
  bindings: MATMUL_BINDINGS.dense,
});

export function denseMatmulOp(cache: PipelineCache, tile: MatmulTilesLayout, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget, uniform: GPUBuffer): Op {
  return matmulTilesOp(cache, MATMUL_DENSE, tile, w, chunk, t, {
    consts: { WDTYPE: wdtypeOf(chunk) },
    buffers: { step: t.step, weight: chunk.buffers[0]!, x: t.x, y: t.y, chunk: uniform },
  });
}
