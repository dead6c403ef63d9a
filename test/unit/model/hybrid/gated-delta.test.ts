// Gated DeltaNet primitives on odd shapes: the causal conv's rolling state, the recurrent delta rule
// against its defining equations in doubles, the chunked (WY) form against the recurrent one, grouped vs
// tiled value heads, and the gated RMSNorm.
import { describe, expect, it } from 'vitest';
import {
  causalConv1dSilu, gatedDeltaChunked, gatedDeltaRecurrent, gatedRmsNorm, keyHeadOf, l2NormHeads, type DeltaDims, type DeltaInputs,
} from '../../../../src/model/reference/gated-delta.ts';
import { Sfc32 } from '../../../../src/model/tiny/prng.ts';

const rand = (n: number, seed: number, scale = 1) => { const r = new Sfc32(seed, 1); return Float32Array.from({ length: n }, () => scale * r.normal()); };
const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => { let m = 0; for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!)); return m; };

describe('causal conv1d with a rolling state', () => {
  const C = 7, K = 3, n = 5;
  const x = rand(n * C, 1), w = rand(C * K, 2);

  it('is Σ_j w[c][j]·x[t−(K−1)+j][c] with K−1 left zeros, then SiLU', () => {
    const y = causalConv1dSilu(x, n, w, new Float32Array((K - 1) * C), C, K);
    for (let t = 0; t < n; t++) {
      for (let c = 0; c < C; c++) {
        let s = 0;
        for (let j = 0; j < K; j++) { const src = t - (K - 1) + j; if (src >= 0) s += w[c * K + j]! * x[src * C + c]!; }
        const want = Math.fround(s) / (1 + Math.exp(-Math.fround(s)));
        expect(y[t * C + c]).toBeCloseTo(want, 6);
      }
    }
  });

  it('continuing in pieces (1 + 3 + 1 tokens) equals all at once, bitwise, and keeps the last K−1 inputs', () => {
    const whole = causalConv1dSilu(x, n, w, new Float32Array((K - 1) * C), C, K);
    const state = new Float32Array((K - 1) * C);
    const parts = [[0, 1], [1, 4], [4, 5]].map(([a, b]) => causalConv1dSilu(x.slice(a! * C, b! * C), b! - a!, w, state, C, K));
    const joined = new Float32Array(n * C);
    let o = 0;
    for (const p of parts) { joined.set(p, o); o += p.length; }
    expect(joined).toEqual(whole);
    expect(state).toEqual(x.slice((n - (K - 1)) * C));
  });
});

const DIMS: DeltaDims[] = [
  { numKeyHeads: 3, numValueHeads: 6, keyDim: 5, valueDim: 7, convKernel: 4, valueHeads: 'grouped' },
  { numKeyHeads: 3, numValueHeads: 6, keyDim: 5, valueDim: 7, convKernel: 4, valueHeads: 'tiled' },
  { numKeyHeads: 1, numValueHeads: 3, keyDim: 9, valueDim: 4, convKernel: 2, valueHeads: 'grouped' },
];

function inputs(d: DeltaDims, n: number, seed: number): DeltaInputs {
  const { numKeyHeads: nk, numValueHeads: nv, keyDim: dk, valueDim: dv } = d;
  const r = new Sfc32(seed, 9);
  return {
    q: l2NormHeads(rand(n * nk * dk, seed + 1), dk, 1 / Math.sqrt(dk)), k: l2NormHeads(rand(n * nk * dk, seed + 2), dk, 1),
    v: rand(n * nv * dv, seed + 3), g: Float32Array.from({ length: n * nv }, () => -0.05 - 0.6 * r.uniform()),
    beta: Float32Array.from({ length: n * nv }, () => r.uniform()),
  };
}

/** The rule as written, per value head, in doubles on nested arrays. */
function naiveDelta(inp: DeltaInputs, n: number, d: DeltaDims, init: Float32Array): { o: number[]; S: number[] } {
  const { numKeyHeads: nk, numValueHeads: nv, keyDim: dk, valueDim: dv } = d;
  const S = Array.from(init);
  const o: number[] = [];
  for (let t = 0; t < n; t++) {
    for (let j = 0; j < nv; j++) {
      const kh = keyHeadOf(d, j);
      const at = (i: number, c: number) => j * dk * dv + i * dv + c;
      const k = Array.from({ length: dk }, (_, i) => inp.k[(t * nk + kh) * dk + i]!);
      const q = Array.from({ length: dk }, (_, i) => inp.q[(t * nk + kh) * dk + i]!);
      const decay = Math.exp(inp.g[t * nv + j]!);
      for (let i = 0; i < dk; i++) for (let c = 0; c < dv; c++) S[at(i, c)] = S[at(i, c)]! * decay;
      for (let c = 0; c < dv; c++) {
        let mem = 0;
        for (let i = 0; i < dk; i++) mem += S[at(i, c)]! * k[i]!;
        const delta = (inp.v[(t * nv + j) * dv + c]! - mem) * inp.beta[t * nv + j]!;
        for (let i = 0; i < dk; i++) S[at(i, c)] = S[at(i, c)]! + k[i]! * delta;
      }
      for (let c = 0; c < dv; c++) { let s = 0; for (let i = 0; i < dk; i++) s += S[at(i, c)]! * q[i]!; o.push(s); }
    }
  }
  return { o, S };
}

