// The weight formats the WASM kernels read, by the codes src/cpu/asm/formats.ts gives them, and how a
// Linear of src/model/types.ts maps onto them (one part per ggml segment).
import type { GgmlType, Linear, StoredDType, StreamRef } from '../model/types.ts';

export const FORMAT = {
  F32: 0, F16: 1, BF16: 2, Q8_0: 3, Q4_0: 4, Q4_1: 5, Q5_0: 6, Q5_1: 7, Q4_K: 8, Q5_K: 9, Q6_K: 10, MLC_Q4: 11,
} as const satisfies Record<GgmlType | 'MLC_Q4', number>;
export type FormatCode = (typeof FORMAT)[keyof typeof FORMAT];

/** Values per block (a row's K must be a multiple). */
export const BLOCK_SIZE: Record<FormatCode, number> = { 0: 1, 1: 1, 2: 1, 3: 32, 4: 32, 5: 32, 6: 32, 7: 32, 8: 256, 9: 256, 10: 256, 11: 32 };

/** One run of rows stored in one format: the bytes (and MLC q4f16_1's scale bytes) as the file has them. */
export interface LinearPart {
  fmt: FormatCode;
  rows: number;
  bytes: Uint8Array;           // rows × rowBytes (empty while `stream` is set)
  stream?: StreamRef;          // streamed (openWeights): the bytes arrive through the load; see ./stream-sink.ts
  scales?: Uint8Array;         // MLC q4f16_1 only: f16 [rows, K/32]
  name: string;
}

function denseCode(dtype: StoredDType, name: string): FormatCode {
  if (dtype === 'U32') throw new TypeError(`${name}: a dense weight cannot be U32`);
  return FORMAT[dtype];
}

/** A Linear's row runs as the kernels take them (nothing decoded, nothing copied). */
export function linearParts(l: Linear): LinearPart[] {
  if (l.kind === 'dense') return [{ fmt: denseCode(l.weight.dtype, l.weight.name), rows: l.rows, bytes: l.weight.bytes, name: l.weight.name, ...(l.weight.stream ? { stream: l.weight.stream } : {}) }];
  if (l.kind === 'q4f16_1') return [{ fmt: FORMAT.MLC_Q4, rows: l.rows, bytes: l.qweight.bytes, scales: l.scales.bytes, name: l.qweight.name }];
  return l.segments.map((s) => ({ fmt: FORMAT[s.type], rows: s.rows, bytes: s.bytes, name: s.name, ...(s.stream ? { stream: s.stream } : {}) }));
}
