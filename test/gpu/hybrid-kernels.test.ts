// The hybrid (Qwen3.5) kernels against the CPU reference (src/model/reference/gated-delta.ts, ops.ts) on
// odd shapes, both paths (f32 without shader-f16, and f16). Tolerances, relative to the largest reference
// magnitude (at least 1):
//   causal conv + SiLU, gated RMSNorm, sigmoid gates, q/k norm + partial RoPE: 2e-6 (f32 sums and GPU
//     exp against the reference's doubles); copies (the gate, V into the cache): exact;
//   gated delta rule (state and outputs, several tokens): 1e-5 against the recurrent form, and against
//     the chunked (WY) form the CPU's prefill can use;
//   a step cut anywhere (one dispatch for n tokens, or the tokens one step at a time): bit-equal, the
//     property that lets a checkpoint restore and recompute a suffix without changing the answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadLinear } from '../../src/gpu/gpu-weights.ts';
import { ropeTable } from '../../src/gpu/layers.ts';
import { causalConv1dOp } from '../../src/gpu/kernels/hybrid/causal-conv1d.ts';
import { gatedDeltaOp } from '../../src/gpu/kernels/hybrid/gated-delta.ts';
import { gatedQkNormRopeOp } from '../../src/gpu/kernels/hybrid/gated-qk-norm-rope.ts';
import { gatedRmsnormOp } from '../../src/gpu/kernels/hybrid/gated-rmsnorm.ts';
import { Epilogue, linearOps } from '../../src/gpu/kernels/linear/linear.ts';
import { GateMode, sigmoidGateOp } from '../../src/gpu/kernels/hybrid/sigmoid-gate.ts';
import {
  causalConv1dSilu, convChannels, deltaInputs, gatedDeltaChunked, gatedDeltaRecurrent, gatedRmsNorm, sigmoid, type DeltaDims,
} from '../../src/model/reference/gated-delta.ts';
import { headRmsNorm, matmul, ropeNeox, sliceColumns, siluMul } from '../../src/model/reference/ops.ts';
import { f16BitsToF32, f32ToF16Bits, fromFloat32, roundToF16 } from '../../src/model/tensor-utils.ts';
import type { Linear } from '../../src/model/types.ts';
import { KernelHarness } from './kernel-harness.ts';
import { randomF32, relErr, testDevice } from './helpers.ts';

function dims(nk: number, nv: number, dk: number, dv: number, K: number, valueHeads: 'grouped' | 'tiled'): DeltaDims {
  return { numKeyHeads: nk, numValueHeads: nv, keyDim: dk, valueDim: dv, convKernel: K, valueHeads };
}

function f16Cache(words: Uint32Array): Float32Array {
  const out = new Float32Array(words.length * 2);
  words.forEach((w, i) => { out[2 * i] = f16BitsToF32(w & 0xffff); out[2 * i + 1] = f16BitsToF32(w >>> 16); });
  return out;
}

