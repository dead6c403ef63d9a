// The op builder shared by every prefill matmul on shaders/matmul_rows.wgsl: WG lanes of R rows
// (R / 2 gate|up pairs) and TT tokens per workgroup, the grid over rows and tokens; and the skeleton's
// x-load variants (the lanes share x by subgroupBroadcast, or each loads it).
import rowsXPlain from '../../../../shaders/lib/rows_x_plain.wgsl?raw';
import rowsXSubgroup from '../../../../shaders/lib/rows_x_subgroup.wgsl?raw';
import type { GpuLinear, GpuLinearChunk } from '../../gpu-weights.ts';
import { grid2d, type Bindings, type BufferSet, type Kernel } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { Consts, PipelineCache } from '../../pipelines.ts';
import type { MatmulRowsLayout } from '../../tuning.ts';
import { Epilogue, type LinearTarget } from './linear-contract.ts';

/** The subgroupLibs of every kernel on shaders/matmul_rows.wgsl. */
export const ROWS_X_LIBS = { subgroups: [rowsXSubgroup], fallback: [rowsXPlain] } as const;

export function matmulRowsOp<B extends Bindings>(
  cache: PipelineCache, kernel: Kernel<B>, layout: MatmulRowsLayout, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget,
  spec: { consts: Consts; buffers: BufferSet<B> },
): Op {
  const fused = t.epilogue === Epilogue.SILU_GATE_UP;
  const outRows = fused ? chunk.rows / 2 : chunk.rows;
  const [gx, gy] = grid2d(Math.ceil(outRows / (layout.WG * (fused ? layout.R / 2 : layout.R))));
  return kernelOp(cache, kernel, {
    label: `${w.name}[${chunk.rowStart}:${chunk.rowStart + chunk.rows}] prefill`,
    consts: { ...spec.consts, WG: layout.WG, R: layout.R, TT: layout.TT },
    subgroups: layout.subgroups,
    buffers: spec.buffers,
    grid: (n) => [gx, gy, Math.ceil(n / layout.TT)],
  });
}
