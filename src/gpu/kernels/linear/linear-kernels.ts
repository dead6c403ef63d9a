// The linear kernels: each structure (shaders/matvec.wgsl, matmul_tiles.wgsl, matmul_rows.wgsl,
// embed.wgsl) composed with each weight format of ./formats.ts. Each (structure, format) pair is its own
// contract — matvec_dense, matmul_rows_q4, embed_ggml_q4_k, … — made once here, so pipelines and bind
// group layouts are cached per (kernel, format). The bindings are step, the format's weights, then the
// structure's own.
import matvecSource from '../../../../shaders/matvec.wgsl?raw';
import matvecSuperblockSource from '../../../../shaders/matvec_superblock.wgsl?raw';
import matvecStore from '../../../../shaders/lib/matvec_store.wgsl?raw';
import matmulTilesSource from '../../../../shaders/matmul_tiles.wgsl?raw';
import matmulRowsSource from '../../../../shaders/matmul_rows.wgsl?raw';
import embedSource from '../../../../shaders/embed.wgsl?raw';
import xPlain from '../../../../shaders/lib/x_plain.wgsl?raw';
import xRmsnorm from '../../../../shaders/lib/x_rmsnorm.wgsl?raw';
import type { ChunkFormat, GpuLinear, GpuLinearChunk } from '../../gpu-weights.ts';
import { defineKernel, read, rw, STEP, uniformBuffer, uniformStruct, type Bindings, type Kernel } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';
import type { MatmulRowsLayout, MatmulTilesLayout, MatvecLayout } from '../../tuning.ts';
import { WEIGHT_FORMATS, weightFormat, type FormatKernelRow } from './formats.ts';
import { CHUNK, Epilogue, jobPlain, type LinearTarget } from './linear-contract.ts';
import { matmulRowsOp, ROWS_X_LIBS } from './matmul-rows.ts';
import { matmulTilesOp } from './matmul-tiles.ts';
import { matvecRowsOp } from './matvec-rows.ts';

export interface EmbedTarget {
  step: GPUBuffer;
  ids: GPUBuffer;              // [n] u32
  out: GPUBuffer;              // [n, H] f32
}

const EMBED_CHUNK = uniformStruct('Chunk', ['row_start', 'rows']);

export interface LinearKernels {
  matvec: Kernel;
  /** The super-block decode matvec, for the block types that have one (formats.ts `superblock`). */
  matvecSuperblock?: Kernel;
  /** The decode matvecs with the RMSNorm before them folded in (shaders/lib/x_rmsnorm.wgsl; a `norm` binding more). */
  matvecNorm: Kernel;
  matvecSuperblockNorm?: Kernel;
  matmul: Kernel;
  matmulRows: Kernel;
  embed: Kernel;
}

function linearBindings(f: FormatKernelRow, x: string): Bindings {
  return { step: STEP, ...f.weights, x: read(x), y: rw('array<f32>'), chunk: CHUNK };
}

/** The folded norm's weight (shaders/lib/x_rmsnorm.wgsl), before the format's weights. */
const NORM_BINDING = { norm: read('array<vec4<f32>>') };

/** A decode matvec's bindings: the plain ones, or with the folded norm's weight after step. */
function matvecBindings(f: FormatKernelRow, folded: boolean): Bindings {
  return { step: STEP, ...(folded ? NORM_BINDING : {}), ...f.weights, x: read('array<vec4<f32>>'), y: rw('array<f32>'), chunk: CHUNK };
}

/** The decode matvec (and super-block one) of a format, plain or with the RMSNorm folded in. */
function matvecs(f: FormatKernelRow, folded: boolean): { matvec: Kernel; superblock?: Kernel } {
  const [x, suffix] = folded ? [xRmsnorm, '_norm'] : [xPlain, ''];
  const bindings = matvecBindings(f, folded);
  return {
    matvec: defineKernel({
      name: `matvec${suffix}_${f.id}`, family: 'matvec', source: matvecSource, libs: [jobPlain, x, ...f.decode, ...f.dot, matvecStore],
      reduces: true, constants: { ...Epilogue, PARTS: f.parts }, bindings,
    }),
    ...(f.superblock ? {
      superblock: defineKernel({
        name: `matvec_superblock${suffix}_${f.id}`, family: 'matvec_superblock', source: matvecSuperblockSource,
        libs: [jobPlain, x, ...f.superblock.libs, matvecStore], reduces: true, constants: Epilogue, bindings,
      }),
    } : {}),
  };
}

