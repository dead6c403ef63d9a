// Every kernel against the reference ops (src/model/reference/ops.ts) on seeded random shapes, odd
// sizes included, on both paths: f32 (no shader-f16, as on SwiftShader and many phones) and f16.
// Tolerances (relative to the largest reference magnitude, at least 1):
//   gathers, copies, silu·mul inputs, top-k: exact (bit-equal);
//   linear (F32 / F16 / BF16 / q4f16_1 weights): 2e-6 — weights decode exactly, only the f32 summation
//     order differs from the reference's double sums;
//   rmsnorm, q/k norm + RoPE: 2e-6; attention (online softmax over f16 K/V): 5e-6;
//   K/V cache entries: the f16 rounding of the reference value, or its f16 neighbour when the f32
//     value sits within an ulp of a rounding tie (counted, must be rare).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadLinear } from '../../src/gpu/gpu-weights.ts';
import { ropeTable } from '../../src/gpu/layers.ts';
import { attentionOp, attentionPartFloats } from '../../src/gpu/kernels/attention/attention.ts';
import { F16_KV, kvBufferBytes, q8Blocks, q8ScalesWord } from '../../src/gpu/kernels/attention/kv-layout.ts';
import { kvStoreQ8Op } from '../../src/gpu/kernels/attention/kv-store-q8-0.ts';
import { copyOp } from '../../src/gpu/kernels/common/copy.ts';
import { quantizeQ8_0Block, roundHeadToQ8_0 } from '../../src/model/kv-quant.ts';
import { embedOps, Epilogue, linearOps } from '../../src/gpu/kernels/linear/linear.ts';
import { qkNormRopeOp } from '../../src/gpu/kernels/attention/qk-norm-rope.ts';
import { rmsnormOp } from '../../src/gpu/kernels/common/rmsnorm.ts';
import { siluMulOp } from '../../src/gpu/kernels/common/silu-mul.ts';
import { topkBlocks, topkOp } from '../../src/gpu/kernels/sampling/topk-blocks.ts';
import {
  attention, embedRows, headRmsNorm, matmul, rmsNorm, ropeNeox, siluMul,
} from '../../src/model/reference/ops.ts';
import { f16BitsToF32, f32ToF16Bits, fromFloat32, quantizeQ4f16, roundToF16 } from '../../src/model/tensor-utils.ts';
import type { Linear } from '../../src/model/types.ts';
import { ATTENTION_PREFILLS, attentionSplitFor, type MatmulLayout, type MatvecLayout } from '../../src/gpu/tuning.ts';
import { KernelHarness } from './kernel-harness.ts';
import { expectEpilogues, expectFoldedNorm } from './epilogue-checks.ts';
import { randomF32, relErr, testDevice } from './helpers.ts';

/** A q8_0 cache of `x` [ctx, Hkv·D] as the GPU lays it out, and the values it reads back. */
function q8Cache(x: Float32Array, ctx: number, Hkv: number, D: number): { words: Uint32Array; values: Float32Array } {
  const nb = q8Blocks(D);
  const words = new Uint32Array(kvBufferBytes({ Hkv, D }, { type: 'q8_0', ctx }) / 4);
  const quants = new Int8Array(words.buffer);
  const scalesAt = q8ScalesWord({ Hkv, D }, ctx);
  const values = x.slice();
  for (let head = 0; head < ctx * Hkv; head++) {
    for (let blk = 0; blk < nb; blk++) {
      const b = head * nb + blk;
      const { d, qs } = quantizeQ8_0Block(x, head * D + blk * 32, Math.min(32, D - blk * 32));
      quants.set(qs, b * 32);
      words[scalesAt + (b >> 1)] = (words[scalesAt + (b >> 1)]! | (d << (16 * (b & 1)))) >>> 0;
    }
    roundHeadToQ8_0(values, head * D, D);
  }
  return { words, values };
}

function denseLinear(name: string, rows: number, cols: number, dtype: 'F32' | 'F16' | 'BF16', seed: number): Linear {
  return { kind: 'dense', rows, cols, weight: fromFloat32(name, randomF32(rows * cols, seed, 0.5), [rows, cols], dtype) };
}

function q4Linear(name: string, rows: number, cols: number, seed: number): Linear {
  return quantizeQ4f16(name, randomF32(rows * cols, seed, 0.5), rows, cols);
}

