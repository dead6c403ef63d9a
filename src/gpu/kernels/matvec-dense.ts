// matvec_dense (shaders/matvec_dense.wgsl): y = x·Wᵀ for a dense F32 / F16 / BF16 weight, one op per
// row chunk.
import source from '../../../shaders/matvec_dense.wgsl?raw';
import type { GpuLinear, GpuLinearChunk } from '../gpu-weights.ts';
import { defineKernel, grid2d, read, rw, STEP, uniformBuffer, uniformStruct } from '../kernel.ts';
import { kernelOp, type Op } from '../op.ts';
import type { PipelineCache } from '../pipelines.ts';
import { lanesFor, TILES } from '../tuning.ts';
import { CHUNK_FIELDS, Epilogue, type LinearTarget } from './linear-contract.ts';

export const MATVEC_DENSE = defineKernel({
  name: 'matvec_dense',
  source,
  constants: Epilogue,
  bindings: {
    step: STEP,                        // n = tokens
    weight: read('array<u32>'),        // [rows, row_words]: F32 one value a word; F16/BF16 two, element
                                       // 2i in the low half, rows padded to a whole word (zeros)
    x: read('array<f32>'),             // [n, k]
    y: rw('array<f32>'),               // [n, out_stride]: this chunk writes columns row_offset + r
    chunk: uniformStruct('Chunk', CHUNK_FIELDS),
  },
});

export function denseMatvecOp(cache: PipelineCache, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget): Op {
  const outRows = t.epilogue === Epilogue.SILU_GATE_UP ? chunk.rows / 2 : chunk.rows;
  const rowWords = w.wdtype === 0 ? w.cols : Math.ceil(w.cols / 2);
  const lanes = lanesFor(rowWords, cache.tuning);
  const wg = cache.tuning.WG;
  const uniform = uniformBuffer(cache.device, MATVEC_DENSE.bindings.chunk, {
    k: w.cols, out_stride: t.outStride, row_offset: chunk.rowStart, out_rows: outRows, epilogue: t.epilogue,
  });
  const buffers = { step: t.step, weight: chunk.buffers[0]!, x: t.x, y: t.y, chunk: uniform };
  const grid = (n: number, tile: number): [number, number, number] => {
    const [gx, gy] = grid2d(Math.ceil(outRows / (wg / lanes)));
    return [gx, gy, Math.ceil(n / tile)];
  };
  const label = `${w.name}[${chunk.rowStart}:${chunk.rowStart + chunk.rows}]`;
  const consts = { LANES: lanes, WG: wg, WDTYPE: w.wdtype };
  const decode = kernelOp(cache, MATVEC_DENSE, { label, buffers, consts: { ...consts, ...TILES.decode }, grid: (n) => grid(n, TILES.decode.TILE_T) });
  const prefill = kernelOp(cache, MATVEC_DENSE, { label, buffers, consts: { ...consts, ...TILES.prefill }, grid: (n) => grid(n, TILES.prefill.TILE_T) });
  return { label, owned: [uniform], encode: (pass, n) => (n === 1 ? decode : prefill).encode(pass, n) };
}
