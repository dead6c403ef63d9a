// matmul_q4 (shaders/matmul_q4.wgsl): y = x·Wᵀ for an MLC q4f16_1 weight, one op per row chunk.
import source from '../../../shaders/matmul_q4.wgsl?raw';
import type { GpuLinear, GpuLinearChunk } from '../gpu-weights.ts';
import { defineKernel, grid2d, read, rw, STEP } from '../kernel.ts';
import { kernelOp, type Op } from '../op.ts';
import type { PipelineCache } from '../pipelines.ts';
import { PREFILL_TILE, prefillLanes } from './prefill-layout.ts';
import { CHUNK, Epilogue, type LinearTarget } from './linear-contract.ts';

export const MATMUL_Q4 = defineKernel({
  name: 'matmul_q4',
  source,
  constants: Epilogue,
  bindings: {
    step: STEP,                        // n = tokens
    qweight: read('array<u32>'),       // [rows, k/8]: element k at bits (k%8)·4 of word k/8
    scales: read('array<u32>'),        // f16 pairs of [rows, k/32]: w = (q − 7)·scale
    x: read('array<f32>'),             // [n, k]
    y: rw('array<f32>'),               // [n, out_stride]: this chunk writes columns row_offset + r
    chunk: CHUNK,
  },
});

export function q4MatmulOp(cache: PipelineCache, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget, uniform: GPUBuffer): Op {
  const outRows = t.epilogue === Epilogue.SILU_GATE_UP ? chunk.rows / 2 : chunk.rows;
  const { WG: wg, LANES: lanes } = prefillLanes(cache, w.cols / 8);
  const [qweight, scales] = chunk.buffers as [GPUBuffer, GPUBuffer];
  const buffers = { step: t.step, qweight, scales, x: t.x, y: t.y, chunk: uniform };
  const grid = (n: number, tile: number): [number, number, number] => {
    const [gx, gy] = grid2d(Math.ceil(outRows / (wg / lanes)));
    return [gx, gy, Math.ceil(n / tile)];
  };
  const label = `${w.name}[${chunk.rowStart}:${chunk.rowStart + chunk.rows}] prefill`;
  return kernelOp(cache, MATMUL_Q4, { label, buffers, consts: { LANES: lanes, WG: wg, TILE_T: PREFILL_TILE }, grid: (n) => grid(n, PREFILL_TILE) });
}
