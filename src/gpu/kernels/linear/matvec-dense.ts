// matvec_dense (shaders/matvec_dense.wgsl on shaders/lib/matvec_rows.wgsl): the decode matvec for a
// dense F32 / F16 / BF16 weight, one op per row chunk, in the device's tuned layout.
import rows from '../../../../shaders/lib/matvec_rows.wgsl?raw';
import source from '../../../../shaders/matvec_dense.wgsl?raw';
import { wdtypeOf, type GpuLinear, type GpuLinearChunk } from '../../gpu-weights.ts';
import { defineKernel, read, rw, STEP } from '../../kernel.ts';
import type { Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';
import { CHUNK, Epilogue, jobPlain, type LinearTarget } from './linear-contract.ts';
import { matvecRowsOp } from './matvec-rows.ts';

export const MATVEC_DENSE = defineKernel({
  name: 'matvec_dense',
  source,
  libs: [rows, jobPlain],
  reduces: true,
  constants: Epilogue,
  bindings: {
    step: STEP,
    weight: read('array<vec4<u32>>'),  // [rows, ceil(k / block)]: 4 F32 or 8 F16/BF16 per vec4, zero-padded
    x: read('array<vec4<f32>>'),       // [ceil(k/4)]
    y: rw('array<f32>'),               // [out_stride]
    chunk: CHUNK,
  },
});

export function denseMatvecOp(cache: PipelineCache, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget, uniform: GPUBuffer): Op {
  return matvecRowsOp(cache, MATVEC_DENSE, cache.tuning.matvec.dense, w, chunk, t, {
    consts: { WDTYPE: wdtypeOf(chunk) },
    buffers: { step: t.step, weight: chunk.buffers[0]!, x: t.x, y: t.y, chunk: uniform },
  });
}