describe.each([false, true])('hybrid kernels, shader-f16 path %s', (useF16) => {
  let device: GPUDevice;
  let h: KernelHarness;
  beforeAll(async () => {
    device = await testDevice(useF16);
    expect(device.features.has('shader-f16')).toBe(useF16);
    h = new KernelHarness(device, useF16);
  });
  afterAll(() => { h?.destroy(); device?.destroy(); });

  // [C, K, extra columns in a row of x, tokens]
  it.each([[37, 4, 11, 7], [64, 2, 0, 1], [19, 5, 3, 9], [130, 8, 7, 3]])(
    'causal conv1d + SiLU continuing its rolling state: C %i, K %i, row stride C + %i, %i tokens', async (C, K, extra, n) => {
      const XS = C + extra;
      const x = randomF32(n * XS, 1 + C, 2);
      const weight = randomF32(C * K, 2 + K);
      const state0 = randomF32((K - 1) * C, 3 + n);
      const refState = state0.slice();
      const ref = causalConv1dSilu(sliceColumns(x, XS, 0, C), n, weight, refState, C, K);
      const run = async (cuts: number[]) => {
        const state = h.buffer(state0);
        const y = h.buffer(n * C * 4);
        let t0 = 0;
        for (const m of cuts) {
          const xb = h.buffer(x.slice(t0 * XS, (t0 + m) * XS));
          const yb = h.buffer(m * C * 4);
          await h.run([causalConv1dOp(h.cache, { step: h.step, x: xb, weight: h.buffer(weight), state, y: yb }, { C, K, XS }, 'conv')], m);
          const part = await h.readF32(yb, m * C);
          device.queue.writeBuffer(y, t0 * C * 4, part as Float32Array<ArrayBuffer>);
          t0 += m;
        }
        return { y: await h.readF32(y, n * C), state: await h.readF32(state, (K - 1) * C) };
      };
      const whole = await run([n]);
      expect(relErr(whole.y, ref)).toBeLessThan(2e-6);
      expect(whole.state).toEqual(refState);                       // the state is a copy of inputs
      const single = await run(Array.from({ length: n }, () => 1));
      expect(single.y).toEqual(whole.y);
      expect(single.state).toEqual(whole.state);
    });

  // [n_k, n_v, d_k, d_v, value-head order, tokens]
  it.each([
    [2, 4, 16, 24, 'grouped', 9], [2, 4, 16, 24, 'tiled', 9], [1, 3, 37, 19, 'grouped', 5], [2, 6, 10, 70, 'tiled', 4],
    [2, 2, 128, 128, 'grouped', 3], [1, 1, 256, 33, 'grouped', 2],
  ] as const)('gated delta rule: n_k %i, n_v %i, d_k %i, d_v %i (%s), %i tokens on a running state', async (nk, nv, dk, dv, order, n) => {
    const d = dims(nk, nv, dk, dv, 4, order);
    const C = convChannels(d);
    const conv = randomF32(n * C, 31 + dk, 1.5);
    const ba = randomF32(n * 2 * nv, 32 + dv, 3);
    const A = randomF32(nv, 33).map((v) => -Math.exp(v));
    const dt = randomF32(nv, 34);
    const state0 = randomF32(nv * dk * dv, 35, 0.5);
    const inputs = deltaInputs(conv, ba, A, dt, n, d);
    const refState = state0.slice();
    const ref = gatedDeltaRecurrent(inputs, n, d, refState);
    const chunkState = state0.slice();
    const chunked = gatedDeltaChunked(inputs, n, d, chunkState, 4);
    const run = async (cuts: number[]) => {
      const state = h.buffer(state0);
      const out = new Float32Array(n * nv * dv);
      let t0 = 0;
      for (const m of cuts) {
        const ob = h.buffer(m * nv * dv * 4);
        const b = {
          step: h.step, conv: h.buffer(conv.slice(t0 * C, (t0 + m) * C)), ba: h.buffer(ba.slice(t0 * 2 * nv, (t0 + m) * 2 * nv)),
          a: h.buffer(A), dt_bias: h.buffer(dt), state, out: ob,
        };
        await h.run([gatedDeltaOp(h.cache, b, { NK: nk, NV: nv, DK: dk, DV: dv, tiled: order === 'tiled' }, 'delta')], m);
        out.set(await h.readF32(ob, m * nv * dv), t0 * nv * dv);
        t0 += m;
      }
      return { out, state: await h.readF32(state, nv * dk * dv) };
    };
    const whole = await run([n]);
    expect(relErr(whole.out, ref)).toBeLessThan(1e-5);
    expect(relErr(whole.state, refState)).toBeLessThan(1e-5);
    expect(relErr(whole.out, chunked)).toBeLessThan(1e-5);
    expect(relErr(whole.state, chunkState)).toBeLessThan(1e-5);
    const single = await run(Array.from({ length: n }, () => 1));
    expect(single.out).toEqual(whole.out);
    expect(single.state).toEqual(whole.state);
    const cut = await run([1, n - 1].filter((m) => m > 0));
    expect(cut.out).toEqual(whole.out);
  });

  it('gated delta rule: value heads in llama.cpp\'s tiled order give HF\'s grouped outputs with the heads permuted', async () => {
    const [nk, nv, dk, dv, n] = [2, 6, 8, 5, 3];
    const r = nv / nk;
    const grouped = dims(nk, nv, dk, dv, 4, 'grouped');
    const C = convChannels(grouped);
    const conv = randomF32(n * C, 41, 1.5);
    const ba = randomF32(n * 2 * nv, 42, 3);
    const A = randomF32(nv, 43).map((v) => -Math.exp(v));
    const dt = randomF32(nv, 44);
    // grouped head g = kh·r + i sits at tiled position i·n_k + kh (llama.cpp's reorder).
    const tiledOf = (g: number) => (g % r) * nk + Math.floor(g / r);
    const permute = (x: Float32Array, width: number, offset: number, heads: number, size: number) => {
      const y = x.slice();
      for (let t = 0; t < x.length / width; t++) {
        for (let g = 0; g < heads; g++) y.set(x.subarray(t * width + offset + g * size, t * width + offset + (g + 1) * size), t * width + offset + tiledOf(g) * size);
      }
      return y;
    };
    const convT = permute(conv, C, 2 * nk * dk, nv, dv);
    const baT = permute(permute(ba, 2 * nv, 0, nv, 1), 2 * nv, nv, nv, 1);
    const perm = (x: Float32Array) => permute(x, nv, 0, nv, 1);
    const run = async (order: 'grouped' | 'tiled', c: Float32Array, b: Float32Array, a: Float32Array, t: Float32Array) => {
      const ob = h.buffer(n * nv * dv * 4);
      await h.run([gatedDeltaOp(h.cache, {
        step: h.step, conv: h.buffer(c), ba: h.buffer(b), a: h.buffer(a), dt_bias: h.buffer(t), state: h.buffer(nv * dk * dv * 4), out: ob,
      }, { NK: nk, NV: nv, DK: dk, DV: dv, tiled: order === 'tiled' }, 'delta')], n);
      return h.readF32(ob, n * nv * dv);
    };
    const g = await run('grouped', conv, ba, A, dt);
    const t = await run('tiled', convT, baT, perm(A), perm(dt));
    expect(t).toEqual(permute(g, nv * dv, 0, nv, dv));
  });

  // [n_v, d_v, tokens]
  it.each([[3, 37, 5], [4, 128, 2], [1, 7, 1]])('gated RMSNorm: n_v %i, d_v %i, %i tokens, gate read from the q|k|v|z row', async (nv, dv, n) => {
    const C = 45;
    const ZS = C + nv * dv;
    const eps = 1e-6;
    const o = randomF32(n * nv * dv, 51 + dv, 2);
    const z = randomF32(n * ZS, 52, 3);
    const w = randomF32(dv, 53).map((v) => 1 + 0.3 * v);
    const ref = gatedRmsNorm(o, sliceColumns(z, ZS, C, ZS), w, eps);
    const y = h.buffer(n * nv * dv * 4);
    await h.run([gatedRmsnormOp(h.cache, { step: h.step, o: h.buffer(o), z: h.buffer(z), weight: h.buffer(w), y }, { NV: nv, DV: dv, ZS, ZOFF: C }, eps, 'gnorm')], n);
    expect(relErr(await h.readF32(y, n * nv * dv), ref)).toBeLessThan(2e-6);
  });

  // [Hq, Hkv, D, rotary dims, tokens, pos0]
  it.each([[4, 2, 16, 4, 5, 0], [6, 2, 10, 6, 3, 7], [8, 2, 256, 64, 2, 1000], [2, 1, 8, 8, 1, 3]])(
    'gated q|gate split, q/k RMSNorm, partial RoPE neox, f16 K/V: Hq %i, Hkv %i, D %i, rotary %i, %i tokens at %i', async (Hq, Hkv, D, R, n, pos0) => {
      const eps = 1e-6;
      const theta = 1e7;
      const ctx = pos0 + n + 2;
      const width = 2 * Hq * D + 2 * Hkv * D;
      const qkv = randomF32(n * width, 61 + D, 2);
      const qn = randomF32(D, 62).map((v) => 1 + 0.2 * v);
      const kn = randomF32(D, 63).map((v) => 1 + 0.2 * v);
      const positions = Array.from({ length: n }, (_, i) => pos0 + i);
      const qRaw = new Float32Array(n * Hq * D);
      const gRef = new Float32Array(n * Hq * D);
      for (let t = 0; t < n; t++) {
        for (let hh = 0; hh < Hq; hh++) {
          const from = t * width + 2 * hh * D;
          qRaw.set(qkv.subarray(from, from + D), (t * Hq + hh) * D);
          gRef.set(qkv.subarray(from + D, from + 2 * D), (t * Hq + hh) * D);
        }
      }
      const qRef = headRmsNorm(qRaw, qn, eps);
      ropeNeox(qRef, positions, Hq, D, theta, R);
      const kRef = headRmsNorm(sliceColumns(qkv, width, 2 * Hq * D, 2 * Hq * D + Hkv * D), kn, eps);
      ropeNeox(kRef, positions, Hkv, D, theta, R);
      const vRef = sliceColumns(qkv, width, 2 * Hq * D + Hkv * D, width);
      const q = h.buffer(n * Hq * D * 4);
      const gate = h.buffer(n * Hq * D * 4);
      const kvw = Hkv * D;
      const kc = h.buffer(ctx * kvw * 2);
      const vc = h.buffer(ctx * kvw * 2);
      await h.run([gatedQkNormRopeOp(h.cache, {
        step: h.step, qkv: h.buffer(qkv), qnorm: h.buffer(qn), knorm: h.buffer(kn), rope: h.buffer(ropeTable(ctx, R, theta)), q, gate, kcache: kc, vcache: vc,
      }, { Hq, Hkv, D, rot: R }, eps, 'gqnr')], n, pos0);
      expect(relErr(await h.readF32(q, n * Hq * D), qRef)).toBeLessThan(2e-6);
      expect(await h.readF32(gate, n * Hq * D)).toEqual(gRef);
      const k = f16Cache(new Uint32Array(await h.read(kc, ctx * kvw * 2))).subarray(pos0 * kvw, (pos0 + n) * kvw);
      const v = f16Cache(new Uint32Array(await h.read(vc, ctx * kvw * 2))).subarray(pos0 * kvw, (pos0 + n) * kvw);
      expect(v).toEqual(vRef.map(roundToF16));
      let offByOne = 0;
      kRef.forEach((ref, i) => {
        const want = f32ToF16Bits(ref);
        const got = f32ToF16Bits(k[i]!);
        if (got !== want) { expect(Math.abs(got - want)).toBe(1); offByOne++; }
      });
      expect(offByOne).toBeLessThanOrEqual(Math.ceil(kRef.length / 200));
      // the dims past the rotary ones pass through the norm only
      if (R < D) expect(relErr(qRef.subarray(R, D), headRmsNorm(qRaw, qn, eps).subarray(R, D))).toBe(0);
    });

  it('sigmoid output gate: y ·= σ(g), W odd', async () => {
    const [W, n] = [37, 3];
    const y0 = randomF32(n * W, 71, 2);
    const g = randomF32(n * W, 72, 6);
    const ref = y0.map((v, i) => v * sigmoid(g[i]!));
    const y = h.buffer(y0);
    const gb = h.buffer(g);
    await h.run([sigmoidGateOp(h.cache, { step: h.step, g: gb, x: gb, y }, { W, GS: W, mode: GateMode.OUTPUT }, 'gate')], n);
    expect(relErr(await h.readF32(y, n * W), ref)).toBeLessThan(2e-6);
  });

  it('shared expert: y += σ(shared_gate · hn) · SwiGLU_shared(hn) through the matvec kernels and the shared gate', async () => {
    const [H, Is, n] = [40, 24, 5];
    const dense = (name: string, rows: number, cols: number, seed: number): Linear =>
      ({ kind: 'dense', rows, cols, weight: fromFloat32(name, randomF32(rows * cols, seed, 0.5), [rows, cols], 'BF16') });
    const gateUp = dense('gate_up', 2 * Is, H, 81);
    const down = dense('down', H, Is, 82);
    const gateW = dense('shared_expert_gate', 1, H, 83);
    const hn = randomF32(n * H, 84);
    const routed = randomF32(n * H, 85);
    const shared = matmul(down, siluMul(matmul(gateUp, hn, n), Is), n);
    const sg = matmul(gateW, hn, n);
    const ref = routed.map((v, i) => v + Math.fround(sigmoid(sg[Math.floor(i / H)]!) * shared[i]!));
    const xb = h.buffer(hn);
    const act = h.buffer(n * Is * 4);
    const sx = h.buffer(n * H * 4);
    const gb = h.buffer(n * 4);
    const y = h.buffer(routed);
    const step = h.step;
    await h.run([
      ...linearOps(h.cache, uploadLinear(device, gateUp, 1 << 30), { step, x: xb, y: act, outStride: Is, epilogue: Epilogue.SILU_GATE_UP }),
      ...linearOps(h.cache, uploadLinear(device, down, 1 << 30), { step, x: act, y: sx, outStride: H, epilogue: Epilogue.STORE }),
      ...linearOps(h.cache, uploadLinear(device, gateW, 1 << 30), { step, x: xb, y: gb, outStride: 1, epilogue: Epilogue.STORE }),
      sigmoidGateOp(h.cache, { step, g: gb, x: sx, y }, { W: H, GS: 1, mode: GateMode.SHARED }, 'shared gate'),
    ], n);
    expect(relErr(await h.readF32(y, n * H), ref)).toBeLessThan(2e-6);
  });
});