function make(f: FormatKernelRow): LinearKernels {
  const constants = { ...Epilogue, PARTS: f.parts };
  const plain = matvecs(f, false), norm = matvecs(f, true);
  return {
    matvec: plain.matvec,
    ...(plain.superblock ? { matvecSuperblock: plain.superblock } : {}),
    matvecNorm: norm.matvec,
    ...(norm.superblock ? { matvecSuperblockNorm: norm.superblock } : {}),
    matmul: defineKernel({
      name: `matmul_${f.id}`, family: 'matmul_tiles', source: matmulTilesSource, libs: [jobPlain, ...f.decode],
      constants, bindings: linearBindings(f, 'array<f32>'),
    }),
    matmulRows: defineKernel({
      name: `matmul_rows_${f.id}`, family: 'matmul_rows', source: matmulRowsSource, libs: [jobPlain, ...f.decode],
      subgroupLibs: ROWS_X_LIBS, constants, bindings: linearBindings(f, 'array<f32>'),
    }),
    embed: defineKernel({
      name: `embed_${f.id}`, family: 'embed', source: embedSource, libs: f.decode, constants: { PARTS: f.parts },
      bindings: { step: STEP, ...f.weights, ids: read('array<u32>'), out: rw('array<f32>'), chunk: EMBED_CHUNK },
    }),
  };
}

const made = new Map<FormatKernelRow, LinearKernels>();

/** The four kernels of a weight format (made once per format). */
export function linearKernels(f: FormatKernelRow): LinearKernels {
  let k = made.get(f);
  if (!k) {
    k = make(f);
    made.set(f, k);
  }
  return k;
}

/** Every linear kernel, for the contract test. */
export const LINEAR_KERNELS: readonly Kernel[] = WEIGHT_FORMATS.flatMap((f) => Object.values(linearKernels(f)));

/** A chunk's format, its kernels, and the constants and weight buffers it gives them. */
function forChunk(chunk: GpuLinearChunk) {
  const f = weightFormat(chunk.format);
  return { f, kernels: linearKernels(f), consts: f.consts(chunk.format), weights: f.buffers(chunk) };
}

/**
 * The decode matvec kernel of a chunk format in a layout, for rows of k values: the super-block kernel
 * when the layout asks for it and the block type has one (and the layout's row groups are whole
 * super-blocks' lanes, and k whole super-blocks), else shaders/matvec.wgsl's, which runs any layout.
 */
export function matvecKernel(layout: MatvecLayout, format: ChunkFormat, k: number, foldNorm = false): Kernel {
  const f = weightFormat(format);
  const ks = linearKernels(f);
  const sb = f.superblock;
  const superblock = foldNorm ? ks.matvecSuperblockNorm : ks.matvecSuperblock;
  const plain = foldNorm ? ks.matvecNorm : ks.matvec;
  return layout.superblock && sb && superblock && layout.LANES % sb.lanes === 0 && k % sb.values === 0 ? superblock : plain;
}

/**
 * The decode matvec of one chunk (one token), in the device's tuned layout for the chunk's format
 * (matvecKernel's kernel); with t.foldNorm, its variant that reads the un-normalised row and folds the RMSNorm in.
 */
export function matvecOp(cache: PipelineCache, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget, uniform: GPUBuffer): Op {
  const p = forChunk(chunk);
  const layout = cache.tuning.matvec[chunk.format.kind];
  const fold = t.foldNorm;
  return matvecRowsOp(cache, matvecKernel(layout, chunk.format, w.cols, fold !== undefined), layout, w, chunk, t, {
    consts: fold ? { ...p.consts, EPS: fold.eps } : p.consts,
    buffers: fold
      ? { step: t.step, norm: fold.weight, ...p.weights, x: fold.x, y: t.y, chunk: uniform }
      : { step: t.step, ...p.weights, x: t.x, y: t.y, chunk: uniform },
  });
}

/** The prefill matmul of one chunk (several tokens), in the device's tuned structure and layout. */
export function matmulOp(cache: PipelineCache, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget, uniform: GPUBuffer): Op {
  const p = forChunk(chunk);
  const layout: MatmulRowsLayout | MatmulTilesLayout = cache.tuning.matmul[chunk.format.kind];
  const buffers = { step: t.step, ...p.weights, x: t.x, y: t.y, chunk: uniform };
  return layout.kind === 'rows'
    ? matmulRowsOp(cache, p.kernels.matmulRows, layout, w, chunk, t, { consts: p.consts, buffers })
    : matmulTilesOp(cache, p.kernels.matmul, layout, w, chunk, t, { consts: p.consts, buffers });
}

const EMBED_WG = 64;

/** The embedding gather of one chunk: a lane per decode block of a row, a workgroup row per token. */
export function embedOp(cache: PipelineCache, e: GpuLinear, chunk: GpuLinearChunk, t: EmbedTarget): Op {
  const p = forChunk(chunk);
  const H = e.cols;
  const uniform = uniformBuffer(cache.device, EMBED_CHUNK, { row_start: chunk.rowStart, rows: chunk.rows });
  return kernelOp(cache, p.kernels.embed, {
    label: `${e.name} gather`, consts: { ...p.consts, H, WG: EMBED_WG }, owned: [uniform],
    buffers: { step: t.step, ...p.weights, ids: t.ids, out: t.out, chunk: uniform },
    grid: (n) => [Math.ceil(Math.ceil(H / (p.f.parts * 8)) / EMBED_WG), n, 1],
  });
}
