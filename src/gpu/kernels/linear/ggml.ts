// The ggml block-type kernels: one structure file per kernel (shaders/matvec_ggml.wgsl,
// matmul_ggml.wgsl, matmul_rows_ggml.wgsl, embed_ggml.wgsl) composed with one block file per type
// (shaders/lib/ggml/<type>.wgsl, on shaders/lib/ggml_words.wgsl). Each (kernel, type) pair is its own
// contract — matvec_ggml_q4_k, … — made once here, so pipelines and bind group layouts are cached per type.
import matvecRows from '../../../../shaders/lib/matvec_rows.wgsl?raw';
import matmulTiles from '../../../../shaders/lib/matmul_tiles.wgsl?raw';
import matmulRows from '../../../../shaders/lib/matmul_rows.wgsl?raw';
import words from '../../../../shaders/lib/ggml_words.wgsl?raw';
import q8_0 from '../../../../shaders/lib/ggml/q8_0.wgsl?raw';
import q4_0 from '../../../../shaders/lib/ggml/q4_0.wgsl?raw';
import q4_1 from '../../../../shaders/lib/ggml/q4_1.wgsl?raw';
import q5_0 from '../../../../shaders/lib/ggml/q5_0.wgsl?raw';
import q5_1 from '../../../../shaders/lib/ggml/q5_1.wgsl?raw';
import q4_k from '../../../../shaders/lib/ggml/q4_k.wgsl?raw';
import q5_k from '../../../../shaders/lib/ggml/q5_k.wgsl?raw';
import q6_k from '../../../../shaders/lib/ggml/q6_k.wgsl?raw';
import kScales from '../../../../shaders/lib/ggml/k_scales.wgsl?raw';
import matvecSource from '../../../../shaders/matvec_ggml.wgsl?raw';
import matmulSource from '../../../../shaders/matmul_ggml.wgsl?raw';
import matmulRowsSource from '../../../../shaders/matmul_rows_ggml.wgsl?raw';
import embedSource from '../../../../shaders/embed_ggml.wgsl?raw';
import { GGML_BLOCK_TYPES, type GgmlBlockType, type GpuLinear, type GpuLinearChunk } from '../../gpu-weights.ts';
import { defineKernel, read, rw, STEP, uniformBuffer, uniformStruct, type Kernel } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';
import type { MatmulRowsLayout, MatmulTilesLayout } from '../../tuning.ts';
import type { EmbedTarget } from './embed-dense.ts';
import { CHUNK, Epilogue, jobPlain, type LinearTarget } from './linear-contract.ts';
import { matmulRowsOp, ROWS_X_LIBS } from './matmul-rows.ts';
import { matmulTilesOp } from './matmul-tiles.ts';
import { matvecRowsOp } from './matvec-rows.ts';

/** Each block type's decode libs, in composition order. */
const BLOCKS: Record<GgmlBlockType, readonly string[]> = {
  Q8_0: [q8_0], Q4_0: [q4_0], Q4_1: [q4_1], Q5_0: [q5_0], Q5_1: [q5_1], Q4_K: [kScales, q4_k], Q5_K: [kScales, q5_k], Q6_K: [q6_k],
};

const WEIGHT = read('array<vec4<u32>>');   // the chunk's rows as stored + 16 zero bytes

function linearBindings(x: string) {
  return { step: STEP, weight: WEIGHT, x: read(x), y: rw('array<f32>'), chunk: CHUNK };
}

type LinearBindings = ReturnType<typeof linearBindings>;
type EmbedBindings = { step: typeof STEP; weight: typeof WEIGHT; ids: ReturnType<typeof read>; out: ReturnType<typeof rw>; chunk: ReturnType<typeof uniformStruct> };

export interface GgmlKernels {
  matvec: Kernel<LinearBindings>;
  matmul: Kernel<LinearBindings>;
  matmulRows: Kernel<LinearBindings>;
  embed: Kernel<EmbedBindings>;
}

const made = new Map<GgmlBlockType, GgmlKernels>();