describe.each(DIMS)('gated delta rule n_k $numKeyHeads, n_v $numValueHeads, d_k $keyDim, d_v $valueDim, $valueHeads', (d) => {
  const n = 11;
  const inp = inputs(d, n, 3);
  const init = rand(d.numValueHeads * d.keyDim * d.valueDim, 4, 0.3);

  it('recurrent form: S ← e^g S; S += k(β(v − Sᵀk))ᵀ; o = Sᵀq, from a non-zero state', () => {
    const state = init.slice();
    const o = gatedDeltaRecurrent(inp, n, d, state);
    const want = naiveDelta(inp, n, d, init);
    expect(maxDiff(o, want.o)).toBeLessThan(1e-5);
    expect(maxDiff(state, want.S)).toBeLessThan(1e-5);
  });

  it('recurrent in two calls (4 + 7 tokens) equals one call, bitwise', () => {
    const s1 = init.slice(), s2 = init.slice();
    const whole = gatedDeltaRecurrent(inp, n, d, s1);
    const cut = (x: Float32Array, per: number, a: number, b: number) => x.slice(a * per, b * per);
    const part = (a: number, b: number): DeltaInputs => ({
      q: cut(inp.q, d.numKeyHeads * d.keyDim, a, b), k: cut(inp.k, d.numKeyHeads * d.keyDim, a, b), v: cut(inp.v, d.numValueHeads * d.valueDim, a, b),
      g: cut(inp.g, d.numValueHeads, a, b), beta: cut(inp.beta, d.numValueHeads, a, b),
    });
    const joined = new Float32Array(whole.length);
    joined.set(gatedDeltaRecurrent(part(0, 4), 4, d, s2));
    joined.set(gatedDeltaRecurrent(part(4, n), n - 4, d, s2), 4 * d.numValueHeads * d.valueDim);
    expect(joined).toEqual(whole);
    expect(s2).toEqual(s1);
  });

  it.each([1, 3, 4, 64])('chunked form (chunk %i) equals the recurrent one up to rounding, state included', (chunk) => {
    const sr = init.slice(), sc = init.slice();
    const r = gatedDeltaRecurrent(inp, n, d, sr);
    const c = gatedDeltaChunked(inp, n, d, sc, chunk);
    expect(maxDiff(c, r)).toBeLessThan(1e-5);
    expect(maxDiff(sc, sr)).toBeLessThan(1e-5);
  });
});

it('grouped and tiled value heads are one rule under a relabelling of the value heads', () => {
  const g = DIMS[0]!, t = DIMS[1]!;
  const n = 6, nv = g.numValueHeads, nk = g.numKeyHeads, r = nv / nk, dv = g.valueDim, dk = g.keyDim;
  const inp = inputs(g, n, 11);
  // Tiled head j' = (j mod r)·n_k + j / r reads key head j / r, the key head grouped head j reads.
  const toTiled = (j: number) => (j % r) * nk + Math.floor(j / r);
  for (let j = 0; j < nv; j++) expect(keyHeadOf(t, toTiled(j))).toBe(keyHeadOf(g, j));
  const perm = (x: Float32Array, per: number) => {
    const out = new Float32Array(x.length);
    for (let s = 0; s < n; s++) for (let j = 0; j < nv; j++) out.set(x.subarray((s * nv + j) * per, (s * nv + j + 1) * per), (s * nv + toTiled(j)) * per);
    return out;
  };
  const tiledInp: DeltaInputs = { ...inp, v: perm(inp.v, dv), g: perm(inp.g, 1), beta: perm(inp.beta, 1) };
  const og = gatedDeltaRecurrent(inp, n, g, new Float32Array(nv * dk * dv));
  const ot = gatedDeltaRecurrent(tiledInp, n, t, new Float32Array(nv * dk * dv));
  expect(perm(og, dv)).toEqual(ot);
});

it('gated RMSNorm: o/√(mean o² + eps) · w · silu(z) per value head; l2norm: x/√(Σx² + 1e-6) · scale', () => {
  const o = rand(2 * 3 * 5, 21), z = rand(30, 22), w = rand(5, 23);
  const y = gatedRmsNorm(o, z, w, 1e-6);
  for (let h = 0; h < 6; h++) {
    const seg = Array.from(o.subarray(h * 5, h * 5 + 5));
    const inv = 1 / Math.sqrt(seg.reduce((s, v) => s + v * v, 0) / 5 + 1e-6);
    seg.forEach((v, c) => expect(y[h * 5 + c]).toBeCloseTo(v * inv * w[c]! * (z[h * 5 + c]! / (1 + Math.exp(-z[h * 5 + c]!))), 6));
  }
  const x = Float32Array.from([3, 4, 0, 0]);
  expect(Array.from(l2NormHeads(x, 2, 0.5))).toEqual([Math.fround(0.5 * 3 / Math.sqrt(25 + 1e-6)), Math.fround(0.5 * 4 / Math.sqrt(25 + 1e-6)), 0, 0]);
});
