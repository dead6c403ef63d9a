// The integer linears (src/cpu/asm/linear-q8.ts over src/cpu/asm/quantize.ts: activations 'q8'), on odd
// shapes (37 or 101 rows, K three blocks), n = 1, 3, 4, 9, 13 tokens (the 8- and 4-token tiles and the
// tail):
// (a) the quantizer bit for bit against a scalar TS statement of it, and every output against a scalar
//     TS statement of the same integer semantics (exact integer block sums, each scaled in f64): the
//     kernel differs only by its f32 rounding of the scaling and the lane sums, bounded by 1e-5 of
//     Σ|terms| (about 2^-23 per operation over ≤ 3·8 accumulated blocks, with margin);
// (b) against the f32 reference matmul within the activations' quantization bound, computed per output:
//     |Σ w·(x − d·q)| ≤ Σ |w|·d/2 (round to nearest leaves at most d/2 per value), plus 2e-6 for the f32
//     path's own summation error; the bound is a few 1e-3 of the output's scale here;
// (c) formats the integer path does not read fall back to the f32 path (1 and 3 threads bit for bit, on
//     both builds: test/unit/cpu/threads.test.ts).
import { beforeAll, describe, expect, it } from 'vitest';
import { FORMAT } from '../../../src/cpu/formats.ts';
import { WasmKernels } from '../../../src/cpu/wasm-kernels.ts';
import { quantizeGgml } from '../../../src/model/formats/gguf/ggml-quantize.ts';
import { GGML_TYPES } from '../../../src/model/formats/gguf/ggml-types.ts';
import { embedRows, matmul } from '../../../src/model/reference/ops.ts';
import { f16BitsToF32 } from '../../../src/model/tensor-utils.ts';
import type { GgmlType, Linear } from '../../../src/model/types.ts';
import { randomF32, testKernels } from './helpers.ts';

type IntType = 'Q8_0' | 'Q4_0' | 'Q4_K' | 'Q6_K';
const TYPES: IntType[] = ['Q8_0', 'Q4_0', 'Q4_K', 'Q6_K'];
const NS = [1, 3, 4, 9, 13];   // 13: a tile of 8, one of 4 and a single token
const f = Math.fround;

function ggml(type: GgmlType, rows: number, K: number, seed: number): Linear {
  return { kind: 'ggml', rows, cols: K, segments: [{ name: type, type, rows, bytes: quantizeGgml(type, randomF32(rows * K, seed, 0.5), rows, K) }] };
}

/** Round half to even, as f32x4.nearest does. */
function nearestEven(v: number): number {
  const r = Math.round(v);
  return Math.abs(v - Math.trunc(v)) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The quantizer, scalar: per 32 values d = amax/127, q = nearest-even(x · (1/d)), s = d·Σq (all f32). */
function quantizeRef(x: Float32Array, n: number): { q: Int16Array; d: Float32Array; s: Float32Array } {
  const B = x.length / n / 32, q = new Int16Array(x.length), d = new Float32Array(n * B), s = new Float32Array(n * B);
  for (let b = 0; b < n * B; b++) {
    let amax = 0;
    for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[b * 32 + j]!));
    const db = f(amax / 127), id = db !== 0 ? f(1 / db) : 0;
    let sum = 0;
    for (let j = 0; j < 32; j++) { q[b * 32 + j] = nearestEven(f(x[b * 32 + j]! * id)); sum += q[b * 32 + j]!; }
    d[b] = db;
    s[b] = f(db * sum);
  }
  return { q, d, s };
}

/** One 32-value block of a weight row in integer terms: y += f32(f·dx)·Σ mul_j·code_j·qx_j − m·s. */
interface IntBlock { code: Int32Array; mul: Int32Array; f: number; m: number }

const h16 = (b: Uint8Array, at: number): number => f16BitsToF32(b[at]! | (b[at + 1]! << 8));

