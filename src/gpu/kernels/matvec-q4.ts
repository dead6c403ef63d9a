// matvec_q4 (shaders/matvec_q4.wgsl): y = x·Wᵀ for an MLC q4f16_1 weight, one op per row chunk.
import source from '../../../shaders/matvec_q4.wgsl?raw';
import type { GpuLinear, GpuLinearChunk } from '../gpu-weights.ts';
import { defineKernel, grid2d, read, rw, STEP, uniformBuffer, uniformStruct } from '../kernel.ts';
import { kernelOp, type Op } from '../op.ts';
import type { PipelineCache } from '../pipelines.ts';
import { lanesFor, TILES } from '../tuning.ts';
import { CHUNK_FIELDS, Epilogue, type LinearTarget } from './linear-contract.ts';

export const MATVEC_Q4 = defineKernel({
  name: 'matvec_q4',
  source,
  constants: Epilogue,
  bindings: {
    step: STEP,                        // n = tokens
    qweight: read('array<u32>'),       // [rows, k/8]: element k at bits (k%8)·4 of word k/8
    scales: read('array<u32>'),        // f16 pairs of [rows, k/32]: w = (q − 7)·scale
    x: read('array<f32>'),             // [n, k]
    y: rw('array<f32>'),               // [n, out_stride]: this chunk writes columns row_offset + r
    chunk: uniformStruct('Chunk', CHUNK_FIELDS),
  },
});

export function q4MatvecOp(cache: PipelineCache, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget): Op {
  const outRows = t.epilogue === Epilogue.SILU_GATE_UP ? chunk.rows / 2 : chunk.rows;
  const lanes = lanesFor(w.cols / 8, cache.tuning);
  const wg = cache.tuning.WG;
  const [qweight, scales] = chunk.buffers as [GPUBuffer, GPUBuffer];
  const uniform = uniformBuffer(cache.device, MATVEC_Q4.bindings.chunk, {
    k: w.cols, out_stride: t.outStride, row_offset: chunk.rowStart, out_rows: outRows, epilogue: t.epilogue,
  });
  const buffers = { step: t.step, qweight, scales, x: t.x, y: t.y, chunk: uniform };
  const grid = (n: number, tile: number): [number, number, number] => {
    const [gx, gy] = grid2d(Math.ceil(outRows / (wg / lanes)));
    return [gx, gy, Math.ceil(n / tile)];
  };
  const label = `${w.name}[${chunk.rowStart}:${chunk.rowStart + chunk.rows}]`;
  const decode = kernelOp(cache, MATVEC_Q4, { label, buffers, consts: { LANES: lanes, WG: wg, ...TILES.decode }, grid: (n) => grid(n, TILES.decode.TILE_T) });
  const prefill = kernelOp(cache, MATVEC_Q4, { label, buffers, consts: { LANES: lanes, WG: wg, ...TILES.prefill }, grid: (n) => grid(n, TILES.prefill.TILE_T) });
  return { label, owned: [uniform], encode: (pass, n) => (n === 1 ? decode : prefill).encode(pass, n) };
}
