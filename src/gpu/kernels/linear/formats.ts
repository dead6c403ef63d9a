// The weight formats of the linear kernels, one row each: a format is its block decode
// (shaders/lib/formats/<format>.wgsl: PARTS, WRaw, w_raw, w_decode), its block dot for the decode matvec
// (<format>_dot.wgsl: BLOCK_K, XBlock, load_x, block_dot), the weight bindings they read and how a chunk
// fills them. One structure file per kernel (shaders/matvec.wgsl, matmul_tiles.wgsl, matmul_rows.wgsl,
// embed.wgsl) is composed with each row by ./linear-kernels.ts, the way llama.cpp's vulkan-shaders-gen
// makes every mul_mat_vec variant from one skeleton. The ggml block types are one row each, on the shared
// ggml decode and dot (shaders/lib/formats/ggml*.wgsl) over the type's blocks (shaders/lib/ggml/<type>.wgsl).
import dense from '../../../../shaders/lib/formats/dense.wgsl?raw';
import denseDot from '../../../../shaders/lib/formats/dense_dot.wgsl?raw';
import q4 from '../../../../shaders/lib/formats/q4f16_1.wgsl?raw';
import q4Dot from '../../../../shaders/lib/formats/q4f16_1_dot.wgsl?raw';
import ggml from '../../../../shaders/lib/formats/ggml.wgsl?raw';
import ggmlDot from '../../../../shaders/lib/formats/ggml_dot.wgsl?raw';
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
import superblockX from '../../../../shaders/lib/ggml/superblock_x.wgsl?raw';
import q4_kSuperblock from '../../../../shaders/lib/ggml/q4_k_superblock.wgsl?raw';
import q6_kSuperblock from '../../../../shaders/lib/ggml/q6_k_superblock.wgsl?raw';
import q5_kSuperblock from '../../../../shaders/lib/ggml/q5_k_superblock.wgsl?raw';
import kSuperblockScales from '../../../../shaders/lib/ggml/k_superblock_scales.wgsl?raw';
import superblockWords from '../../../../shaders/lib/ggml/superblock_words.wgsl?raw';
import q8_0Superblock from '../../../../shaders/lib/ggml/q8_0_superblock.wgsl?raw';
import q4_0Superblock from '../../../../shaders/lib/ggml/q4_0_superblock.wgsl?raw';
import q5_0Superblock from '../../../../shaders/lib/ggml/q5_0_superblock.wgsl?raw';
import q4_1Superblock from '../../../../shaders/lib/ggml/q4_1_superblock.wgsl?raw';
import q5_1Superblock from '../../../../shaders/lib/ggml/q5_1_superblock.wgsl?raw';
import { GGML_BLOCK_TYPES, type ChunkFormat, type GgmlBlockType } from '../../gpu-weights.ts';
import { read, type Binding } from '../../kernel.ts';
import type { Consts } from '../../pipelines.ts';

export interface FormatKernelRow {
  /** The kernels' name suffix: matvec_<id>, matmul_<id>, matmul_rows_<id>, embed_<id>. */
  id: string;
  /** Libraries giving the block decode (PARTS, WRaw, w_raw, w_decode), in composition order. */
  decode: readonly string[];
  /** Libraries giving the decode matvec's block dot, placed after `decode`. */
  dot: readonly string[];
  /** Parts of 8 values per decode block (generated as the WGSL constant PARTS); PARTS·8 divides 32. */
  parts: 1 | 4;
  /** The weight bindings, in binding order (they sit between `step` and the kernel's own). */
  weights: Record<string, Binding>;
  /** A chunk's buffers by weight binding name (a chunk's `buffers`, in that order). */
  buffers(chunk: { buffers: readonly GPUBuffer[] }): Record<string, GPUBuffer>;
  /**
   * Block types with a super-block decode matvec (shaders/matvec_superblock.wgsl): its libraries (giving
   * QK, QBYTES, SB_LANES, SbX, sb_load_x, sb_dot), SB_LANES (the lanes sharing a super-block) and the
   * values a super-block spans, which must divide K (the 32-value types group eight blocks: K % 256).
   * Absent: the format decodes with shaders/matvec.wgsl whatever the layout asks.
   */
  superblock?: { libs: readonly string[]; lanes: number; values: number };
  /** Override constants the format's libraries read. */
  consts(format: ChunkFormat): Consts;
}