function intBlocks(type: IntType, b: Uint8Array, row: number, K: number): IntBlock[] {
  const rb = (K / GGML_TYPES[type].blockSize) * GGML_TYPES[type].blockBytes, r0 = row * rb, out: IntBlock[] = [];
  const block = (): IntBlock => ({ code: new Int32Array(32), mul: new Int32Array(32).fill(1), f: 0, m: 0 });
  if (type === 'Q8_0' || type === 'Q4_0') {
    for (let i = 0; i < K / 32; i++) {
      const blk = block(), p = r0 + i * (type === 'Q8_0' ? 34 : 18);
      blk.f = h16(b, p);
      for (let j = 0; j < 32; j++) blk.code[j] = type === 'Q8_0' ? ((b[p + 2 + j]! << 24) >> 24) : ((j < 16 ? b[p + 2 + j]! & 15 : b[p + 2 + j - 16]! >> 4) - 8);
      out.push(blk);
    }
  } else if (type === 'Q4_K') {
    for (let i = 0; i < K / 256; i++) {
      const p = r0 + i * 144, d = h16(b, p), dmin = h16(b, p + 2), sc = p + 4;
      for (let s = 0; s < 8; s++) {
        const [scale, min] = s < 4 ? [b[sc + s]! & 63, b[sc + s + 4]! & 63]
          : [(b[sc + s + 4]! & 15) | ((b[sc + s - 4]! >> 6) << 4), (b[sc + s + 4]! >> 4) | ((b[sc + s]! >> 6) << 4)];
        const blk = block();
        blk.f = f(d * scale);
        blk.m = f(dmin * min);
        for (let j = 0; j < 32; j++) { const v = b[p + 16 + 32 * (s >> 1) + j]!; blk.code[j] = s & 1 ? v >> 4 : v & 15; }
        out.push(blk);
      }
    }
  } else {
    for (let i = 0; i < K / 256; i++) {
      const p = r0 + i * 210, d = h16(b, p + 208);
      for (let h = 0; h < 2; h++) {
        for (let qi = 0; qi < 4; qi++) {
          const blk = block();
          blk.f = d;
          for (let l = 0; l < 32; l++) {
            const lo = b[p + 64 * h + (qi & 1 ? 32 : 0) + l]!, hb = b[p + 128 + 32 * h + l]!;
            blk.code[l] = ((qi < 2 ? lo & 15 : lo >> 4) | (((hb >> (2 * qi)) & 3) << 4)) - 32;
            blk.mul[l] = (b[p + 192 + 8 * h + (l >> 4) + 2 * qi]! << 24) >> 24;
          }
          out.push(blk);
        }
      }
    }
  }
  return out;
}

/** y [n, rows] by the integer semantics in f64, and Σ|terms| per output (the scale of f32 rounding). */
function intRef(type: IntType, w: Linear, x: Float32Array, n: number): { y: Float64Array; mag: Float64Array } {
  const K = w.cols, B = K / 32, bytes = (w as Extract<Linear, { kind: 'ggml' }>).segments[0]!.bytes, qx = quantizeRef(x, n);
  const y = new Float64Array(n * w.rows), mag = new Float64Array(n * w.rows);
  for (let r = 0; r < w.rows; r++) {
    const blocks = intBlocks(type, bytes, r, K);
    for (let t = 0; t < n; t++) {
      let acc = 0, abs = 0;
      blocks.forEach((blk, b) => {
        let isum = 0;
        for (let j = 0; j < 32; j++) isum += blk.mul[j]! * blk.code[j]! * qx.q[(t * B + b) * 32 + j]!;
        const term = f(blk.f * qx.d[t * B + b]!) * isum, min = blk.m * qx.s[t * B + b]!;
        acc += term - min;
        abs += Math.abs(term) + Math.abs(min);
      });
      y[t * w.rows + r] = acc;
      mag[t * w.rows + r] = abs;
    }
  }
  return { y, mag };
}

/** Per output Σ_k |w_k|·d_k/2: how far the activations' quantization can move it. */
function quantBound(w: Linear, n: number, d: Float32Array): Float64Array {
  const K = w.cols, B = K / 32, W = embedRows(w, Array.from({ length: w.rows }, (_, i) => i)), out = new Float64Array(n * w.rows);
  for (let t = 0; t < n; t++) {
    for (let r = 0; r < w.rows; r++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += Math.abs(W[r * K + k]!) * d[t * B + (k >> 5)]! / 2;
      out[t * w.rows + r] = s;
    }
  }
  return out;
}

