// Every WASM kernel (src/cpu/asm/; the plain SIMD128 and the relaxed-SIMD builds, 1 and 3 threads)
// against the reference (src/model/reference/ops.ts) on seeded odd shapes, with the GPU kernel tests' tolerances (test/gpu/kernels.test.ts, relative to the largest
// reference magnitude, at least 1): the embedding gather (a row decode) exact, bit for bit, for every
// format; linear 2e-6 (weights decode exactly, only the f32 summation order differs from the
// reference's double sums); rmsnorm, RoPE and silu·mul 2e-6 (they compute in f64 like the reference);
// attention over the f16 cache 5e-6; the f16 rounding of K/V exact.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WasmKernels } from '../../../src/cpu/wasm-kernels.ts';
import { quantizeGgml } from '../../../src/model/formats/gguf/ggml-quantize.ts';
import { GGML_TYPES } from '../../../src/model/formats/gguf/ggml-types.ts';
import { attention, embedRows, matmul, rmsNorm, ropeNeox, siluMul } from '../../../src/model/reference/ops.ts';
import { f16BitsToF32, f32ToF16Bits, fromFloat32, quantizeQ4f16, roundToF16 } from '../../../src/model/tensor-utils.ts';
import type { GgmlType, Linear } from '../../../src/model/types.ts';
import { KERNEL_SETUPS, randomF32, relErr, testKernels } from './helpers.ts';

const GGML: GgmlType[] = ['F32', 'F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q4_K', 'Q5_K', 'Q6_K'];

function ggmlLinear(type: GgmlType, rows: number, cols: number, seed: number): Linear {
  const v = randomF32(rows * cols, seed, 0.5);
  return { kind: 'ggml', rows, cols, segments: [{ name: `w.${type}`, type, rows, bytes: quantizeGgml(type, v, rows, cols) }] };
}

/** Odd shapes: 37 rows (not a multiple of any lane count), K three blocks (odd), or 19 for the float types. */
const shapes: [string, (seed: number) => Linear][] = [
  ...GGML.map((t): [string, (s: number) => Linear] => {
    const K = GGML_TYPES[t].blockSize === 1 ? 19 : 3 * GGML_TYPES[t].blockSize;
    return [`GGUF ${t} 37×${K}`, (s) => ggmlLinear(t, 37, K, s)];
  }),
  ['safetensors F32 37×19', (s) => ({ kind: 'dense', rows: 37, cols: 19, weight: fromFloat32('w', randomF32(37 * 19, s, 0.5), [37, 19], 'F32') })],
  ['safetensors F16 70×33', (s) => ({ kind: 'dense', rows: 70, cols: 33, weight: fromFloat32('w', randomF32(70 * 33, s, 0.5), [70, 33], 'F16') })],
  ['safetensors BF16 64×128', (s) => ({ kind: 'dense', rows: 64, cols: 128, weight: fromFloat32('w', randomF32(64 * 128, s, 0.5), [64, 128], 'BF16') })],
  ['MLC q4f16_1 29×96', (s) => quantizeQ4f16('w', randomF32(29 * 96, s, 0.5), 29, 96)],
  ['MLC q4f16_1 130×64', (s) => quantizeQ4f16('w', randomF32(130 * 64, s, 0.5), 130, 64)],
];

