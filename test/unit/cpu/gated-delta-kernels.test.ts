// The Gated DeltaNet and gated-attention kernels of the WASM engine (src/cpu/asm/gated-delta.ts) against
// the reference (src/model/reference/gated-delta.ts) on odd shapes (channel counts and head dims that
// are not multiples of 4, key heads shared by several value heads, grouped and tiled, several calls
// continuing one state), with the GPU hybrid kernels' tolerances (test/gpu/hybrid-kernels.test.ts):
// conv + SiLU 2e-6, the delta rule (outputs and state) 1e-5, the gated RMSNorm 2e-6; the gates and
// the L2 norms 2e-6 like the other elementwise kernels. The kernels run the reference's own f64
// sequence per lane, so the measured differences are 0 or a last bit of exp; each test prints its own.
import { beforeAll, describe, expect, it } from 'vitest';
import type { WasmKernels } from '../../../src/cpu/wasm-kernels.ts';
import {
  causalConv1dSilu, convChannels, deltaInputs, gatedDeltaRecurrent, gatedRmsNorm, sigmoid, type DeltaDims,
} from '../../../src/model/reference/gated-delta.ts';
import { randomF32, relErr, testKernels } from './helpers.ts';

let k: WasmKernels;
beforeAll(async () => { k = await testKernels(); }, 120_000);   // a fresh clone compiles the kernels first

const dims = (nk: number, nv: number, dk: number, dv: number, K: number, valueHeads: DeltaDims['valueHeads'] = 'grouped'): DeltaDims =>
  ({ numKeyHeads: nk, numValueHeads: nv, keyDim: dk, valueDim: dv, convKernel: K, valueHeads });

/** Columns [0, C) of rows of `stride` floats. */
function columns(x: Float32Array, n: number, stride: number, from: number, width: number): Float32Array {
  const out = new Float32Array(n * width);
  for (let t = 0; t < n; t++) out.set(x.subarray(t * stride + from, t * stride + from + width), t * width);
  return out;
}

describe('causal conv1d + SiLU over the rolling state', () => {
  it.each([[13, 4, [1, 5, 2]], [22, 2, [3, 1]], [8, 4, [2, 1, 1, 4]], [37, 3, [6]]])('C %i, K %i, calls of %j tokens, continuing the state, within 2e-6', (C, K, calls) => {
    const extra = 3;                                          // the z columns after q|k|v in in_proj's rows
    const taps = randomF32(C * K, 21, 0.7);                   // [C, K]
    const tapsT = new Float32Array(C * K);
    for (let c = 0; c < C; c++) for (let j = 0; j < K; j++) tapsT[j * C + c] = taps[c * K + j]!;
    const refState = randomF32((K - 1) * C, 22, 1);
    const report: number[] = [];
    k.frame(() => {
      const wT = k.input(tapsT), state = k.input(refState);
      calls.forEach((n, call) => {
        const x = randomF32(n * (C + extra), 23 + call, 2);
        const ref = causalConv1dSilu(columns(x, n, C + extra, 0, C), n, taps, refState, C, K);
        const ours = k.frame(() => {
          const xp = k.input(x), y = k.alloc(n * C * 4);
          k.convSiluAt(xp, C + extra, n, wT, state, C, K, y);
          return k.f32(y, n * C).slice();
        });
        report.push(relErr(ours, ref));
        expect(relErr(ours, ref)).toBeLessThan(2e-6);
        expect([...k.f32(state, (K - 1) * C)]).toEqual([...refState]);
      });
    });
    console.log(`conv C ${C} K ${K}: rel err per call ${report.map((e) => e.toExponential(1)).join(', ')}`);
  });
});

describe('the delta rule inputs: L2-normalised q, k and the gates', () => {
  it.each([[2, 6, 5, 7, 4], [1, 3, 12, 3, 1], [4, 4, 9, 10, 3]])('n_k %i, n_v %i, d_k %i, d_v %i, %i tokens, within 2e-6', (nk, nv, dk, dv, n) => {
    const d = dims(nk, nv, dk, dv, 4);
    const C = convChannels(d);
    const conv = randomF32(n * C, 31, 1.5), ba = randomF32(n * 2 * nv, 32, 4);
    ba[nv] = 25;                                              // softplus's linear branch (a + dt_bias > 20)
    const A = Float32Array.from(randomF32(nv, 33, 1), (v) => -Math.exp(v)), dtBias = randomF32(nv, 34, 1);
    const ref = deltaInputs(conv, ba, A, dtBias, n, d);
    const ours = k.frame(() => {
      const cp = k.input(conv), bap = k.input(ba), Ap = k.input(A), dtp = k.input(dtBias);
      const g = k.alloc(n * nv * 4), beta = k.alloc(n * nv * 4);
      k.l2normHeadsAt(cp, C, n, nk, dk, 1 / Math.sqrt(dk));
      k.l2normHeadsAt(cp + nk * dk * 4, C, n, nk, dk, 1);
      k.deltaGatesAt(bap, Ap, dtp, n, nv, g, beta);
      const all = k.f32(cp, n * C).slice();
      return { q: columns(all, n, C, 0, nk * dk), k: columns(all, n, C, nk * dk, nk * dk), v: columns(all, n, C, 2 * nk * dk, nv * dv), g: k.f32(g, n * nv).slice(), beta: k.f32(beta, n * nv).slice() };
    });
    for (const key of ['q', 'k', 'v', 'g', 'beta'] as const) expect(relErr(ours[key], ref[key]), key).toBeLessThan(2e-6);
    expect([...ours.v]).toEqual([...ref.v]);
  });
});

