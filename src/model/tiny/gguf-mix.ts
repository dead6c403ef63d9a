// Which ggml type each tensor gets in a quantized GGUF, as llama.cpp's llama-quantize chooses it
// without an importance matrix (src/llama-quant.cpp: tensor_allows_quantization,
// llama_tensor_get_type_impl, tensor_type_fallback), for the file types we write. Q4_K_M is a mix:
// Q4_K by default, Q6_K for the output (and a tied token_embd), for attn_v (and Qwen3.5's attn_qkv, which
// llama-quantize treats as attention-v-like) and ffn_down (routed and shared experts' too) in the layers
// use_more_bits picks; models with exactly 8 experts get Q8_0 attn_k/attn_v and Q5_K attn_output; a row
// length (ne[0]) that is not a multiple of the block size falls back (Q4_K→Q5_0, Q5_K→Q5_1,
// Q6_K→Q8_0, then F16).

import { GGML_TYPES } from '../formats/gguf/ggml-types.ts';
import type { GgmlType } from '../types.ts';

export const GGUF_FILE_TYPES = ['F32', 'F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q4_K_M', 'Q5_K_M', 'Q6_K'] as const;
export type GgufFileType = (typeof GGUF_FILE_TYPES)[number];

/** general.file_type values (llama.h enum llama_ftype). */
export const LLAMA_FTYPE: Record<GgufFileType, number> = {
  F32: 0, F16: 1, Q4_0: 2, Q4_1: 3, Q8_0: 7, Q5_0: 8, Q5_1: 9, Q4_K_M: 15, Q5_K_M: 17, Q6_K: 18, BF16: 32,
};

const DEFAULT_TYPE: Record<GgufFileType, GgmlType> = {
  F32: 'F32', F16: 'F16', BF16: 'BF16', Q8_0: 'Q8_0', Q4_0: 'Q4_0', Q4_1: 'Q4_1', Q5_0: 'Q5_0', Q5_1: 'Q5_1',
  Q4_K_M: 'Q4_K', Q5_K_M: 'Q5_K', Q6_K: 'Q6_K',
};

const FALLBACK: Partial<Record<GgmlType, GgmlType>> = { Q4_K: 'Q5_0', Q5_K: 'Q5_1', Q6_K: 'Q8_0' };

export interface MixContext {
  fileType: GgufFileType;
  numLayers: number;
  numExperts: number;          // 0 for a dense model
  tiedEmbeddings: boolean;     // no output.weight: token_embd is quantized as the output
}

/** llama.cpp's use_more_bits: the first and last eighth of the layers, and every third in between. */
export function useMoreBits(i: number, n: number): boolean {
  return i < Math.floor(n / 8) || i >= Math.floor((7 * n) / 8) || (i - Math.floor(n / 8)) % 3 === 2;
}

function layerOf(name: string): number {
  const m = /^blk\.(\d+)\./.exec(name);
  return m ? Number(m[1]) : -1;
}

/**
 * The type of tensor `name` (ne[0] = its row length) in a file of ctx.fileType. `baseType` is what the
 * unquantized file holds for it (F32 for 1-D tensors and the router).
 */
export function ggufTensorType(name: string, ne: readonly number[], baseType: GgmlType, ctx: MixContext): GgmlType {
  const ftype = ctx.fileType;
  // ggml_n_dims: trailing 1s do not count (ffn_gate_inp_shexp ne [H, 1] is 1-D to llama-quantize).
  const dims = ne.reduce((n, d, i) => (d > 1 ? i + 1 : n), 1);
  const quantizable = dims >= 2 && name.endsWith('weight') && !name.includes('_norm.weight') && !name.includes('ffn_gate_inp.weight')
    && !name.includes('ssm_conv1d');
  if (!quantizable) return baseType;
  let type = DEFAULT_TYPE[ftype];
  if (GGML_TYPES[type].blockSize === 1) return type;                 // F32 / F16 / BF16 files: no mix
  const isOutput = name === 'output.weight' || (ctx.tiedEmbeddings && name === 'token_embd.weight');
  const i = layerOf(name);
  const kM = ftype === 'Q4_K_M' || ftype === 'Q5_K_M';
  if (isOutput) {
    if (ne[0]! % GGML_TYPES[type].blockSize !== 0) type = 'Q8_0';
    else if (type !== 'Q8_0') type = 'Q6_K';
  } else if (name.includes('attn_v.weight') || name.includes('attn_qkv.weight')) {   // attention-v-like (category_is_attn_v)
    if (kM && useMoreBits(i, ctx.numLayers)) type = 'Q6_K';
    if (ctx.numExperts === 8) type = 'Q8_0';
  } else if (name.includes('attn_k.weight')) {
    if (ctx.numExperts === 8) type = 'Q8_0';
  } else if (name.includes('ffn_down')) {
    if (kM && useMoreBits(i, ctx.numLayers)) type = 'Q6_K';
  } else if (name.includes('attn_output.weight')) {
    if (ctx.numExperts === 8 && ftype === 'Q4_K_M') type = 'Q5_K';
  }
  if (ne[0]! % GGML_TYPES[type].blockSize !== 0) {
    type = FALLBACK[type] ?? type;
    if (ne[0]! % GGML_TYPES[type].blockSize !== 0) type = 'F16';
  }
  return type;
}

/** llama-quantize's tensor order (weight_name_comparer): non-layer tensors first, then by layer, by name. */
export function quantizeOrder(a: string, b: string): number {
  const la = layerOf(a), lb = layerOf(b);
  if (la !== lb) return la - lb;
  return a < b ? -1 : a > b ? 1 : 0;
}
