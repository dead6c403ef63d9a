// Linears over stacked MoE experts (src/gpu/gpu-experts.ts): the expert variants of the dense and ggml
// linear kernels (../linear/linear-kernels.ts, ./experts.ts). Decode (one token) runs the matvec over
// (row groups, k slots): each slot's workgroups read only the rows of the expert the routing chose for it
// and count the bytes read.
// Prefill runs the matmul over (row tiles, the chunk's experts, token tiles) on the tokens grouped to
// each expert (shaders/moe_group.wgsl); an expert without tokens costs its workgroups' early exit.
import type { GpuExperts, GpuExpertChunk } from '../../gpu-experts.ts';
import { uniformBuffer, type Bindings, type Kernel } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { Consts, PipelineCache } from '../../pipelines.ts';
import { matmulThreads, type LinearFormat, type MatvecLayout } from '../../tuning.ts';
import { EXPERTS, expertVariant } from './experts.ts';
import { weightFormat } from '../linear/formats.ts';
import { CHUNK, Epilogue } from '../linear/linear-contract.ts';
import { linearKernels, matvecKernel } from '../linear/linear-kernels.ts';

export interface ExpertTarget {
  step: GPUBuffer;
  x: GPUBuffer;                // gate|up: [n, K] the tokens' rows; down: [n·k, K] the pairs' rows
  y: GPUBuffer;                // [n·k, outStride] a row per pair
  outStride: number;
  rowOffset?: number;          // first column of y written (default 0)
  epilogue: Epilogue;          // STORE or SILU_GATE_UP (an expert's rows are gate then up)
  route: GPUBuffer;            // the routing buffer (shaders/lib/job_experts.wgsl)
  bytesRead: GPUBuffer;        // [layers, E] u32 weight bytes read by the decode matvecs
  topK: number;
  xDiv: number;                // a pair's x row = pair / xDiv (gate|up: k; down: 1)
  maxPairs: number;            // maxBatch · k
  counterBase: number;         // this layer's first counter: layer slot · E
}

type Variant = 'matvec' | 'rows' | 'tiles';

function kernelFor(chunk: GpuExpertChunk, v: Variant, layout: MatvecLayout, cols: number): { kernel: Kernel; consts: Consts; format: LinearFormat } {
  const f = chunk.format;
  if (f.kind === 'q4') throw new Error('q4f16_1 experts have no kernels (MLC has no Qwen3 MoE build)');
  const wf = weightFormat(f);
  const ks = linearKernels(wf);
  // decode: the super-block matvec where the tuned layout asks for it and the block type has one (matvecKernel)
  const k = v === 'matvec' ? matvecKernel(layout, f, cols) : v === 'rows' ? ks.matmulRows : ks.matmul;
  return { kernel: expertVariant(k as Kernel<Bindings>), consts: wf.consts(f), format: f.kind };
}

export function expertOps(cache: PipelineCache, w: GpuExperts, t: ExpertTarget): Op[] {
  const fused = t.epilogue === Epilogue.SILU_GATE_UP;
  const outRows = fused ? w.rowsPerExpert / 2 : w.rowsPerExpert;
  return w.chunks.map((chunk) => {
    const [e0, e1] = chunk.experts;
    const chunkU = uniformBuffer(cache.device, CHUNK, { k: w.cols, out_stride: t.outStride, row_offset: t.rowOffset ?? 0, out_rows: outRows, epilogue: t.epilogue });
    const expU = uniformBuffer(cache.device, EXPERTS, {
      e0, e1, rows_per_expert: w.rowsPerExpert, x_div: t.xDiv, max_pairs: t.maxPairs, num_experts: w.experts, counter_base: t.counterBase, row_bytes: w.rowBytes,
    });
    const buffers = { step: t.step, weight: chunk.buffers[0]!, x: t.x, y: t.y, chunk: chunkU, route: t.route, bytes_read: t.bytesRead, experts: expU };
    const label = `${w.name} experts [${e0}, ${e1})`;
    const layout = cache.tuning.matvec[chunk.format.kind];
    const mv = kernelFor(chunk, 'matvec', layout, w.cols);
    const perWg = (layout.WG / layout.LANES) * (fused ? layout.ROWS / 2 : layout.ROWS);
    const decode = kernelOp(cache, mv.kernel, {
      label: `${label} decode`, consts: { ...mv.consts, WG: layout.WG, LANES: layout.LANES, ROWS: layout.ROWS }, subgroups: layout.subgroups,
      buffers, grid: () => [Math.ceil(outRows / perWg), t.topK, 1],
    });
    const tile = cache.tuning.matmul[mv.format];
    const mm = kernelFor(chunk, tile.kind, layout, w.cols);
    const prefill = tile.kind === 'rows'
      ? kernelOp(cache, mm.kernel, {
        label: `${label} prefill`, consts: { ...mm.consts, WG: tile.WG, R: tile.R, TT: tile.TT }, subgroups: tile.subgroups, buffers,
        grid: (n) => [Math.ceil(outRows / (tile.WG * (fused ? tile.R / 2 : tile.R))), e1 - e0, Math.ceil(n / tile.TT)],
      })
      : kernelOp(cache, mm.kernel, {
        label: `${label} prefill`, consts: { ...mm.consts, BM: tile.BM, BN: tile.BN, TM: tile.TM, TN: tile.TN, WG: matmulThreads(tile) }, buffers,
        grid: (n) => [Math.ceil(outRows / (fused ? tile.BN / 2 : tile.BN)), e1 - e0, Math.ceil(n / tile.BM)],
      });
    return { label, owned: [chunkU, expU], encode: (pass, n) => (n === 1 ? decode : prefill).encode(pass, n) };
  });
}