describe.each([false, true])('kernels, shader-f16 path %s', (useF16) => {
  let device: GPUDevice;
  let h: KernelHarness;
  beforeAll(async () => {
    device = await testDevice(useF16);
    expect(device.features.has('shader-f16')).toBe(useF16);   // lavapipe has it: both paths really run
    h = new KernelHarness(device, useF16);
  });
  afterAll(() => { h?.destroy(); device?.destroy(); });

  const linears: [string, (seed: number) => Linear][] = [
    ['F32 37×19', (s) => denseLinear('w', 37, 19, 'F32', s)],
    ['F16 37×19', (s) => denseLinear('w', 37, 19, 'F16', s)],
    ['BF16 70×33', (s) => denseLinear('w', 70, 33, 'BF16', s)],
    ['BF16 64×128', (s) => denseLinear('w', 64, 128, 'BF16', s)],
    ['q4f16_1 29×96', (s) => q4Linear('w', 29, 96, s)],
    ['q4f16_1 130×64', (s) => q4Linear('w', 130, 64, s)],
  ];

  describe.each(linears)('linear %s', (_label, make) => {
    it.each([1, 5, 11])('y = x·Wᵀ for n = %i tokens (decode tile and prefill tiles), whole and split', async (n) => {
      const w = make(n);
      const x = randomF32(n * w.cols, 100 + n);
      const ref = matmul(w, x, n);
      for (const maxBinding of [1 << 30, 256]) {
        const g = uploadLinear(device, w, maxBinding);
        if (maxBinding === 256) expect(g.chunks.length).toBeGreaterThan(1);
        const xb = h.buffer(x);
        const yb = h.buffer(n * w.rows * 4);
        await h.run(linearOps(h.cache, g, { step: h.step, x: xb, y: yb, outStride: w.rows, epilogue: Epilogue.STORE }), n);
        expect(relErr(await h.readF32(yb, n * w.rows), ref)).toBeLessThan(2e-6);
      }
    });

    it('residual epilogue: y += x·Wᵀ', async () => {
      const w = make(7);
      const n = 3;
      const x = randomF32(n * w.cols, 7);
      const y0 = randomF32(n * w.rows, 8);
      const ref = matmul(w, x, n).map((v, i) => v + y0[i]!);
      const g = uploadLinear(device, w, 1 << 30);
      const yb = h.buffer(y0);
      await h.run(linearOps(h.cache, g, { step: h.step, x: h.buffer(x), y: yb, outStride: w.rows, epilogue: Epilogue.ADD_RESIDUAL }), n);
      expect(relErr(await h.readF32(yb, n * w.rows), Float32Array.from(ref))).toBeLessThan(2e-6);
    });
  });

  it.each([['BF16', 'dense'], ['q4', 'q4']])('silu(gate)·up epilogue (%s) and the unfused silu_mul kernel agree with siluMul', async (_d, kind) => {
    const I = 64;
    const K = 96;
    const n = 9;
    const w = kind === 'q4' ? q4Linear('gu', 2 * I, K, 3) : denseLinear('gu', 2 * I, K, 'BF16', 3);
    const x = randomF32(n * K, 4);
    const gu = matmul(w, x, n);
    const ref = siluMul(gu, I);
    const g = uploadLinear(device, w, 1 << 30);
    const out = h.buffer(n * I * 4);
    await h.run(linearOps(h.cache, g, { step: h.step, x: h.buffer(x), y: out, outStride: I, epilogue: Epilogue.SILU_GATE_UP }), n);
    expect(relErr(await h.readF32(out, n * I), ref)).toBeLessThan(2e-6);
    // silu_mul alone on the reference gate|up values
    const out2 = h.buffer(n * I * 4);
    await h.run([siluMulOp(h.cache, { step: h.step, gu: h.buffer(gu), out: out2 }, I, 'silu_mul')], n);
    expect(relErr(await h.readF32(out2, n * I), ref)).toBeLessThan(2e-6);
  });

  it.each([['BF16', 70, 66], ['F16', 33, 9], ['F32', 22, 5], ['q4f16_1', 75, 64]] as const)(
    'embedding gather %s [%i, %i] is exact, also split into chunks', async (dtype, V, H) => {
      const w = dtype === 'q4f16_1' ? q4Linear('embed', V, H, 9) : denseLinear('embed', V, H, dtype, 9);
      const ids = [0, V - 1, 5, 5, 17, V - 2, 1];
      const ref = embedRows(w, ids);
      for (const maxBinding of [1 << 30, 300]) {
        const g = uploadLinear(device, w, maxBinding);
        if (maxBinding === 300) expect(g.chunks.length).toBeGreaterThan(1);
        const out = h.buffer(ids.length * H * 4);
        await h.run(embedOps(h.cache, g, { step: h.step, ids: h.buffer(new Uint32Array(ids)), out }), ids.length);
        expect(await h.readF32(out, ids.length * H)).toEqual(ref);
      }
    });

  // A row is one workgroup of RMSNORM_WG: 4096 and 5120 (8B, 32B widths) span every subgroup of it several
  // times over, 37 leaves most invocations without a value; the subgroup reduction and its fallback both.
  it.each([[1, 64, true], [5, 2048, true], [3, 37, true], [1, 4096, true], [2, 5120, true], [1, 4096, false], [3, 37, false]])(
    'rmsnorm of %i rows of %i, subgroups %s', async (n, H, subgroups) => {
      if (subgroups) expect(device.features.has('subgroups')).toBe(true);
      const x = randomF32(n * H, H, 3);
      x[n * H - 1] = 40;                                       // one large value in the last invocation's share
      const wt = randomF32(H, H + 1);
      const eps = 1e-6;
      const out = h.buffer(n * H * 4);
      await h.run([rmsnormOp(h.cache, { step: h.step, x: h.buffer(x), weight: h.buffer(wt), y: out }, H, eps, 'norm', subgroups)], n);
      expect(relErr(await h.readF32(out, n * H), rmsNorm(x, wt, eps))).toBeLessThan(2e-6);
    });

  it.each([
    ['GPU', { WG: 128, ITEMS: 8 }], ['CPU rasterizer', { WG: 8, ITEMS: 64 }], ['CPU rasterizer, 4 lanes', { WG: 4, ITEMS: 64 }],
  ] as const)('top-k candidates per block, %s layout (TOPK = 1 is argmax): mask bits, ties to the lower id, −inf and NaN never win', async (_name, layout) => {
    const V = 5000;                                        // blocks of WG·ITEMS ids, the last one partial
    const blocks = topkBlocks(V, layout);
    const logits = randomF32(V, 77, 4);
    logits[4321] = 9; logits[1234] = 9;                    // a tie: 1234 wins
    logits[10] = Infinity * -1; logits[11] = NaN;
    const mask = new Uint32Array(Math.ceil(V / 32));
    const allowed = [3, 10, 11, 700, 1234, 2048, 4321, 4999];
    for (const id of allowed) mask[id >>> 5] |= 1 << (id & 31);
    const best = h.buffer(blocks * 21 * 8);
    const params = h.uniform([0, 0, 0]);
    const paramsMasked = h.uniform([1, mask.length, 0]);
    const run = async (k: number, p: GPUBuffer, from = 0, to = blocks * k): Promise<{ id: number; v: number }[]> => {
      await h.run([topkOp(h.cache, { params: p, logits: h.buffer(logits), mask: h.buffer(mask), best }, V, k, layout)], 1);
      const raw = new Uint32Array((await h.read(best, to * 8)).slice(from * 8));
      const f = new Float32Array(raw.buffer);
      const out: { id: number; v: number }[] = [];
      for (let i = 0; i < raw.length; i += 2) if (raw[i + 1] !== 0xffffffff) out.push({ id: raw[i + 1]!, v: f[i]! });
      return out.sort((a, b) => b.v - a.v || a.id - b.id);
    };
    const sortedIds = (ids: number[]): number[] => ids.filter((i) => logits[i]! > -Infinity).sort((a, b) => logits[b]! - logits[a]! || a - b);
    const all = Array.from({ length: V }, (_, i) => i);
    expect((await run(1, params))[0]!.id).toBe(1234);
    expect((await run(8, params)).slice(0, 8).map((c) => c.id)).toEqual(sortedIds(all).slice(0, 8));
    expect((await run(20, params)).slice(0, 20).map((c) => c.id)).toEqual(sortedIds(all).slice(0, 20));
    const masked = await run(8, paramsMasked);
    expect(masked.map((c) => c.id)).toEqual(sortedIds(allowed.filter((i) => i !== 11)));
    expect((await run(1, paramsMasked))[0]!.id).toBe(1234);
    // report_top: after the [blocks, k] candidates, each block's best finite logit with no mask.
    const few = new Uint32Array(mask.length);
    for (const id of [3, 700, 2048]) few[id >>> 5] |= 1 << (id & 31);
    const paramsReport = h.uniform([1, few.length, 1]);
    const report = async (k: number) => {
      await h.run([topkOp(h.cache, { params: paramsReport, logits: h.buffer(logits), mask: h.buffer(few), best }, V, k, layout)], 1);
      const raw = new Uint32Array(await h.read(best, blocks * (k + 1) * 8));
      const f = new Float32Array(raw.buffer);
      const pairs = (from: number, to: number) => {
        const out: { id: number; v: number }[] = [];
        for (let i = from * 2; i < to * 2; i += 2) if (raw[i + 1] !== 0xffffffff) out.push({ id: raw[i + 1]!, v: f[i]! });
        return out.sort((a, b) => b.v - a.v || a.id - b.id).map((c) => c.id);
      };
      return { masked: pairs(0, blocks * k), unmasked: pairs(blocks * k, blocks * (k + 1)) };
    };
    const size = layout.WG * layout.ITEMS;
    const blockBests = sortedIds(Array.from({ length: blocks }, (_, b) => sortedIds(all.slice(b * size, (b + 1) * size).filter((i) => !Number.isNaN(logits[i])))[0]!));
    for (const k of [1, 20]) {
      const r = await report(k);
      if (k === 1) expect(r.masked[0]).toBe(sortedIds([3, 700, 2048])[0]);
      else expect(r.masked).toEqual(sortedIds([3, 700, 2048]));
      expect(r.unmasked[0]).toBe(1234);                       // the model's own top choice, disallowed
      expect(r.unmasked).toEqual(blockBests);                 // each block's best finite logit, mask or not
    }
  });

  it('copy moves every byte', async () => {
    const data = new Uint32Array(4 * 1000).map((_, i) => (i * 2654435761) >>> 0);
    const dst = h.buffer(data.byteLength);
    await h.run([copyOp(h.cache, { src: h.buffer(data), dst }, 1000)], 1);
    expect(new Uint32Array(await h.read(dst, data.byteLength))).toEqual(data);
  });

  // Prepares q/k/v at positions pos0.. and runs qk_norm_rope; returns GPU q, K/V cache and the reference.
  // q8: a q8_0 cache pair; K/V are then staged in f32 and quantized by kv_store_q8_0.
  async function normRope(Hq: number, Hkv: number, D: number, n: number, pos0: number, ctx: number, q8?: { kcache: GPUBuffer; vcache: GPUBuffer }) {
    const eps = 1e-6;
    const theta = 1e6;
    const width = (Hq + 2 * Hkv) * D;
    const qkv = randomF32(n * width, 11 + n, 2);
    const qn = randomF32(D, 12).map((v) => 1 + 0.2 * v);
    const kn = randomF32(D, 13).map((v) => 1 + 0.2 * v);
    const positions = Array.from({ length: n }, (_, i) => pos0 + i);
    const cols = (a: number, b: number): Float32Array => {
      const out = new Float32Array(n * (b - a));
      for (let t = 0; t < n; t++) out.set(qkv.subarray(t * width + a, t * width + b), t * (b - a));
      return out;
    };
    const qRef = headRmsNorm(cols(0, Hq * D), qn, eps);
    ropeNeox(qRef, positions, Hq, D, theta);
    const kRef = headRmsNorm(cols(Hq * D, (Hq + Hkv) * D), kn, eps);
    ropeNeox(kRef, positions, Hkv, D, theta);
    const vRef = cols((Hq + Hkv) * D, width);
    const q = h.buffer(n * Hq * D * 4);
    const kc = q8 ? h.buffer(n * Hkv * D * 4) : h.buffer(ctx * Hkv * D * 2);   // q8: the f32 stages
    const vc = q8 ? h.buffer(n * Hkv * D * 4) : h.buffer(ctx * Hkv * D * 2);
    const op = qkNormRopeOp(h.cache, {
      step: h.step, qkv: h.buffer(qkv), qnorm: h.buffer(qn), knorm: h.buffer(kn), rope: h.buffer(ropeTable(ctx, D, theta)), q, kcache: kc, vcache: vc,
    }, { Hq, Hkv, D }, eps, 'qk_norm_rope', Boolean(q8));
    const store = q8 ? [kvStoreQ8Op(h.cache, { step: h.step, kstage: kc, vstage: vc, ...q8 }, { Hq, Hkv, D }, ctx, 'kv_store_q8_0')] : [];
    await h.run([op, ...store], n, pos0);
    return { q, kc, vc, qRef, kRef, vRef };
  }

  function f16Cache(words: Uint32Array): Float32Array {
    const out = new Float32Array(words.length * 2);
    words.forEach((w, i) => { out[2 * i] = f16BitsToF32(w & 0xffff); out[2 * i + 1] = f16BitsToF32(w >>> 16); });
    return out;
  }

  it.each([[4, 2, 16, 5, 0], [16, 8, 128, 3, 1000], [6, 3, 10, 1, 7]])(
    'q/k RMSNorm + RoPE neox + f16 K/V write: Hq %i, Hkv %i, D %i, %i tokens at %i', async (Hq, Hkv, D, n, pos0) => {
      const ctx = pos0 + n + 3;
      const r = await normRope(Hq, Hkv, D, n, pos0, ctx);
      expect(relErr(await h.readF32(r.q, n * Hq * D), r.qRef)).toBeLessThan(2e-6);
      const kvw = Hkv * D;
      const k = f16Cache(new Uint32Array(await h.read(r.kc, ctx * kvw * 2))).subarray(pos0 * kvw, (pos0 + n) * kvw);
      const v = f16Cache(new Uint32Array(await h.read(r.vc, ctx * kvw * 2))).subarray(pos0 * kvw, (pos0 + n) * kvw);
      expect(v).toEqual(r.vRef.map(roundToF16));                  // a copy: rounding must be identical
      let offByOne = 0;
      r.kRef.forEach((ref, i) => {
        const want = f32ToF16Bits(ref);
        const got = f32ToF16Bits(k[i]!);
        if (got !== want) { expect(Math.abs(got - want)).toBe(1); offByOne++; }
      });
      expect(offByOne).toBeLessThanOrEqual(Math.ceil(r.kRef.length / 200));
    });

  // The q8_0 cache (src/gpu/kernels/attention/kv-layout.ts): qk_norm_rope stages f32 K/V and
  // kv_store_q8_0 quantizes them as src/model/kv-quant.ts does (llama.cpp's rounding). Blocks are
  // compared with the reference's: scales to the f16 bit, quants to the integer, except where the
  // GPU's f32 division or (for K) its rotation lands a value on the other side of a rounding tie
  // (off by one, counted, must be rare). The cache starts full of a pattern that every word outside
  // the step's blocks must keep, the other half of a scale word shared with a stored token included.
  it.each([[4, 2, 16, 5, 0], [16, 8, 128, 3, 1000], [6, 3, 10, 1, 7], [8, 1, 96, 4, 3], [4, 4, 64, 1, 9]])(
    'q8_0 K/V write (stage + kv_store_q8_0): Hq %i, Hkv %i, D %i, %i tokens at %i', async (Hq, Hkv, D, n, pos0) => {
      const ctx = pos0 + n + 3;
      const layout = { type: 'q8_0' as const, ctx };
      const bytes = kvBufferBytes({ Hkv, D }, layout);
      const pattern = new Uint32Array(bytes / 4).map((_, i) => (Math.imul(i + 1, 2654435761) >>> 0));
      const kc = h.buffer(pattern);
      const vc = h.buffer(pattern);
      const r = await normRope(Hq, Hkv, D, n, pos0, ctx, { kcache: kc, vcache: vc });
      const nb = q8Blocks(D);
      const scalesAt = q8ScalesWord({ Hkv, D }, ctx);
      for (const [buf, ref] of [[kc, r.kRef], [vc, r.vRef]] as const) {
        const words = new Uint32Array(await h.read(buf, bytes));
        const bytesOf = new Int8Array(words.buffer);
        const inStep = (b: number): boolean => b >= pos0 * Hkv * nb && b < (pos0 + n) * Hkv * nb;
        let off = 0;
        for (let b = 0; b < ctx * Hkv * nb; b++) {
          const scale = (words[scalesAt + (b >> 1)]! >>> (16 * (b & 1))) & 0xffff;
          const patternScale = (pattern[scalesAt + (b >> 1)]! >>> (16 * (b & 1))) & 0xffff;
          if (!inStep(b)) {
            expect(scale).toBe(patternScale);
            for (let w = 0; w < 8; w++) expect(words[b * 8 + w]).toBe(pattern[b * 8 + w]);
            continue;
          }
          const t = Math.floor(b / (Hkv * nb)) - pos0;
          const head = Math.floor((b % (Hkv * nb)) / nb);
          const blk = b % nb;
          const from = (t * Hkv + head) * D + blk * 32;
          const count = Math.min(32, D - blk * 32);
          const want = quantizeQ8_0Block(ref, from, count);
          if (scale !== want.d) { expect(Math.abs(scale - want.d)).toBe(1); off++; }
          for (let j = 0; j < 32; j++) {
            const got = bytesOf[b * 32 + j]!;
            if (got !== want.qs[j]) { expect(Math.abs(got - want.qs[j]!)).toBe(1); off++; }
          }
        }
        expect(off).toBeLessThanOrEqual(Math.ceil(ref.length / 200));
      }
    });

  // [Hq, Hkv, D, tokens, cached, splits, minKeys]: splits > 1 is decode's flash-decoding (key splits
  // merged by attention_combine); the splits used grow with the position (1 key: one split). A decode
  // step (1 token) runs the grouped kernel (attention_decode, a workgroup per KV head) and the
  // per-query-head one (the bench's "before"); groups of 1, 2, 3, 8, 12 (D 10 has no grouped variant: a multiple
  // of 4 is needed, it runs per head); key counts on either side of a
  // split boundary (64·k and 64·k + 1 keys with splits of ≥ 64), of a 64-key tile inside a split, and
  // ≥ 8,000 (the A3B shape, 32 query / 4 KV heads of 128, with the GPU's and the CPU's splits).
  it.each([
    [4, 2, 16, 1, 0, 1, 64], [4, 2, 16, 70, 0, 1, 64], [16, 8, 128, 1, 300, 1, 64], [16, 8, 128, 9, 60, 4, 16],
    [4, 2, 16, 1, 0, 8, 1], [4, 2, 16, 1, 9, 3, 4], [16, 8, 128, 1, 300, 3, 4], [16, 8, 128, 1, 2000, 16, 64], [6, 3, 10, 1, 100, 7, 9],
    [4, 4, 64, 1, 63, 16, 64], [4, 4, 64, 1, 64, 16, 64], [8, 4, 128, 1, 127, 16, 64], [8, 4, 128, 1, 128, 16, 64],
    [16, 2, 64, 1, 200, 1, 64], [32, 4, 128, 1, 1088, 16, 64], [32, 4, 128, 1, 1024, 16, 64], [32, 4, 128, 1, 1023, 16, 64],
    [12, 4, 32, 1, 150, 5, 16], [12, 1, 256, 1, 90, 2, 32],
    [32, 4, 128, 1, 8000, 16, 64], [32, 4, 128, 1, 8191, 4, 512], [8, 1, 64, 1, 8200, 32, 64], [32, 4, 128, 5, 8000, 16, 64],
    // a discrete GPU's splits (src/gpu/tuning.ts) on the A3B shape: 7 splits at 100, all of them at 2,000
    ...[100, 2000].map((pos) => [32, 4, 128, 1, pos, attentionSplitFor('discrete').splits, attentionSplitFor('discrete').minKeys]),
    // prefill steps for both prefill kernels (the tiles: blocks of BQ tokens, K/V tiles of BK keys;
    // ./attention-prefill-tiles.ts): groups of 1, 2, 4, 6, 8, 16; D 10, 64, 128, 256; a step after a
    // cached prefix; token counts that are not a multiple of the block (D 128: BQ 16 / 8 / 4 at groups
    // 2 / 4 / 8) and key counts that are not a multiple of the tile; 32 heads over one KV head of 256
    // is too big a group for a block and runs the per-head kernel
    [4, 4, 64, 37, 0, 1, 64], [8, 2, 128, 33, 100, 1, 64], [32, 4, 128, 21, 301, 1, 64], [16, 1, 64, 7, 5, 1, 64],
    [12, 2, 256, 19, 40, 1, 64], [6, 3, 10, 11, 3, 1, 64], [16, 8, 128, 50, 1000, 1, 64], [32, 1, 256, 3, 10, 1, 64],
  ])('causal GQA attention over the f16 and the q8_0 cache: Hq %i, Hkv %i, D %i, %i tokens after %i cached, ≤ %i splits of ≥ %i keys', async (Hq, Hkv, D, n, pos0, splits, minKeys) => {
      const ctx = pos0 + n;
      const kvw = Hkv * D;
      const keys = randomF32(ctx * kvw, 21, 2).map(roundToF16);
      const values = randomF32(ctx * kvw, 22).map(roundToF16);
      const pack = (a: Float32Array): Uint32Array => {
        const w = new Uint32Array(a.length / 2);
        for (let i = 0; i < w.length; i++) w[i] = (f32ToF16Bits(a[2 * i]!) | (f32ToF16Bits(a[2 * i + 1]!) << 16)) >>> 0;
        return w;
      };
      const q = randomF32(n * Hq * D, 23, 3);
      const positions = Array.from({ length: n }, (_, i) => pos0 + i);
      const ref = attention(q, { keys, values }, positions, Hq, Hkv, D);
      // the same keys and values in a q8_0 cache, against the reference over what it reads back
      const kq = q8Cache(keys, ctx, Hkv, D);
      const vq = q8Cache(values, ctx, Hkv, D);
      const refQ8 = attention(q, { keys: kq.values, values: vq.values }, positions, Hq, Hkv, D);
      const out = h.buffer(n * Hq * D * 4);
      const part = h.buffer(attentionPartFloats({ Hq, Hkv, D }, splits) * 4);
      const b = { step: h.step, q: h.buffer(q), kcache: h.buffer(pack(keys)), vcache: h.buffer(pack(values)), out, part };
      const bq8 = { ...b, kcache: h.buffer(kq.words), vcache: h.buffer(vq.words) };
      const variants = n === 1
        ? [{ perHead: false }, { perHead: true }]
        : ATTENTION_PREFILLS.map((prefill) => ({ perHead: false, prefill }));
      for (const variant of variants) {
        for (const [kv, buffers, want] of [[F16_KV, b, ref], [{ type: 'q8_0' as const, ctx }, bq8, refQ8]] as const) {
          device.queue.writeBuffer(out, 0, new Float32Array(n * Hq * D).fill(Number.NaN));
          const op = attentionOp(h.cache, buffers, { Hq, Hkv, D }, 'attention', { splits, minKeys, ...variant }, kv);
          await h.run([op], n, pos0);
          expect(relErr(await h.readF32(out, n * Hq * D), want), `${JSON.stringify(variant)}, ${kv.type}`).toBeLessThan(5e-6);
        }
      }
    }, 120_000); // the ≥ 8,000-key cases run the reference and two kernels over 8k keys on a CPU adapter
});

