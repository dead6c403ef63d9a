// matmul_rows_q4 (shaders/matmul_rows_q4.wgsl on shaders/lib/matmul_rows.wgsl): the prefill matmul for
// an MLC q4f16_1 weight on SIMD rasterizers, one op per row chunk.
import rows from '../../../../shaders/lib/matmul_rows.wgsl?raw';
import source from '../../../../shaders/matmul_rows_q4.wgsl?raw';
import type { GpuLinear, GpuLinearChunk } from '../../gpu-weights.ts';
import { defineKernel } from '../../kernel.ts';
import type { Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';
import type { MatmulRowsLayout } from '../../tuning.ts';
import { Epilogue, MATMUL_BINDINGS, jobPlain, type LinearTarget } from './linear-contract.ts';
import { matmulRowsOp, ROWS_X_LIBS } from './matmul-rows.ts';

export const MATMUL_ROWS_Q4 = defineKernel({
  name: 'matmul_rows_q4',
  source,
  libs: [rows, jobPlain],
  subgroupLibs: ROWS_X_LIBS,
  constants: Epilogue,
  bindings: MATMUL_BINDINGS.q4,
});

export function q4MatmulRowsOp(cache: PipelineCache, layout: MatmulRowsLayout, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget, uniform: GPUBuffer): Op {
  const [qweight, scales] = chunk.buffers as [GPUBuffer, GPUBuffer];
  return matmulRowsOp(cache, MATMUL_ROWS_Q4, layout, w, chunk, t, {
    consts: {},
    buffers: { step: t.step, qweight, scales, x: t.x, y: t.y, chunk: uniform },
  });
}
