// matmul_rows_dense (shaders/matmul_rows_dense.wgsl on shaders/lib/matmul_rows.wgsl): the prefill
// matmul for a dense F32 / F16 / BF16 weight on SIMD rasterizers, one op per row chunk.
import rows from '../../../shaders/lib/matmul_rows.wgsl?raw';
import { jobPlain } from './experts.ts';
import source from '../../../shaders/matmul_rows_dense.wgsl?raw';
import { wdtypeOf, type GpuLinear, type GpuLinearChunk } from '../gpu-weights.ts';
import { defineKernel, read, rw, STEP } from '../kernel.ts';
import type { Op } from '../op.ts';
import type { PipelineCache } from '../pipelines.ts';
import type { MatmulRowsLayout } from '../tuning.ts';
import { CHUNK, Epilogue, type LinearTarget } from './linear-contract.ts';
import { matmulRowsOp } from './matmul-rows.ts';

export const MATMUL_ROWS_DENSE = defineKernel({
  name: 'matmul_rows_dense',
  source,
  libs: [rows, jobPlain],
  constants: Epilogue,
  bindings: {
    step: STEP,                        // n = tokens
    weight: read('array<vec4<u32>>'),  // [rows, ceil(k / per vec4)]: 4 F32 or 8 F16/BF16 per vec4, zero-padded
    x: read('array<f32>'),             // [n, k]
    y: rw('array<f32>'),               // [n, out_stride]
    chunk: CHUNK,
  },
});

export function denseMatmulRowsOp(cache: PipelineCache, layout: MatmulRowsLayout, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget, uniform: GPUBuffer): Op {
  return matmulRowsOp(cache, MATMUL_ROWS_DENSE, layout, w, chunk, t, {
    consts: { WDTYPE: wdtypeOf(chunk) },
    buffers: { step: t.step, weight: chunk.buffers[0]!, x: t.x, y: t.y, chunk: uniform },
  });
}