/** The four kernels of a ggml block type (made once per type). */
export function ggmlKernels(type: GgmlBlockType): GgmlKernels {
  let k = made.get(type);
  if (!k) {
    const block = [words, ...BLOCKS[type]];
    const id = type.toLowerCase();
    k = {
      matvec: defineKernel({ name: `matvec_ggml_${id}`, family: 'matvec_ggml', source: matvecSource, libs: [matvecRows, jobPlain, ...block], reduces: true, constants: Epilogue, bindings: linearBindings('array<vec4<f32>>') }),
      matmul: defineKernel({ name: `matmul_ggml_${id}`, family: 'matmul_ggml', source: matmulSource, libs: [matmulTiles, jobPlain, ...block], constants: Epilogue, bindings: linearBindings('array<f32>') }),
      matmulRows: defineKernel({ name: `matmul_rows_ggml_${id}`, family: 'matmul_rows_ggml', source: matmulRowsSource, libs: [matmulRows, jobPlain, ...block], subgroupLibs: ROWS_X_LIBS, constants: Epilogue, bindings: linearBindings('array<f32>') }),
      embed: defineKernel({
        name: `embed_ggml_${id}`, family: 'embed_ggml', source: embedSource, libs: block,
        bindings: { step: STEP, weight: WEIGHT, ids: read('array<u32>'), out: rw('array<f32>'), chunk: uniformStruct('Chunk', ['row_start', 'rows']) },
      }),
    };
    made.set(type, k);
  }
  return k;
}

/** Every ggml kernel, for the contract test. */
export const GGML_KERNEL_FAMILY: readonly Kernel[] = GGML_BLOCK_TYPES.flatMap((t) => Object.values(ggmlKernels(t)) as Kernel[]);

function blockType(chunk: GpuLinearChunk): GgmlBlockType {
  if (chunk.format.kind !== 'ggml') throw new Error(`a ${chunk.format.kind} chunk given to a ggml kernel`);
  return chunk.format.type;
}

export function ggmlMatvecOp(cache: PipelineCache, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget, uniform: GPUBuffer): Op {
  return matvecRowsOp(cache, ggmlKernels(blockType(chunk)).matvec, cache.tuning.matvec.ggml, w, chunk, t, {
    consts: {}, buffers: { step: t.step, weight: chunk.buffers[0]!, x: t.x, y: t.y, chunk: uniform },
  });
}

export function ggmlMatmulOp(cache: PipelineCache, tile: MatmulTilesLayout, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget, uniform: GPUBuffer): Op {
  return matmulTilesOp(cache, ggmlKernels(blockType(chunk)).matmul, tile, w, chunk, t, {
    consts: {}, buffers: { step: t.step, weight: chunk.buffers[0]!, x: t.x, y: t.y, chunk: uniform },
  });
}

export function ggmlMatmulRowsOp(cache: PipelineCache, layout: MatmulRowsLayout, w: GpuLinear, chunk: GpuLinearChunk, t: LinearTarget, uniform: GPUBuffer): Op {
  return matmulRowsOp(cache, ggmlKernels(blockType(chunk)).matmulRows, layout, w, chunk, t, {
    consts: {}, buffers: { step: t.step, weight: chunk.buffers[0]!, x: t.x, y: t.y, chunk: uniform },
  });
}

const EMBED_WG = 64;

export function ggmlEmbedOp(cache: PipelineCache, e: GpuLinear, chunk: GpuLinearChunk, t: EmbedTarget): Op {
  const H = e.cols;
  const kernel = ggmlKernels(blockType(chunk)).embed;
  const uniform = uniformBuffer(cache.device, kernel.bindings.chunk, { row_start: chunk.rowStart, rows: chunk.rows });
  return kernelOp(cache, kernel, {
    label: `${e.name} gather`, consts: { H, WG: EMBED_WG }, owned: [uniform],
    buffers: { step: t.step, weight: chunk.buffers[0]!, ids: t.ids, out: t.out, chunk: uniform },
    grid: (n) => [Math.ceil(H / 32 / EMBED_WG), n, 1],
  });
}