describe('the gated delta rule, per head, state [d_k, d_v] updated per token', () => {
  it.each([
    [1, 1, 4, 4, [1], 'grouped'], [2, 6, 5, 7, [4, 1], 'grouped'], [3, 6, 9, 6, [3, 2], 'tiled'], [2, 4, 16, 13, [5], 'tiled'], [1, 2, 32, 33, [2, 3], 'grouped'],
  ] as const)('n_k %i, n_v %i, d_k %i, d_v %i, calls of %j tokens, %s value heads, outputs and state within 1e-5', (nk, nv, dk, dv, calls, heads) => {
    const d = dims(nk, nv, dk, dv, 4, heads);
    const C = convChannels(d);
    const refState = randomF32(nv * dk * dv, 41, 0.5);
    const A = Float32Array.from(randomF32(nv, 42, 1), (v) => -Math.exp(v)), dtBias = randomF32(nv, 43, 1);
    const errs: string[] = [];
    k.frame(() => {
      const S = k.input(refState);
      calls.forEach((n, call) => {
        const inp = deltaInputs(randomF32(n * C, 44 + call, 1.5), randomF32(n * 2 * nv, 45 + call, 3), A, dtBias, n, d);
        const conv = new Float32Array(n * C);                 // q̂ | k̂ | v per token, as the mixer leaves it
        for (let t = 0; t < n; t++) {
          conv.set(inp.q.subarray(t * nk * dk, (t + 1) * nk * dk), t * C);
          conv.set(inp.k.subarray(t * nk * dk, (t + 1) * nk * dk), t * C + nk * dk);
          conv.set(inp.v.subarray(t * nv * dv, (t + 1) * nv * dv), t * C + 2 * nk * dk);
        }
        const ref = gatedDeltaRecurrent(inp, n, d, refState);
        const out = k.frame(() => {
          const cp = k.input(conv), g = k.input(inp.g), beta = k.input(inp.beta), o = k.alloc(n * nv * dv * 4);
          k.gatedDeltaRuleAt(cp, g, beta, S, o, n, { ...d, tiled: heads === 'tiled' });
          return k.f32(o, n * nv * dv).slice();
        });
        const state = k.f32(S, nv * dk * dv).slice();
        errs.push(`${relErr(out, ref).toExponential(1)}/${relErr(state, refState).toExponential(1)}`);
        expect(relErr(out, ref)).toBeLessThan(1e-5);
        expect(relErr(state, refState)).toBeLessThan(1e-5);
      });
    });
    console.log(`delta rule ${nk}/${nv} heads, ${dk}×${dv}: rel err out/state per call ${errs.join(', ')}`);
  });
});

it.each([[3, 7, 4], [2, 128, 1], [5, 9, 2]])('gated RMSNorm: %i value heads of %i, %i tokens, z strided, within 2e-6', (nv, dv, n) => {
  const o = randomF32(n * nv * dv, 51, 2), zRows = randomF32(n * (nv * dv + 5), 52, 3), w = randomF32(dv, 53, 1);
  const ref = gatedRmsNorm(o, columns(zRows, n, nv * dv + 5, 0, nv * dv), w, 1e-6);
  const ours = k.frame(() => {
    const op = k.input(o), zp = k.input(zRows), wp = k.input(w), y = k.alloc(o.byteLength);
    k.gatedRmsNormAt(op, zp, nv * dv + 5, wp, y, n, nv, dv, 1e-6);
    return k.f32(y, o.length).slice();
  });
  expect(relErr(ours, ref)).toBeLessThan(2e-6);
});

it('gated attention\'s output gate x · σ(gate) within 2e-6 (37 values)', () => {
  const x = randomF32(37, 61, 3), gate = randomF32(37, 62, 8);
  const ref = Float32Array.from(x, (v, i) => v * sigmoid(gate[i]!));
  const ours = k.frame(() => {
    const xp = k.input(x), gp = k.input(gate);
    k.sigmoidGateAt(xp, gp, 37);
    return k.f32(xp, 37).slice();
  });
  expect(relErr(ours, ref)).toBeLessThan(2e-6);
});