// The engine picks a decode matvec layout and a prefill tile per adapter (src/gpu/tuning.ts, timed by
// src/gpu/autotune.ts): lanes per row, rows per group, the lanes' reduction (subgroup operations when the
// workgroup is one subgroup, else workgroup memory), tokens × rows per tile and per thread, and for the
// rows structure whether the lanes share x by subgroupBroadcast (8 lanes: one load each per part; 4 lanes:
// two) or each loads it. lavapipe (subgroup size 8) runs every one here on both paths, whatever the tuning
// picks on this machine.
const LAYOUTS: [string, MatvecLayout, MatmulLayout][] = [
  ['matvec 8 lanes a row, 2 rows, subgroupAdd; prefill rows 8 lanes × 2 rows × 8 tokens, x by subgroups', { WG: 8, LANES: 8, ROWS: 2, subgroups: true }, { kind: 'rows', WG: 8, R: 2, TT: 8, subgroups: true }],
  ['matvec 8 lanes a row, 8 rows, subgroupAdd; prefill rows 8 × 8 × 16, x per lane', { WG: 8, LANES: 8, ROWS: 8, subgroups: true }, { kind: 'rows', WG: 8, R: 8, TT: 16, subgroups: false }],
  ['matvec 8 lanes a row, 6 rows, subgroupAdd; prefill rows 8 × 6 × 5, x by subgroups', { WG: 8, LANES: 8, ROWS: 6, subgroups: true }, { kind: 'rows', WG: 8, R: 6, TT: 5, subgroups: true }],
  ['matvec 4 lanes a row in 8, 4 rows, subgroup shuffles; prefill rows 4 × 2 × 3, x by subgroups (two loads a part)', { WG: 8, LANES: 4, ROWS: 4, subgroups: true }, { kind: 'rows', WG: 4, R: 2, TT: 3, subgroups: true }],
  ['matvec 8 lanes a row, 2 rows, subgroupAdd; prefill rows 8 × 4 × 7, x per lane', { WG: 8, LANES: 8, ROWS: 2, subgroups: true }, { kind: 'rows', WG: 8, R: 4, TT: 7, subgroups: false }],
  ['matvec 8 lanes a row, 4 rows, workgroup memory; prefill tiles 32×64 of 4×4', { WG: 8, LANES: 8, ROWS: 4, subgroups: false }, { kind: 'tiles', BM: 32, BN: 64, TM: 4, TN: 4 }],
  ['matvec 1 lane a row in 8, 2 rows; prefill tiles 16×64 of 16×1', { WG: 8, LANES: 1, ROWS: 2, subgroups: false }, { kind: 'tiles', BM: 16, BN: 64, TM: 16, TN: 1 }],
  ['matvec 16 lanes a row in 64, 6 rows, workgroup memory; prefill tiles 32×32 of 16×2', { WG: 64, LANES: 16, ROWS: 6, subgroups: false }, { kind: 'tiles', BM: 32, BN: 32, TM: 16, TN: 2 }],
  ['matvec 128 lanes a row, 2 rows, workgroup memory; prefill tiles 2×2 of 1×1', { WG: 128, LANES: 128, ROWS: 2, subgroups: false }, { kind: 'tiles', BM: 2, BN: 2, TM: 1, TN: 1 }],
  // a GPU's multi-subgroup matvec (src/gpu/tuning.ts): a row group per subgroup, 8 of them a workgroup
  ['matvec 8 lanes a row in 64 (8 subgroups), 4 rows, subgroup shuffles; prefill tiles 32×64 of 8×8 (a GPU candidate)', { WG: 64, LANES: 8, ROWS: 4, subgroups: true }, { kind: 'tiles', BM: 32, BN: 64, TM: 8, TN: 8 }],
];

