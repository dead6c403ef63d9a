// Dequantization of ggml blocks exactly as ggml-quants.c's dequantize_row_* define it, each operation
// rounded to f32 in the order the C code writes it (no FMA contraction). Reads the bytes as stored.
// Block layouts: see GgmlLinear in ../../types.ts and GGML_TYPES in ./ggml-types.ts.

import { bf16BitsToF32, f16BitsToF32 } from '../../float-bits.ts';
import type { GgmlLinear, GgmlType } from '../../types.ts';
import { GGML_TYPES, ggmlRowBytes } from './ggml-types.ts';

const f = Math.fround;

/** Q4_K / Q5_K sub-block s's 6-bit scale and min (ggml's get_scale_min_k4), from the 12 scale bytes at p. */
export function scaleMinK4(b: Uint8Array, p: number, s: number): [number, number] {
  if (s < 4) return [b[p + s]! & 63, b[p + s + 4]! & 63];
  return [(b[p + s + 4]! & 0xf) | ((b[p + s - 4]! >> 6) << 4), (b[p + s + 4]! >> 4) | ((b[p + s]! >> 6) << 4)];
}

const half = (b: Uint8Array, p: number): number => f16BitsToF32(b[p]! | (b[p + 1]! << 8));
const u32 = (b: Uint8Array, p: number): number => (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;

type BlockDecoder = (b: Uint8Array, p: number, y: Float32Array, o: number) => void;

const DECODERS: Record<Exclude<GgmlType, 'F32' | 'F16' | 'BF16'>, BlockDecoder> = {
  Q8_0(b, p, y, o) {
    const d = half(b, p);
    for (let j = 0; j < 32; j++) y[o + j] = ((b[p + 2 + j]! << 24) >> 24) * d;
  },
  Q4_0(b, p, y, o) {
    const d = half(b, p);
    for (let j = 0; j < 16; j++) {
      const q = b[p + 2 + j]!;
      y[o + j] = ((q & 0xf) - 8) * d;
      y[o + j + 16] = ((q >> 4) - 8) * d;
    }
  },
  Q4_1(b, p, y, o) {
    const d = half(b, p), m = half(b, p + 2);
    for (let j = 0; j < 16; j++) {
      const q = b[p + 4 + j]!;
      y[o + j] = f((q & 0xf) * d) + m;
      y[o + j + 16] = f((q >> 4) * d) + m;
    }
  },
  Q5_0(b, p, y, o) {
    const d = half(b, p), qh = u32(b, p + 2);
    for (let j = 0; j < 16; j++) {
      const q = b[p + 6 + j]!;
      y[o + j] = (((q & 0xf) | (((qh >>> j) << 4) & 0x10)) - 16) * d;
      y[o + j + 16] = (((q >> 4) | ((qh >>> (j + 12)) & 0x10)) - 16) * d;
    }
  },
  Q5_1(b, p, y, o) {
    const d = half(b, p), m = half(b, p + 2), qh = u32(b, p + 4);
    for (let j = 0; j < 16; j++) {
      const q = b[p + 8 + j]!;
      y[o + j] = f(((q & 0xf) | (((qh >>> j) << 4) & 0x10)) * d) + m;
      y[o + j + 16] = f(((q >> 4) | ((qh >>> (j + 12)) & 0x10)) * d) + m;
    }
  },
  Q4_K(b, p, y, o) {
    const d = half(b, p), min = half(b, p + 2);
    for (let pair = 0; pair < 4; pair++) {
      const [sc1, m1] = scaleMinK4(b, p + 4, 2 * pair);
      const [sc2, m2] = scaleMinK4(b, p + 4, 2 * pair + 1);
      const d1 = f(d * sc1), mm1 = f(min * m1), d2 = f(d * sc2), mm2 = f(min * m2);
      const q = p + 16 + 32 * pair, out = o + 64 * pair;
      for (let l = 0; l < 32; l++) {
        y[out + l] = f(d1 * (b[q + l]! & 0xf)) - mm1;
        y[out + 32 + l] = f(d2 * (b[q + l]! >> 4)) - mm2;
      }
    }
  },
  Q5_K(b, p, y, o) {
    const d = half(b, p), min = half(b, p + 2);
    for (let pair = 0; pair < 4; pair++) {
      const [sc1, m1] = scaleMinK4(b, p + 4, 2 * pair);
      const [sc2, m2] = scaleMinK4(b, p + 4, 2 * pair + 1);
      const d1 = f(d * sc1), mm1 = f(min * m1), d2 = f(d * sc2), mm2 = f(min * m2);
      const u1 = 1 << (2 * pair), u2 = 2 << (2 * pair);
      const ql = p + 48 + 32 * pair, qh = p + 16, out = o + 64 * pair;
      for (let l = 0; l < 32; l++) {
        y[out + l] = f(d1 * ((b[ql + l]! & 0xf) + (b[qh + l]! & u1 ? 16 : 0))) - mm1;
        y[out + 32 + l] = f(d2 * ((b[ql + l]! >> 4) + (b[qh + l]! & u2 ? 16 : 0))) - mm2;
      }
    }
  },
  Q6_K(b, p, y, o) {
    const d = half(b, p + 208);
    for (let h = 0; h < 2; h++) {
      const ql = p + 64 * h, qh = p + 128 + 32 * h, sc = p + 192 + 8 * h, out = o + 128 * h;
      for (let l = 0; l < 32; l++) {
        const is = l >> 4, a = b[ql + l]!, c = b[ql + 32 + l]!, hi = b[qh + l]!;
        const s = (k: number) => f(d * ((b[sc + is + k]! << 24) >> 24));
        y[out + l] = f(s(0) * (((a & 0xf) | ((hi & 3) << 4)) - 32));
        y[out + l + 32] = f(s(2) * (((c & 0xf) | (((hi >> 2) & 3) << 4)) - 32));
        y[out + l + 64] = f(s(4) * (((a >> 4) | (((hi >> 4) & 3) << 4)) - 32));
        y[out + l + 96] = f(s(6) * (((c >> 4) | (((hi >> 6) & 3) << 4)) - 32));
      }
    }
  },
};

/**
 * Rows [row0, row1) of a ggml tensor [rows, cols] stored in `bytes` (row 0 at byte 0) as f32,
 * [row1 − row0, cols], exactly as ggml dequantizes them.
 */
export function dequantizeGgmlRows(type: GgmlType, bytes: Uint8Array, cols: number, row0: number, row1: number): Float32Array {
  const rowBytes = ggmlRowBytes(type, cols);
  const n = row1 - row0;
  if (bytes.byteLength < row1 * rowBytes) {
    throw new RangeError(`${type}: rows [${row0}, ${row1}) need ${row1 * rowBytes} bytes, the tensor has ${bytes.byteLength}`);
  }
  const out = new Float32Array(n * cols);
  const start = row0 * rowBytes;
  if (type === 'F32') {
    const copy = bytes.slice(start, start + n * rowBytes);
    out.set(new Float32Array(copy.buffer));
    return out;
  }
  if (type === 'F16' || type === 'BF16') {
    const dec = type === 'F16' ? f16BitsToF32 : bf16BitsToF32;
    for (let i = 0; i < n * cols; i++) out[i] = dec(bytes[start + 2 * i]! | (bytes[start + 2 * i + 1]! << 8));
    return out;
  }
  const { blockSize, blockBytes } = GGML_TYPES[type];
  const decode = DECODERS[type];
  const blocks = (n * cols) / blockSize;
  for (let k = 0; k < blocks; k++) decode(bytes, start + k * blockBytes, out, k * blockSize);
  return out;
}

/** Rows [row0, row1) of a GgmlLinear as f32 [row1 − row0, cols], across its segments. */
export function ggmlLinearRows(l: GgmlLinear, row0: number, row1: number): Float32Array {
  const out = new Float32Array((row1 - row0) * l.cols);
  let base = 0;                                  // first matrix row of the current segment
  for (const s of l.segments) {
    const a = Math.max(row0, base), b = Math.min(row1, base + s.rows);
    if (a < b) out.set(dequantizeGgmlRows(s.type, s.bytes, l.cols, a - base, b - base), (a - row0) * l.cols);
    base += s.rows;
  }
  return out;
}
