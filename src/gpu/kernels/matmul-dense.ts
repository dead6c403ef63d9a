// matmul_dense (shaders/matmul_dense.wgsl): y = x·Wᵀ for a dense F32 / F16 / BF16 weight, one op per
// row chunk.
import source from '../../../shaders/matmul_dense.wgsl?raw';
import type { GpuLinear, GpuLinearChunk } from '../gpu-weights.ts';
import { defineKernel, grid2d, read, rw, STEP } from '../kernel.ts';
import { kernelOp, type Op } from '../op.ts';
import type { PipelineCache } from '../pipelines.ts';
import { PREFILL_TILE, prefillLanes } from './prefill-layout.ts';
import { CHUNK, Epilogue, type LinearTarget } from './linear-contract.ts';

export const MATMUL_DENSE = defineKernel({
  name: 'matmul_dense',
  source,
  constants: Epilogue,
  bindings: {
    step: STEP,                        // n = tokens
    weight: read('array<u32>'),        // [rows, row_words]: F32 one value a word; F16/BF16 two, element
                                       // 2i in the low half, rows padded to a whole word (zeros)
    x: read('array<f32>'),             // [n, k]
    y: rw('array<f32>'),               // [n, out_stride]: this chunk writes columns row_offset + r
    chunk: CHUNK,
  },
});

export function denseMatmulOp(cache: PipelineCache, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget, uniform: GPUBuffer): Op {
  const outRows = t.epilogue === Epilogue.SILU_GATE_UP ? chunk.rows / 2 : chunk.rows;
  const { WG: wg, LANES: lanes } = prefillLanes(cache, w.wdtype === 0 ? w.cols : Math.ceil(w.cols / 2));
  const buffers = { step: t.step, weight: chunk.buffers[0]!, x: t.x, y: t.y, chunk: uniform };
  const grid = (n: number, tile: number): [number, number, number] => {
    const [gx, gy] = grid2d(Math.ceil(outRows / (wg / lanes)));
    return [gx, gy, Math.ceil(n / tile)];
  };
  const label = `${w.name}[${chunk.rowStart}:${chunk.rowStart + chunk.rows}] prefill`;
  const consts = { LANES: lanes, WG: wg, WDTYPE: w.wdtype };
  return kernelOp(cache, MATMUL_DENSE, { label, buffers, consts: { ...consts, TILE_T: PREFILL_TILE }, grid: (n) => grid(n, PREFILL_TILE) });
}
