// Number formats used by model files: bf16 / f16 <-> f32 (bit exact, round-to-nearest-even) and
// MLC's q4f16_1 group quantization. Browser-safe; no import-time work (tables are built lazily).
//
// q4f16_1, as mlc-llm writes it (python/mlc_llm/quantization/group_quantization.py, read 2026-11-30):
//   group size 32 along K, storage u32 holding 8 nibbles, layout "NK": q_weight U32 [N, K/8],
//   q_scale F16 [N, K/32]. Per group: scale = f16(f16(max|w|) / 7);
//   q = clamp(round(w / scale + 7), 0, 14)  (mlc clamps to 2·max_int = 14, so 15 never occurs);
//   element k sits at bits (k % 8)·4 of word k / 8 (low nibble first); w = (q − 7) · scale.
// mlc evaluates the quantizer in f16; we divide in f32, which can differ by one step on exact ties.
// Dequantization here is exact: (q − 7) · scale is a small integer times an f16, exact in f32.

import { ggmlLinearRows } from './formats/gguf/ggml-dequant.ts';
import { bf16BitsToF32, f16BitsToF32, f16ToF32Table, f32ToBf16Bits, f32ToF16Bits, roundToF16 } from './float-bits.ts';
import type { Linear, Q4Linear, StoredDType, TensorData } from './types.ts';

export { bf16BitsToF32, bitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToBits, f32ToF16Bits, roundToF16 } from './float-bits.ts';

export const Q4_GROUP_SIZE = 32;
const Q4_ZERO = 7;
const Q4_MAX_CODE = 14;

export function dtypeSize(dtype: StoredDType): number {
  return dtype === 'F32' || dtype === 'U32' ? 4 : 2;
}

