// matvec_q4 (shaders/matvec_q4.wgsl on shaders/lib/matvec_rows.wgsl): the decode matvec for an MLC
// q4f16_1 weight, one op per row chunk, in the device's tuned layout.
import rows from '../../../../shaders/lib/matvec_rows.wgsl?raw';
import source from '../../../../shaders/matvec_q4.wgsl?raw';
import type { GpuLinear, GpuLinearChunk } from '../../gpu-weights.ts';
import { defineKernel, read, rw, STEP } from '../../kernel.ts';
import type { Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';
import { CHUNK, Epilogue, jobPlain, type LinearTarget } from './linear-contract.ts';
import { matvecRowsOp } from './matvec-rows.ts';

export const MATVEC_Q4 = defineKernel({
  name: 'matvec_q4',
  source,
  libs: [rows, jobPlain],
  reduces: true,
  constants: Epilogue,
  bindings: {
    step: STEP,
    qweight: read('array<vec4<u32>>'), // [rows, k/32]: a block of 32 codes per vec4
    scales: read('array<u32>'),        // f16 pairs of [rows, k/32]
    x: read('array<vec4<f32>>'),       // [k/4]
    y: rw('array<f32>'),               // [out_stride]
    chunk: CHUNK,
  },
});

export function q4MatvecOp(cache: PipelineCache, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget, uniform: GPUBuffer): Op {
  const [qweight, scales] = chunk.buffers as [GPUBuffer, GPUBuffer];
  return matvecRowsOp(cache, MATVEC_Q4, cache.tuning.matvec.q4, w, chunk, t, {
    consts: {},
    buffers: { step: t.step, qweight, scales, x: t.x, y: t.y, chunk: uniform },
  });
}
