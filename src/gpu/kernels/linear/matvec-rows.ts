// The op builder shared by every decode matvec on shaders/matvec.wgsl: WG / LANES row groups
// of ROWS rows (ROWS / 2 gate|up pairs) per workgroup, the grid over a chunk's output rows.
import type { GpuLinear, GpuLinearChunk } from '../../gpu-weights.ts';
import { grid2d, type Bindings, type BufferSet, type Kernel } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { Consts, PipelineCache } from '../../pipelines.ts';
import type { MatvecLayout } from '../../tuning.ts';
import { Epilogue, type LinearTarget } from './linear-contract.ts';

export function matvecRowsOp<B extends Bindings>(
  cache: PipelineCache, kernel: Kernel<B>, layout: MatvecLayout, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget,
  spec: { consts: Consts; buffers: BufferSet<B> },
): Op {
  const fused = t.epilogue === Epilogue.SILU_GATE_UP;
  const outRows = fused ? chunk.rows / 2 : chunk.rows;
  const perWorkgroup = (layout.WG / layout.LANES) * (fused ? layout.ROWS / 2 : layout.ROWS);
  const [gx, gy] = grid2d(Math.ceil(outRows / perWorkgroup));
  return kernelOp(cache, kernel, {
    label: `${w.name}[${chunk.rowStart}:${chunk.rowStart + chunk.rows}] decode${t.foldNorm ? ` (${t.foldNorm.name} folded in)` : ''}`,
    consts: { ...spec.consts, WG: layout.WG, LANES: layout.LANES, ROWS: layout.ROWS },
    subgroups: layout.subgroups,
    buffers: spec.buffers,
    grid: () => [gx, gy, 1],
  });
}
