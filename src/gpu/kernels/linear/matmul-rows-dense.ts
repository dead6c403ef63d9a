// matmul_rows_dense (shaders/matmul_rows_dense.wgsl on shaders/lib/matmul_rows.wgsl): the prefill
// matmul for a dense F32 / F16 / BF16 weight on SIMD rasterizers, one op per row chunk.
import rows from '../../../../shaders/lib/matmul_rows.wgsl?raw';
import source from '../../../../shaders/matmul_rows_dense.wgsl?raw';
import { wdtypeOf, type GpuLinear, type GpuLinearChunk } from '../../gpu-weights.ts';
import { defineKernel } from '../../kernel.ts';
import type { Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';
import type { MatmulRowsLayout } from '../../tuning.ts';
import { Epilogue, MATMUL_BINDINGS, jobPlain, type LinearTarget } from './linear-contract.ts';
import { matmulRowsOp, ROWS_X_LIBS } from './matmul-rows.ts';

export const MATMUL_ROWS_DENSE = defineKernel({
  name: 'matmul_rows_dense',
  source,
  libs: [rows, jobPlain],
  subgroupLibs: ROWS_X_LIBS,
  constants: Epilogue,
  bindings: MATMUL_BINDINGS.dense,
});

export function denseMatmulRowsOp(cache: PipelineCache, layout: MatmulRowsLayout, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget, uniform: GPUBuffer): Op {
  return matmulRowsOp(cache, MATMUL_ROWS_DENSE, layout, w, chunk, t, {
    consts: { WDTYPE: wdtypeOf(chunk) },
    buffers: { step: t.step, weight: chunk.buffers[0]!, x: t.x, y: t.y, chunk: uniform },
  });
}