const WEIGHT = read('array<vec4<u32>>');
const one = (chunk: { buffers: readonly GPUBuffer[] }) => ({ weight: chunk.buffers[0]! });
const none = (): Consts => ({});

const DENSE: FormatKernelRow = {
  id: 'dense', decode: [dense], dot: [denseDot], parts: 1, weights: { weight: WEIGHT }, buffers: one,
  consts: (f) => {
    if (f.kind !== 'dense') throw new Error(`a ${f.kind} chunk given to a dense kernel`);
    return { WDTYPE: f.wdtype };
  },
};

const Q4F16_1: FormatKernelRow = {
  id: 'q4', decode: [q4], dot: [q4Dot], parts: 4,
  weights: { qweight: WEIGHT, scales: read('array<u32>') },
  buffers: (chunk) => ({ qweight: chunk.buffers[0]!, scales: chunk.buffers[1]! }),
  consts: none,
};

/** Each ggml block type's libraries (on shaders/lib/ggml_words.wgsl), in composition order. */
const GGML_BLOCKS: Record<GgmlBlockType, readonly string[]> = {
  Q8_0: [q8_0], Q4_0: [q4_0], Q4_1: [q4_1], Q5_0: [q5_0], Q5_1: [q5_1], Q4_K: [kScales, q4_k], Q5_K: [kScales, q5_k], Q6_K: [q6_k],
};

/**
 * The block types with a super-block decode matvec: its libraries after shaders/lib/ggml_words.wgsl (the
 * K-quants on their type's own; the 32-value types in place of it, a super-block being eight blocks),
 * SB_LANES, and the values a super-block spans.
 */
const GGML_SUPERBLOCKS: Partial<Record<GgmlBlockType, { libs: readonly string[]; lanes: number; values: number }>> = {
  Q4_K: { libs: [kScales, q4_k, kSuperblockScales, superblockX, q4_kSuperblock], lanes: 4, values: 256 },
  Q5_K: { libs: [kScales, q5_k, kSuperblockScales, superblockX, q5_kSuperblock], lanes: 4, values: 256 },
  Q6_K: { libs: [q6_k, superblockX, q6_kSuperblock], lanes: 4, values: 256 },
  Q8_0: { libs: [superblockWords, superblockX, q8_0Superblock], lanes: 4, values: 256 },
  Q4_0: { libs: [superblockWords, superblockX, q4_0Superblock], lanes: 4, values: 256 },
  Q5_0: { libs: [superblockWords, superblockX, q5_0Superblock], lanes: 4, values: 256 },
  Q4_1: { libs: [superblockWords, superblockX, q4_1Superblock], lanes: 4, values: 256 },
  Q5_1: { libs: [superblockWords, superblockX, q5_1Superblock], lanes: 4, values: 256 },
};

const GGML = Object.fromEntries(GGML_BLOCK_TYPES.map((t): [GgmlBlockType, FormatKernelRow] => {
  const sb = GGML_SUPERBLOCKS[t];
  return [t, {
    id: `ggml_${t.toLowerCase()}`, decode: [words, ...GGML_BLOCKS[t], ggml], dot: [ggmlDot], parts: 4,
    weights: { weight: WEIGHT }, buffers: one, consts: none,
    ...(sb ? { superblock: { ...sb, libs: [words, ...sb.libs] } } : {}),
  }];
})) as Record<GgmlBlockType, FormatKernelRow>;

/** Every weight format (ggml: one per block type). */
export const WEIGHT_FORMATS: readonly FormatKernelRow[] = [DENSE, Q4F16_1, ...GGML_BLOCK_TYPES.map((t) => GGML[t])];

/** The weight format of a chunk. */
export function weightFormat(f: ChunkFormat): FormatKernelRow {
  return f.kind === 'dense' ? DENSE : f.kind === 'q4' ? Q4F16_1 : GGML[f.type];
}
