// The ggml tensor types pooled reads from GGUF files: their ids, block sizes and byte layouts, as
// ggml defines them (ggml.h `enum ggml_type`, ggml-common.h `block_*`). Every type stores a row of K
// values as K / blockSize blocks laid back to back; rows follow each other with no padding, so row r of
// a [N, K] tensor is bytes [r·rowBytes, (r+1)·rowBytes). "f16" below is an IEEE half, little-endian.

import type { GgmlType } from '../../types.ts';

export interface GgmlTypeInfo {
  name: GgmlType;
  id: number;                  // ggml_type value stored in GGUF tensor infos
  blockSize: number;           // values per block
  blockBytes: number;          // bytes per block
}

/** Block layouts (byte offsets inside one block); the comments are the contract GPU kernels read. */
export const GGML_TYPES: Readonly<Record<GgmlType, GgmlTypeInfo>> = {
  F32: { name: 'F32', id: 0, blockSize: 1, blockBytes: 4 },
  F16: { name: 'F16', id: 1, blockSize: 1, blockBytes: 2 },
  // Q4_0, 32 values, 18 bytes: d f16 @0 | qs[16] @2. Value j<16 = (qs[j] & 15) − 8, j≥16 = (qs[j−16] >> 4) − 8; w = q·d.
  Q4_0: { name: 'Q4_0', id: 2, blockSize: 32, blockBytes: 18 },
  // Q4_1, 32 values, 20 bytes: d f16 @0 | m f16 @2 | qs[16] @4. Nibbles as Q4_0 without −8; w = q·d + m.
  Q4_1: { name: 'Q4_1', id: 3, blockSize: 32, blockBytes: 20 },
  // Q5_0, 32 values, 22 bytes: d f16 @0 | qh u32 @2 (bit j = 5th bit of value j) | qs[16] @6; w = (q − 16)·d.
  Q5_0: { name: 'Q5_0', id: 6, blockSize: 32, blockBytes: 22 },
  // Q5_1, 32 values, 24 bytes: d f16 @0 | m f16 @2 | qh u32 @4 | qs[16] @8; w = q·d + m.
  Q5_1: { name: 'Q5_1', id: 7, blockSize: 32, blockBytes: 24 },
  // Q8_0, 32 values, 34 bytes: d f16 @0 | qs[32] i8 @2; w = q·d.
  Q8_0: { name: 'Q8_0', id: 8, blockSize: 32, blockBytes: 34 },
  // Q4_K, 256 values in 8 sub-blocks of 32, 144 bytes: d f16 @0 | dmin f16 @2 | scales[12] @4 (8 six-bit
  // scales and 8 six-bit mins, packed as get_scale_min_k4) | qs[128] @16. Sub-block pair p (values
  // 64p..64p+63) uses qs[32p..32p+31]: low nibbles for sub-block 2p, high nibbles for 2p+1;
  // w = d·sc·q − dmin·m.
  Q4_K: { name: 'Q4_K', id: 12, blockSize: 256, blockBytes: 144 },
  // Q5_K, 256 values, 176 bytes: d f16 @0 | dmin f16 @2 | scales[12] @4 | qh[32] @16 | qs[128] @48.
  // As Q4_K, plus the 5th bit of value 64p+l (l<32) in bit 2p of qh[l], of value 64p+32+l in bit 2p+1.
  Q5_K: { name: 'Q5_K', id: 13, blockSize: 256, blockBytes: 176 },
  // Q6_K, 256 values in 16 sub-blocks of 16, 210 bytes: ql[128] @0 | qh[64] @128 | scales[16] i8 @192 |
  // d f16 @208. Half h (values 128h..128h+127), l<32: q1 = ql[64h+l] lo | (qh[32h+l] bits 0-1) << 4,
  // q2 = ql[64h+32+l] lo | bits 2-3, q3 = ql[64h+l] hi | bits 4-5, q4 = ql[64h+32+l] hi | bits 6-7, for
  // values 128h + l + {0, 32, 64, 96}; w = d·scales[8h + l/16 + {0,2,4,6}]·(q − 32).
  Q6_K: { name: 'Q6_K', id: 14, blockSize: 256, blockBytes: 210 },
  BF16: { name: 'BF16', id: 30, blockSize: 1, blockBytes: 2 },
};

const BY_ID = new Map(Object.values(GGML_TYPES).map((t) => [t.id, t]));

/** ggml's names for the types we do not read, so a refusal can say which one it met. */
const OTHER_GGML_NAMES: Record<number, string> = {
  4: 'Q4_2 (removed)', 5: 'Q4_3 (removed)', 9: 'Q8_1', 10: 'Q2_K', 11: 'Q3_K', 15: 'Q8_K', 16: 'IQ2_XXS', 17: 'IQ2_XS',
  18: 'IQ3_XXS', 19: 'IQ1_S', 20: 'IQ4_NL', 21: 'IQ3_S', 22: 'IQ2_S', 23: 'IQ4_XS', 24: 'I8', 25: 'I16', 26: 'I32',
  27: 'I64', 28: 'F64', 29: 'IQ1_M', 34: 'TQ1_0', 35: 'TQ2_0', 39: 'MXFP4',
};

export function ggmlTypeById(id: number): GgmlTypeInfo | undefined {
  return BY_ID.get(id);
}

/** "Q2_K", "IQ4_XS", or "type 99" for an id ggml does not know either. */
export function ggmlTypeNameById(id: number): string {
  return BY_ID.get(id)?.name ?? OTHER_GGML_NAMES[id] ?? `type ${id}`;
}

export function isBlockQuantized(type: GgmlType): boolean {
  return GGML_TYPES[type].blockSize > 1;
}

/** Bytes of one row of `cols` values (cols must be a multiple of the block size). */
export function ggmlRowBytes(type: GgmlType, cols: number): number {
  const t = GGML_TYPES[type];
  if (cols % t.blockSize !== 0) throw new RangeError(`${type}: a row of ${cols} values is not a whole number of ${t.blockSize}-value blocks`);
  return (cols / t.blockSize) * t.blockBytes;
}