export function shapeElements(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

function u16View(bytes: Uint8Array, firstElement: number, count: number): Uint16Array {
  const start = bytes.byteOffset + firstElement * 2;
  if (start % 2 === 0) return new Uint16Array(bytes.buffer, start, count);
  return new Uint16Array(bytes.slice(firstElement * 2, (firstElement + count) * 2).buffer);
}

function u32View(bytes: Uint8Array, firstElement: number, count: number): Uint32Array {
  const start = bytes.byteOffset + firstElement * 4;
  if (start % 4 === 0) return new Uint32Array(bytes.buffer, start, count);
  return new Uint32Array(bytes.slice(firstElement * 4, (firstElement + count) * 4).buffer);
}

/** Elements [first, first+count) of a BF16/F16/F32 tensor as f32. */
export function elementsToFloat32(t: TensorData, first: number, count: number): Float32Array {
  const out = new Float32Array(count);
  if (t.dtype === 'F32') {
    const words = u32View(t.bytes, first, count);
    out.set(new Float32Array(words.buffer, words.byteOffset, count));
  } else if (t.dtype === 'BF16') {
    const src = u16View(t.bytes, first, count);
    for (let i = 0; i < count; i++) out[i] = bf16BitsToF32(src[i]!);
  } else if (t.dtype === 'F16') {
    const src = u16View(t.bytes, first, count);
    const table = f16ToF32Table();
    for (let i = 0; i < count; i++) out[i] = table[src[i]!]!;
  } else {
    throw new TypeError(`tensor "${t.name}": dtype ${t.dtype} is not a float type`);
  }
  return out;
}

/** A whole BF16/F16/F32 tensor as f32 (row-major, same element order). */
export function toFloat32(t: TensorData): Float32Array {
  return elementsToFloat32(t, 0, shapeElements(t.shape));
}

/** Encode f32 values as a tensor of the given float dtype (rounding to nearest even). */
export function fromFloat32(name: string, values: ArrayLike<number>, shape: number[], dtype: 'BF16' | 'F16' | 'F32'): TensorData {
  const n = shapeElements(shape);
  if (values.length !== n) throw new RangeError(`tensor "${name}": ${values.length} values for shape [${shape}]`);
  if (dtype === 'F32') {
    const f = Float32Array.from(values);
    return { name, dtype, shape, bytes: new Uint8Array(f.buffer) };
  }
  const h = new Uint16Array(n);
  const enc = dtype === 'BF16' ? f32ToBf16Bits : f32ToF16Bits;
  for (let i = 0; i < n; i++) h[i] = enc(values[i]!);
  return { name, dtype, shape, bytes: new Uint8Array(h.buffer) };
}

/**
 * Row blocks stacked into one [rows, cols] tensor (q | k | v, gate | up): the bytes back to back when every
 * part has one dtype, else widened to F32 (unusual).
 */
export function concatRows(label: string, parts: TensorData[], rows: number, cols: number): TensorData {
  const dtype = parts[0]!.dtype;
  if (parts.every((t) => t.dtype === dtype)) {
    const bytes = new Uint8Array(parts.reduce((a, t) => a + t.bytes.byteLength, 0));
    let o = 0;
    for (const t of parts) { bytes.set(t.bytes, o); o += t.bytes.byteLength; }
    return { name: label, dtype, shape: [rows, cols], bytes };
  }
  const f = new Float32Array(rows * cols);
  let o = 0;
  for (const t of parts) { const v = toFloat32(t); f.set(v, o); o += v.length; }
  return { name: label, dtype: 'F32', shape: [rows, cols], bytes: new Uint8Array(f.buffer) };
}

/** Round half to even (what numpy/torch round does). */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * Quantize a row-major f32 matrix [rows, cols] to q4f16_1 (cols a multiple of 32).
 * Returns MLC's two tensors: `${name}.q_weight` U32 [rows, cols/8] and `${name}.q_scale` F16 [rows, cols/32].
 */
export function quantizeQ4f16(name: string, w: ArrayLike<number>, rows: number, cols: number): Q4Linear {
  if (cols % Q4_GROUP_SIZE !== 0) throw new RangeError(`${name}: q4f16_1 needs cols % 32 == 0, got ${cols}`);
  if (w.length !== rows * cols) throw new RangeError(`${name}: ${w.length} values for [${rows}, ${cols}]`);
  const groups = cols / Q4_GROUP_SIZE;
  const words = new Uint32Array(rows * (cols / 8));
  const scales = new Uint16Array(rows * groups);
  for (let r = 0; r < rows; r++) {
    for (let g = 0; g < groups; g++) {
      const base = r * cols + g * Q4_GROUP_SIZE;
      let maxAbs = 0;
      for (let i = 0; i < Q4_GROUP_SIZE; i++) maxAbs = Math.max(maxAbs, Math.abs(w[base + i]!));
      const scaleBits = f32ToF16Bits(roundToF16(maxAbs) / Q4_ZERO);
      scales[r * groups + g] = scaleBits;
      const scale = f16BitsToF32(scaleBits);
      for (let i = 0; i < Q4_GROUP_SIZE; i++) {
        const q = scale === 0 ? Q4_ZERO
          : Math.min(Math.max(roundHalfEven(Math.fround(w[base + i]! / scale) + Q4_ZERO), 0), Q4_MAX_CODE);
        const k = g * Q4_GROUP_SIZE + i;
        const word = r * (cols / 8) + (k >>> 3);
        words[word] = (words[word]! | (q << ((k & 7) * 4))) >>> 0;
      }
    }
  }
  return {
    kind: 'q4f16_1', rows, cols,
    qweight: { name: `${name}.q_weight`, dtype: 'U32', shape: [rows, cols / 8], bytes: new Uint8Array(words.buffer) },
    scales: { name: `${name}.q_scale`, dtype: 'F16', shape: [rows, groups], bytes: new Uint8Array(scales.buffer) },
  };
}

/** Rows [row0, row1) of a q4f16_1 matrix as f32 [row1-row0, cols], exactly (q − 7) · scale. */
export function dequantizeRows(l: Q4Linear, row0: number, row1: number): Float32Array {
  checkRows(l, row0, row1);
  const { cols } = l;
  const wordsPerRow = cols / 8;
  const groups = cols / Q4_GROUP_SIZE;
  const words = u32View(l.qweight.bytes, row0 * wordsPerRow, (row1 - row0) * wordsPerRow);
  const scales = u16View(l.scales.bytes, row0 * groups, (row1 - row0) * groups);
  const out = new Float32Array((row1 - row0) * cols);
  for (let r = 0; r < row1 - row0; r++) {
    for (let k = 0; k < cols; k++) {
      const q = (words[r * wordsPerRow + (k >>> 3)]! >>> ((k & 7) * 4)) & 0xf;
      out[r * cols + k] = (q - Q4_ZERO) * f16BitsToF32(scales[r * groups + ((k / Q4_GROUP_SIZE) | 0)]!);
    }
  }
  return out;
}

/** Rows [row0, row1) of any Linear as f32 [row1-row0, cols]. */
export function linearRowsToFloat32(l: Linear, row0: number, row1: number): Float32Array {
  if (l.kind === 'q4f16_1') return dequantizeRows(l, row0, row1);
  checkRows(l, row0, row1);
  if (l.kind === 'ggml') return ggmlLinearRows(l, row0, row1);
  return elementsToFloat32(l.weight, row0 * l.cols, (row1 - row0) * l.cols);
}

function checkRows(l: Linear, row0: number, row1: number): void {
  if (!(Number.isInteger(row0) && Number.isInteger(row1) && 0 <= row0 && row0 <= row1 && row1 <= l.rows)) {
    throw new RangeError(`${linearName(l)}: rows [${row0}, ${row1}) outside [0, ${l.rows})`);
  }
}

/** A Linear's tensor name for messages (the first segment's for a GGUF matrix). */
export function linearName(l: Linear): string {
  return l.kind === 'dense' ? l.weight.name : l.kind === 'q4f16_1' ? l.qweight.name : l.segments.map((s) => s.name).join('+');
}