describe.each(LAYOUTS.flatMap(([l, mv, mm]) => [false, true].map((f16) => [l, f16, mv, mm] as const)))('linear kernels, %s, shader-f16 %s', (_l, useF16, layout, tile) => {
  let device: GPUDevice;
  let h: KernelHarness;
  beforeAll(async () => {
    device = await testDevice(useF16);
    h = new KernelHarness(device, useF16, { adapterClass: 'cpu', matvec: { dense: layout, q4: layout, ggml: layout }, matmul: { dense: tile, q4: tile, ggml: tile }, attention: { splits: 1, minKeys: 64 } });
  });
  afterAll(() => { h?.destroy(); device?.destroy(); });

  it.each([
    ['BF16 300×512', (): Linear => denseLinear('w', 300, 512, 'BF16', 1)],
    ['F16 45×77', (): Linear => denseLinear('w', 45, 77, 'F16', 2)],
    ['F32 34×21', (): Linear => denseLinear('w', 34, 21, 'F32', 4)],
    ['F16 45×76 (a last block half past k)', (): Linear => denseLinear('w', 45, 76, 'F16', 6)],
    ['F32 34×20', (): Linear => denseLinear('w', 34, 20, 'F32', 7)],
    ['q4f16_1 200×1024', (): Linear => q4Linear('w', 200, 1024, 3)],
    ['q4f16_1 14×96', (): Linear => q4Linear('w', 14, 96, 5)],
  ] as [string, () => Linear][])('%s: plain, residual and gate|up epilogues for 1, 6 and 37 tokens, and decode with the RMSNorm folded in', async (_label, make) => {
    const w = make();
    const g = uploadLinear(device, w, 1 << 30);
    for (const n of [1, 6, 37]) {
      const x = randomF32(n * w.cols, 40 + n);
      const ref = matmul(w, x, n);
      await expectEpilogues(h, g, w.rows, x, ref, n, { seed: 50 + n });
    }
    if (w.cols % 4 === 0) await expectFoldedNorm(h, g, w, { seed: 60 });
  });
});

