// The op builder shared by every prefill matmul on shaders/matmul_tiles.wgsl: tiles of BM tokens ×
// BN weight rows (BN / 2 gate|up pairs), WG = (BM/TM)·(BN/TN) threads, the grid over rows and tokens.
import type { GpuLinear, GpuLinearChunk } from '../../gpu-weights.ts';
import { grid2d, type Bindings, type BufferSet, type Kernel } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { Consts, PipelineCache } from '../../pipelines.ts';
import { matmulThreads, type MatmulTilesLayout } from '../../tuning.ts';
import { Epilogue, type LinearTarget } from './linear-contract.ts';

export function matmulTilesOp<B extends Bindings>(
  cache: PipelineCache, kernel: Kernel<B>, tile: MatmulTilesLayout, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget,
  spec: { consts: Consts; buffers: BufferSet<B> },
): Op {
  const fused = t.epilogue === Epilogue.SILU_GATE_UP;
  const outRows = fused ? chunk.rows / 2 : chunk.rows;
  const [gx, gy] = grid2d(Math.ceil(outRows / (fused ? tile.BN / 2 : tile.BN)));
  return kernelOp(cache, kernel, {
    label: `${w.name}[${chunk.rowStart}:${chunk.rowStart + chunk.rows}] prefill`,
    consts: { ...spec.consts, BM: tile.BM, BN: tile.BN, TM: tile.TM, TN: tile.TN, WG: matmulThreads(tile) },
    buffers: spec.buffers,
    grid: (n) => [gx, gy, Math.ceil(n / tile.BM)],
  });
}
