// Prepared dispatches. Bind groups are made once (at load) and every step only picks the pipeline for
// its tile size and the grid for its token count, so a decode token costs no allocations.
import type { GpuLinear } from './gpu-weights.ts';
import type { KernelName } from './kernels.ts';
import { grid2d, type Consts, type PipelineCache } from './pipelines.ts';
import { lanesFor, TILES } from './tuning.ts';

export interface Op {
  label: string;
  kernel: KernelName;
  consts: Consts;
  /** Matvec ops pick TILE_T per step: 1 for one token (decode), PREFILL_TILE otherwise. */
  tiled: boolean;
  bindGroup: GPUBindGroup;
  grid(n: number, tile: number): [number, number, number];
  /** Small buffers made for this op (per-chunk uniforms), destroyed with the engine. */
  owned?: GPUBuffer[];
}

/** A small uniform of u32 words (a chunk's shape), made once at load. */
function chunkUniform(device: GPUDevice, words: number[]): GPUBuffer {
  const buffer = device.createBuffer({ label: 'chunk', size: 32, usage: GPUBufferUsage.UNIFORM, mappedAtCreation: true });
  new Uint32Array(buffer.getMappedRange()).set(words);
  buffer.unmap();
  return buffer;
}

export function destroyOps(ops: readonly Op[]): void {
  for (const op of ops) op.owned?.forEach((b) => b.destroy());
}

export function encodeOps(pass: GPUComputePassEncoder, cache: PipelineCache, ops: readonly Op[], n: number): number {
  const mode = n === 1 ? TILES.decode : TILES.prefill;
  for (const op of ops) {
    const consts = op.tiled ? { ...op.consts, ...mode } : op.consts;
    pass.setPipeline(cache.get(op.kernel, consts));
    pass.setBindGroup(0, op.bindGroup);
    const [x, y, z] = op.grid(n, mode.TILE_T);
    pass.dispatchWorkgroups(x, y, z);
  }
  return ops.length;
}

export interface MatvecTarget {
  step: GPUBuffer;
  x: GPUBuffer;                // [n, K]
  y: GPUBuffer;                // [n, outStride]
  outStride: number;
  epilogue: 0 | 1 | 2;         // store | add (residual) | silu(gate)·up
}

/** One op per row chunk of the weight. EPILOGUE 2 needs the gate and up rows in one chunk. */
export function matvecOps(cache: PipelineCache, w: GpuLinear, t: MatvecTarget): Op[] {
  if (t.epilogue === 2 && w.chunks.length !== 1) throw new Error(`${w.name}: the fused silu epilogue needs one chunk`);
  return w.chunks.map((chunk) => {
    const outRows = t.epilogue === 2 ? chunk.rows / 2 : chunk.rows;
    const rowWords = w.kind === 'q4' ? w.cols / 8 : w.wdtype === 0 ? w.cols : Math.ceil(w.cols / 2);
    const lanes = lanesFor(rowWords, cache.tuning);
    const wg = cache.tuning.WG;
    const consts: Consts = { LANES: lanes, WG: wg };
    if (w.kind === 'dense') consts.WDTYPE = w.wdtype;
    const kernel: KernelName = w.kind === 'dense' ? 'matvec_dense' : 'matvec_q4';
    // Chunk { k, out_stride, row_offset, out_rows, epilogue }
    const uniform = chunkUniform(cache.device, [w.cols, t.outStride, chunk.rowStart, outRows, t.epilogue]);
    const buffers = [t.step, ...chunk.buffers, t.x, t.y, uniform];
    return {
      owned: [uniform],
      label: `${w.name}[${chunk.rowStart}:${chunk.rowStart + chunk.rows}]`,
      kernel, consts, tiled: true,
      bindGroup: cache.bind(kernel, buffers, w.name),
      grid(n: number, tile: number) {
        const [gx, gy] = grid2d(Math.ceil(outRows / (wg / lanes)));
        return [gx, gy, Math.ceil(n / tile)];
      },
    };
  });
}

/** Embedding gather: one op per row chunk (each writes the tokens whose id it holds). */
export function embedOps(cache: PipelineCache, e: GpuLinear, step: GPUBuffer, ids: GPUBuffer, out: GPUBuffer): Op[] {
  const H = e.cols;
  const WG = 64;
  return e.chunks.map((chunk) => {
    const dense = e.kind === 'dense';
    const kernel: KernelName = dense ? 'embed_dense' : 'embed_q4';
    const consts: Consts = { H, WG };
    if (dense) consts.WDTYPE = e.wdtype;
    const perRow = dense ? Math.ceil(H / 2) : H / 8;
    const uniform = chunkUniform(cache.device, [chunk.rowStart, chunk.rows]);
    return {
      label: `${e.name} gather`, kernel, consts, tiled: false, owned: [uniform],
      bindGroup: cache.bind(kernel, [step, ...chunk.buffers, ids, out, uniform]),
      grid: (n: number) => [Math.ceil(perRow / WG), n, 1],
    };
  });
}

export function rmsnormOp(cache: PipelineCache, step: GPUBuffer, x: GPUBuffer, weight: GPUBuffer, y: GPUBuffer, H: number, eps: number, label: string): Op {
  return {
    label, kernel: 'rmsnorm', consts: { H, EPS: eps, WG: 64 }, tiled: false,
    bindGroup: cache.bind('rmsnorm', [step, x, weight, y], label),
    grid: (n: number) => [n, 1, 1],
  };
}