// The dense GPU candidates of 8 rows a group (src/gpu/tuning.ts matvecCandidates): two row groups of a
// subgroup each in a workgroup, summed by shuffles, 8 rows each (4 gate|up pairs), on lavapipe's subgroups
// of 8; rows past the end in the last workgroup, K not a multiple of a vec4's 8 halves (F16 77).
describe('dense decode matvec, 8 rows a group, two groups a workgroup (subgroup shuffles)', () => {
  const layout: MatvecLayout = { WG: 16, LANES: 8, ROWS: 8, subgroups: true };
  let device: GPUDevice;
  let h: KernelHarness;
  beforeAll(async () => {
    device = await testDevice(false);
    const tile: MatmulLayout = { kind: 'tiles', BM: 16, BN: 32, TM: 4, TN: 2 };
    h = new KernelHarness(device, false, { adapterClass: 'cpu', matvec: { dense: layout, q4: layout, ggml: layout }, matmul: { dense: tile, q4: tile, ggml: tile }, attention: { splits: 1, minKeys: 64 } });
  });
  afterAll(() => { h?.destroy(); device?.destroy(); });

  it.each([
    ['BF16 300×512', (): Linear => denseLinear('w', 300, 512, 'BF16', 1)],
    ['F16 46×77', (): Linear => denseLinear('w', 46, 77, 'F16', 2)],
    ['F32 34×21', (): Linear => denseLinear('w', 34, 21, 'F32', 4)],
  ] as [string, () => Linear][])('%s: plain, residual and gate|up epilogues for one token', async (_label, make) => {
    const w = make();
    const x = randomF32(w.cols, 41);
    await expectEpilogues(h, uploadLinear(device, w, 1 << 30), w.rows, x, matmul(w, x, 1), 1, { seed: 51 });
  });
});
