// ggml's reference quantizers (ggml-quants.c quantize_row_*_ref: what llama-quantize runs without an
// importance matrix), for writing tiny GGUF test models. Every float operation is rounded to f32 in the
// C order (no FMA contraction), so the same input gives the same bytes on every machine. K-quants live
// in ./ggml-quantize-k.ts.

import { f32ToF16Bits, f32ToBf16Bits } from '../../tensor-utils.ts';
import type { GgmlType } from '../../types.ts';
import { GGML_TYPES, ggmlRowBytes } from './ggml-types.ts';
import { quantizeBlockQ4K, quantizeBlockQ5K, quantizeBlockQ6K } from './ggml-quantize-k.ts';

const f = Math.fround;

/** C's (int8_t)/(uint8_t) cast of a float in range: truncation toward zero. */
const trunc = Math.trunc;

/** C's roundf: half away from zero. */
export function roundAway(x: number): number {
  return x < 0 ? -Math.floor(-x + 0.5) : Math.floor(x + 0.5);
}

export function putHalf(out: Uint8Array, p: number, x: number): void {
  const h = f32ToF16Bits(x);
  out[p] = h & 0xff;
  out[p + 1] = h >> 8;
}

type BlockQuantizer = (x: Float32Array, xo: number, out: Uint8Array, p: number) => void;

function absMaxSigned(x: Float32Array, xo: number, n: number): number {
  let amax = 0, max = 0;
  for (let j = 0; j < n; j++) {
    const v = x[xo + j]!;
    if (amax < Math.abs(v)) { amax = Math.abs(v); max = v; }
  }
  return max;
}

function minMax(x: Float32Array, xo: number, n: number): [number, number] {
  let min = 3.4028234663852886e38, max = -3.4028234663852886e38;
  for (let j = 0; j < n; j++) {
    const v = x[xo + j]!;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return [min, max];
}

const QUANTIZERS: Record<Exclude<GgmlType, 'F32' | 'F16' | 'BF16'>, BlockQuantizer> = {
  Q8_0(x, xo, out, p) {
    let amax = 0;
    for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[xo + j]!));
    const d = f(amax / 127), id = d ? f(1 / d) : 0;
    putHalf(out, p, d);
    for (let j = 0; j < 32; j++) out[p + 2 + j] = roundAway(f(x[xo + j]! * id)) & 0xff;
  },
  Q4_0(x, xo, out, p) {
    const max = absMaxSigned(x, xo, 32);
    const d = f(max / -8), id = d ? f(1 / d) : 0;
    putHalf(out, p, d);
    for (let j = 0; j < 16; j++) {
      const a = Math.min(15, trunc(f(f(x[xo + j]! * id) + 8.5)));
      const b = Math.min(15, trunc(f(f(x[xo + 16 + j]! * id) + 8.5)));
      out[p + 2 + j] = a | (b << 4);
    }
  },
  Q4_1(x, xo, out, p) {
    const [min, max] = minMax(x, xo, 32);
    const d = f(f(max - min) / 15), id = d ? f(1 / d) : 0;
    putHalf(out, p, d);
    putHalf(out, p + 2, min);
    for (let j = 0; j < 16; j++) {
      const a = Math.min(15, trunc(f(f(f(x[xo + j]! - min) * id) + 0.5)));
      const b = Math.min(15, trunc(f(f(f(x[xo + 16 + j]! - min) * id) + 0.5)));
      out[p + 4 + j] = a | (b << 4);
    }
  },
  Q5_0(x, xo, out, p) {
    const max = absMaxSigned(x, xo, 32);
    const d = f(max / -16), id = d ? f(1 / d) : 0;
    putHalf(out, p, d);
    let qh = 0;
    for (let j = 0; j < 16; j++) {
      const a = Math.min(31, trunc(f(f(x[xo + j]! * id) + 16.5)));
      const b = Math.min(31, trunc(f(f(x[xo + 16 + j]! * id) + 16.5)));
      out[p + 6 + j] = (a & 0xf) | ((b & 0xf) << 4);
      qh |= ((a & 0x10) >> 4) << j;
      qh |= ((b & 0x10) >> 4) << (j + 16);
    }
    for (let k = 0; k < 4; k++) out[p + 2 + k] = (qh >>> (8 * k)) & 0xff;
  },
  Q5_1(x, xo, out, p) {
    const [min, max] = minMax(x, xo, 32);
    const d = f(f(max - min) / 31), id = d ? f(1 / d) : 0;
    putHalf(out, p, d);
    putHalf(out, p + 2, min);
    let qh = 0;
    for (let j = 0; j < 16; j++) {
      const a = trunc(f(f(f(x[xo + j]! - min) * id) + 0.5)) & 0xff;
      const b = trunc(f(f(f(x[xo + 16 + j]! - min) * id) + 0.5)) & 0xff;
      out[p + 8 + j] = (a & 0xf) | ((b & 0xf) << 4);
      qh |= ((a & 0x10) >> 4) << j;
      qh |= ((b & 0x10) >> 4) << (j + 16);
    }
    for (let k = 0; k < 4; k++) out[p + 4 + k] = (qh >>> (8 * k)) & 0xff;
  },
  Q4_K: quantizeBlockQ4K,
  Q5_K: quantizeBlockQ5K,
  Q6_K: quantizeBlockQ6K,
};

/**
 * Quantize a row-major f32 matrix [rows, cols] (values already f32) to `type` with ggml's reference
 * quantizer, row by row. cols must be a multiple of the type's block size. Float types are converted
 * (round to nearest even).
 */
export function quantizeGgml(type: GgmlType, values: Float32Array, rows: number, cols: number): Uint8Array {
  if (values.length !== rows * cols) throw new RangeError(`quantize ${type}: ${values.length} values for [${rows}, ${cols}]`);
  const out = new Uint8Array(rows * ggmlRowBytes(type, cols));
  if (type === 'F32') {
    out.set(new Uint8Array(Float32Array.from(values).buffer));
    return out;
  }
  if (type === 'F16' || type === 'BF16') {
    const enc = type === 'F16' ? f32ToF16Bits : f32ToBf16Bits;
    for (let i = 0; i < values.length; i++) {
      const h = enc(values[i]!);
      out[2 * i] = h & 0xff;
      out[2 * i + 1] = h >> 8;
    }
    return out;
  }
  const { blockSize, blockBytes } = GGML_TYPES[type];
  const q = QUANTIZERS[type];
  for (let k = 0; k < values.length / blockSize; k++) q(values, k * blockSize, out, k * blockBytes);
  return out;
}