// Both SIMD paths (the plain SIMD128 build and the relaxed-SIMD one, whose f32 dots are fused
// multiply-adds), each on one thread and on a pool of 3 (the threads build, on a shared memory; its
// linears split across workers), all against the reference at the same tolerances.
describe.each(KERNEL_SETUPS)('%s SIMD on %i thread(s)', (simd, threads) => {
  let k: WasmKernels;
  beforeAll(async () => {
    k = await testKernels(simd, threads);   // a fresh clone compiles each build first (≈15 s on 2 busy cores)
    expect([k.simd, k.threads]).toEqual([simd, threads]);
  }, 240_000);
  afterAll(() => k?.close());

  describe.each(shapes)('linear %s', (_label, make) => {
    it.each([1, 5, 11])('y = x·Wᵀ for n = %i tokens within 2e-6 of the reference', (n) => {
      const w = make(n);
      const x = randomF32(n * w.cols, 100 + n);
      const placed = k.placeLinear(w);
      expect(relErr(k.linear(placed, x, n), matmul(w, x, n))).toBeLessThan(2e-6);
    });

    it('every row decodes bit for bit as the reference embedding gather, and a row range is the whole\'s columns', () => {
      const w = make(3);
      const placed = k.placeLinear(w);
      const ids = Array.from({ length: w.rows }, (_, i) => (i * 7) % w.rows);
      expect(k.rows(placed, ids)).toEqual(embedRows(w, ids));
      const x = randomF32(2 * w.cols, 9);
      const whole = k.linear(placed, x, 2);
      const part = k.linear(placed, x, 2, 5, 17);
      for (let t = 0; t < 2; t++) expect(part.subarray(t * 12, t * 12 + 12)).toEqual(whole.subarray(t * w.rows + 5, t * w.rows + 17));
    });
  });

  it('a matrix of mixed row runs (Q4_K q|k, Q6_K v, as Q4_K_M writes some layers) equals the reference', () => {
    const K = 256;
    const parts = [['Q4_K', 40], ['Q6_K', 24], ['Q8_0', 9]] as const;
    const w: Linear = {
      kind: 'ggml', rows: 73, cols: K,
      segments: parts.map(([type, rows], i) => ({ name: `s${i}`, type, rows, bytes: quantizeGgml(type, randomF32(rows * K, 30 + i, 0.5), rows, K) })),
    };
    const x = randomF32(3 * K, 4);
    const placed = k.placeLinear(w);
    expect(relErr(k.linear(placed, x, 3), matmul(w, x, 3))).toBeLessThan(2e-6);
    expect(relErr(k.linear(placed, x, 3, 30, 70), (() => {
      const full = matmul(w, x, 3);
      return Float32Array.from({ length: 3 * 40 }, (_, i) => full[Math.floor(i / 40) * 73 + 30 + (i % 40)]!);
    })())).toBeLessThan(2e-6);
  });

  it.each([[1, 64], [3, 33], [5, 1024]])('rmsnorm on %i rows of %i within 2e-6', (rows, width) => {
    const x = randomF32(rows * width, rows, 3);
    const w = randomF32(width, width, 1.5);
    const wp = k.put(w);
    expect(relErr(k.rmsnorm(x, wp, width, 1e-6), rmsNorm(x, w, 1e-6))).toBeLessThan(2e-6);
  });

  it.each([[3, 4, 16, 16], [2, 3, 64, 16], [5, 2, 128, 128]])('NeoX RoPE, %i tokens × %i heads of %i dims (%i rotary) within 2e-6', (n, heads, D, R) => {
    const x = randomF32(n * heads * D, D + n);
    const positions = Array.from({ length: n }, (_, i) => 1000 + 37 * i);
    const ref = x.slice();
    ropeNeox(ref, positions, heads, D, 1e6, R);
    const half = R / 2;
    const cs = new Float32Array(n * half * 2);
    positions.forEach((pos, t) => {
      for (let i = 0; i < half; i++) {
        const angle = Math.fround(pos * Math.fround(Math.pow(1e6, (-2 * i) / R)));
        cs[(t * half + i) * 2] = Math.cos(angle);
        cs[(t * half + i) * 2 + 1] = Math.sin(angle);
      }
    });
    const out = k.frame(() => {
      const xp = k.input(x);
      k.ropeAt(xp, k.input(cs), n, heads, D, R);
      return k.f32(xp, x.length).slice();
    });
    expect(relErr(out, ref)).toBeLessThan(2e-6);
  });

  it('silu(gate)·up on 3 rows of 2×37 within 2e-6', () => {
    const I = 37, n = 3;
    const gu = randomF32(n * 2 * I, 5, 4);
    const out = k.frame(() => {
      const gp = k.input(gu), op = k.alloc(n * I * 4);
      k.siluMulAt(gp, op, n, I);
      return k.f32(op, n * I).slice();
    });
    expect(relErr(out, siluMul(gu, I))).toBeLessThan(2e-6);
  });

  it('f32 → f16 rounds as the reference (ties to even, subnormals, overflow) and back exactly', () => {
    const x = Float32Array.from([...randomF32(1000, 3, 70000), 0, -0, 65504, 65520, 1e-8, -3e-5, 6.1e-5, 2 ** -24, 2 ** -25, 1 + 2 ** -11, 1 + 3 * 2 ** -11, Infinity, -Infinity]);
    const { bits, back } = k.frame(() => {
      const xp = k.input(x), hp = k.alloc(x.length * 2), bp = k.alloc(x.length * 4);
      k.toHalfAt(xp, hp, x.length);
      k.fromHalfAt(hp, bp, x.length);
      return { bits: k.u16(hp, x.length).slice(), back: k.f32(bp, x.length).slice() };
    });
    expect([...bits]).toEqual([...x].map(f32ToF16Bits));
    expect([...back]).toEqual([...bits].map(f16BitsToF32));
    expect([...back]).toEqual([...x].map(roundToF16));
  });

  // the last two have KV heads for every thread of the pool of 3 (split by KV heads there: 1, 1, 2 and 1, 1, 1)
  it.each([[1, 4, 2, 16, 0], [3, 4, 2, 16, 5], [4, 6, 2, 128, 37], [2, 2, 1, 9, 3], [3, 8, 4, 16, 6], [2, 3, 3, 32, 4]])('attention: %i tokens, %i heads over %i KV heads of %i, after %i cached, within 5e-6', (n, Hq, Hkv, D, before) => {
    const kvWidth = Hkv * D, total = before + n;
    const keys = Float32Array.from(randomF32(total * kvWidth, 11, 2), roundToF16);
    const values = Float32Array.from(randomF32(total * kvWidth, 12, 2), roundToF16);
    const q = randomF32(n * Hq * D, 13, 2);
    const positions = Array.from({ length: n }, (_, i) => before + i);
    const ref = attention(q, { keys, values }, positions, Hq, Hkv, D);
    const out = k.frame(() => {
      const toHalf = (v: Float32Array): number => {
        const src = k.input(v), dst = k.alloc(v.length * 2);
        k.toHalfAt(src, dst, v.length);
        return dst;
      };
      const kp = toHalf(keys), vp = toHalf(values), qp = k.input(q), op = k.alloc(q.length * 4);
      k.attentionAt(qp, kp, vp, op, n, before, Hq, Hkv, D);
      return k.f32(op, q.length).slice();
    });
    expect(relErr(out, ref)).toBeLessThan(5e-6);
  });

  it('the linears above ran on this setup\'s threads (split across the pool when there is one)', () => {
    if (threads > 1) expect(k.poolJobs).toBeGreaterThan(50);
    else expect(k.poolJobs).toBe(0);
    expect(k.splitJobs).toBe(threads > 1 ? 2 : 0);   // the two attention shapes with a KV head for every thread
  });
});