// Both builds: the relaxed one dots Q4_0/Q4_K's nibbles with i8 codes (relaxed_dot_i8x16_i7x16), the
// plain one on widened i16; both are held to the same integer semantics.
describe.each(['plain', 'relaxed'] as const)('%s SIMD', (simd) => {
  let k: WasmKernels;
  beforeAll(async () => { k = await testKernels(simd); expect(k.simd).toBe(simd); k.activations = 'q8'; }, 120_000);   // a fresh clone compiles the kernels first

  it('the quantizer matches its scalar statement bit for bit (including an all-zero block and exact ties)', () => {
    const x = randomF32(5 * 96, 77, 3);
    x.fill(0, 32, 64);                               // token 0, block 1: all zero (d = 0, q = 0)
    for (let j = 0; j < 31; j++) x[96 + j] = j - 15.5;      // token 1, block 0: amax 127 so d = 1 and every x·(1/d) is a tie
    x[96 + 31] = 127;
    const got = k.quantizeQ8(x, 5), want = quantizeRef(x, 5);
    expect(got.q).toEqual(want.q);
    expect(got.d).toEqual(want.d);
    expect(got.s).toEqual(want.s);
    // the relaxed build's copies: the same codes as i8, and each block's Σq as an integer
    expect(got.q8).toEqual(Int8Array.from(want.q));
    expect(got.sums).toEqual(Int32Array.from({ length: 5 * 3 }, (_, b) => want.q.subarray(b * 32, b * 32 + 32).reduce((a, v) => a + v, 0)));
    // each token's record (the one-token rows' copy): the same d, s and Σq, its blocks side by side
    for (let t = 0; t < 5; t++) {
      expect(got.records[t]!.d).toEqual(want.d.subarray(t * 3, t * 3 + 3));
      expect(got.records[t]!.s).toEqual(want.s.subarray(t * 3, t * 3 + 3));
      expect(got.records[t]!.sums).toEqual(got.sums.subarray(t * 3, t * 3 + 3));
    }
  });

  describe.each(TYPES)('activations q8, %s', (type) => {
    const K = 3 * GGML_TYPES[type].blockSize;
    it.each(NS)(`37×${K}, n = %i: the integer semantics (1e-5 of Σ|terms|) and the f32 reference (quantization bound)`, (n) => {
      expect(k.q8Covers(FORMAT[type])).toBe(true);
      const w = ggml(type, 37, K, 5 + n), x = randomF32(n * K, 50 + n);
      const y = k.linear(k.placeLinear(w), x, n);
      const ref = intRef(type, w, x, n);
      for (let i = 0; i < y.length; i++) expect(Math.abs(y[i]! - ref.y[i]!)).toBeLessThanOrEqual(1e-5 * ref.mag[i]! + 1e-30);
      const exact = matmul(w, x, n), bound = quantBound(w, n, k.quantizeQ8(x, n).d);
      let scale = 1;
      for (const v of exact) scale = Math.max(scale, Math.abs(v));
      for (let i = 0; i < y.length; i++) expect(Math.abs(y[i]! - exact[i]!)).toBeLessThanOrEqual(bound[i]! + 2e-6 * scale);
      // and the quantization really is in play: not the f32 path's numbers
      k.activations = 'f32';
      const f32 = k.linear(k.placeLinear(w), x, n);
      k.activations = 'q8';
      expect(y).not.toEqual(f32);
    });
  });

  // The relaxed build adds nibble products in i16 lanes before widening (up to 4 lanes of two dots each:
  // 4·2·2·15·127 = 30480 < 2^15): at the extremes, every nibble 15 and every code ±127, still exact.
  it.each([['Q4_0', 18, [0, 2]], ['Q4_K', 144, [0, 2]]] as const)('%s at its extremes (every nibble 15, every code ±127): the integer sums do not overflow', (type, blockBytes, scaleAt) => {
    const K = 512, rows = 6, bytes = new Uint8Array((rows * K / GGML_TYPES[type].blockSize) * blockBytes).fill(0xff);
    for (let b = 0; b < bytes.length; b += blockBytes) for (const at of scaleAt) { bytes[b + at] = 0x00; bytes[b + at + 1] = 0x3c; }   // f16 1.0
    const w: Linear = { kind: 'ggml', rows, cols: K, segments: [{ name: type, type, rows, bytes }] };
    for (const sign of [-1, 1]) {
      for (const n of [1, 5]) {
        const x = new Float32Array(n * K).fill(sign);
        const y = k.linear(k.placeLinear(w), x, n), ref = intRef(type, w, x, n);
        expect(k.quantizeQ8(x, n).q.every((q) => q === sign * 127)).toBe(true);
        for (let i = 0; i < y.length; i++) expect(Math.abs(y[i]! - ref.y[i]!)).toBeLessThanOrEqual(1e-5 * ref.mag[i]! + 1e-30);
      }
    }
  });

  it('a matrix of mixed row runs (Q4_K q|k, Q6_K v): each run as its own matrix, one quantization of x', () => {
    const K = 512, x = randomF32(6 * K, 3);
    const a = ggml('Q4_K', 20, K, 1), b = ggml('Q6_K', 13, K, 2);
    const sa = (a as Extract<Linear, { kind: 'ggml' }>).segments[0]!, sb = (b as Extract<Linear, { kind: 'ggml' }>).segments[0]!;
    const mixed: Linear = { kind: 'ggml', rows: 33, cols: K, segments: [sa, sb] };
    const y = k.linear(k.placeLinear(mixed), x, 6), ya = k.linear(k.placeLinear(a), x, 6), yb = k.linear(k.placeLinear(b), x, 6);
    for (let t = 0; t < 6; t++) {
      expect(y.subarray(t * 33, t * 33 + 20)).toEqual(ya.subarray(t * 20, t * 20 + 20));
      expect(y.subarray(t * 33 + 20, t * 33 + 33)).toEqual(yb.subarray(t * 13, t * 13 + 13));
    }
  });

  it.each(['Q5_0', 'Q4_1', 'Q5_K', 'F16'] as GgmlType[])('%s, not read by the integer path: activations q8 runs the f32 path, bit for bit', (type) => {
    const K = 2 * Math.max(32, GGML_TYPES[type].blockSize), w = ggml(type, 19, K, 8), x = randomF32(5 * K, 9);
    expect(k.q8Covers(FORMAT[type])).toBe(false);
    const q8 = k.linear(k.placeLinear(w), x, 5);
    k.activations = 'f32';
    const f32 = k.linear(k.placeLinear(w), x, 5);
    k.activations = 'q8';
    expect(q8).toEqual(f32);
  });
});
