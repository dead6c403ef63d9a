// silu_mul (shaders/silu_mul.wgsl): out = silu(gate) · up for a gate|up result that could not take the
// fused matvec epilogue (its weight is split across buffers).
import source from '../../../../shaders/silu_mul.wgsl?raw';
import { defineKernel, read, rw, STEP, type BufferSet } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';

export const SILU_MUL = defineKernel({
  name: 'silu_mul',
  source,
  bindings: {
    step: STEP,                  // n = tokens
    gu: read('array<f32>'),      // [n, 2·I]: gate I values, then up I values
    out: rw('array<f32>'),       // [n, I]
  },
});

const WG = 64;

/** rowsPerToken: k for MoE expert pairs (rows t·k .. t·k + k − 1 belong to token t). */
export function siluMulOp(cache: PipelineCache, buffers: BufferSet<typeof SILU_MUL.bindings>, I: number, label: string, rowsPerToken = 1): Op {
  return kernelOp(cache, SILU_MUL, { label, consts: { I, WG, ROWS: rowsPerToken }, buffers, grid: (n) => [Math.ceil(I / WG), n * rowsPerToken, 1] });
}
