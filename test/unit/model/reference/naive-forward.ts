// A second, deliberately naive Qwen3 forward pass written from the HF modeling code's equations with
// nested number arrays and no KV cache: the whole sequence at once, full attention matrix with a causal
// mask; the MoE block as HF's Qwen3MoeSparseMoeBlock (softmax over all experts, top-k, optional
// renormalisation, weighted sum of SwiGLU experts). Tests compare the ReferenceEngine against it; the
// two share only the weight decoding.

import { dequantizeLinear, tensorToF32 } from '../../../../src/model/reference/ops.ts';
import type { Linear, ModelWeights, MoeMlpWeights, TensorData } from '../../../../src/model/types.ts';

type Matrix = number[][];

const matrix = (w: Linear): Matrix => {
  const flat = dequantizeLinear(w);
  return Array.from({ length: w.rows }, (_, r) => Array.from(flat.subarray(r * w.cols, (r + 1) * w.cols)));
};
const vector = (t: TensorData): number[] => Array.from(tensorToF32(t));
const linear = (x: number[], w: Matrix): number[] => w.map((row) => row.reduce((s, v, k) => s + v * x[k]!, 0));
const rms = (x: number[], w: number[], eps: number): number[] => {
  const inv = 1 / Math.sqrt(x.reduce((s, v) => s + v * v, 0) / x.length + eps);
  return x.map((v, i) => v * inv * w[i]!);
};
const rotateHalf = (x: number[]): number[] => {
  const h = x.length / 2;
  return [...x.slice(h).map((v) => -v), ...x.slice(0, h)];
};
/** HF apply_rotary_pos_emb: x·cos + rotate_half(x)·sin, cos/sin = [freqs, freqs]. */
const rope = (x: number[], pos: number, theta: number): number[] => {
  const D = x.length;
  const freqs = Array.from({ length: D / 2 }, (_, i) => pos * Math.pow(theta, (-2 * i) / D));
  const angles = [...freqs, ...freqs];
  const rotated = rotateHalf(x);
  return x.map((v, i) => v * Math.cos(angles[i]!) + rotated[i]! * Math.sin(angles[i]!));
};
const swiglu = (x: number[], gate: Matrix, up: Matrix, down: Matrix): number[] => {
  const g = linear(x, gate), u = linear(x, up);
  return linear(g.map((v, i) => (v / (1 + Math.exp(-v))) * u[i]!), down);
};

/** HF Qwen3MoeSparseMoeBlock on one token (expert e = rows [e·I, (e+1)·I) of the stacked matrices). */
function moeBlock(x: number[], m: MoeMlpWeights): number[] {
  const router = matrix(m.router), gate = matrix(m.gate), up = matrix(m.up), down = matrix(m.down);
  const logits = linear(x, router);
  const top = Math.max(...logits);
  const e = logits.map((v) => Math.exp(v - top));
  const z = e.reduce((a, b) => a + b, 0);
  const probs = e.map((v) => v / z);
  const chosen = probs.map((p, i) => [p, i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]).slice(0, m.topK);
  const sum = chosen.reduce((s, [p]) => s + p, 0);
  const out = new Array<number>(x.length).fill(0);
  const I = m.intermediate, H = x.length;
  for (const [p, ex] of chosen) {
    const y = swiglu(x, gate.slice(ex * I, (ex + 1) * I), up.slice(ex * I, (ex + 1) * I), down.slice(ex * H, (ex + 1) * H));
    const wgt = m.normTopkProb ? p / sum : p;
    y.forEach((v, i) => { out[i]! += wgt * v; });
  }
  return out;
}

const heads = (x: number[], count: number, D: number): number[][] => Array.from({ length: count }, (_, h) => x.slice(h * D, (h + 1) * D));

/** Logits [V] of the last token of `ids`, layers [0, L), in doubles. */
export function naiveLastLogits(w: ModelWeights, ids: number[]): number[] {
  const c = w.config;
  const D = c.headDim;
  const embed = matrix(w.embedding!);
  let xs = ids.map((id) => [...embed[id]!]);
  for (let l = 0; l < c.numLayers; l++) {
    const L = w.layers.get(l)!;
    const A = L.mixer, F = L.ffn;
    if (A.kind !== 'attention') throw new Error(`layer ${l}: the naive forward is Qwen3's (attention), not ${A.kind}`);
    const [qkvW, oW] = [matrix(A.qkv), matrix(A.o)];
    const [guW, downW] = F.kind === 'moe' ? [[], []] : [matrix(F.gateUp), matrix(F.down)];
    const [inN, qN, kN, postN] = [vector(L.inputNorm), vector(A.qNorm), vector(A.kNorm), vector(L.postNorm)];
    const qs: number[][][] = [];
    const ks: number[][][] = [];
    const vs: number[][][] = [];
    xs.forEach((x, pos) => {
      const qkv = linear(rms(x, inN, c.rmsNormEps), qkvW);
      const qWidth = c.numHeads * D;
      const kvWidth = c.numKvHeads * D;
      qs.push(heads(qkv.slice(0, qWidth), c.numHeads, D).map((h) => rope(rms(h, qN, c.rmsNormEps), pos, c.ropeTheta)));
      ks.push(heads(qkv.slice(qWidth, qWidth + kvWidth), c.numKvHeads, D).map((h) => rope(rms(h, kN, c.rmsNormEps), pos, c.ropeTheta)));
      vs.push(heads(qkv.slice(qWidth + kvWidth), c.numKvHeads, D));
    });
    const group = c.numHeads / c.numKvHeads;
    xs = xs.map((x, pos) => {
      const attnOut: number[] = [];
      for (let h = 0; h < c.numHeads; h++) {
        const kvh = Math.floor(h / group);
        const scores = ks.slice(0, pos + 1).map((k) => k[kvh]!.reduce((s, v, d) => s + v * qs[pos]![h]![d]!, 0) / Math.sqrt(D));
        const m = Math.max(...scores);
        const e = scores.map((s) => Math.exp(s - m));
        const z = e.reduce((a, b) => a + b, 0);
        for (let d = 0; d < D; d++) attnOut.push(e.reduce((s, p, j) => s + (p / z) * vs[j]![kvh]![d]!, 0));
      }
      const h1 = x.map((v, i) => v + linear(attnOut, oW)[i]!);
      const hn = rms(h1, postN, c.rmsNormEps);
      if (F.kind === 'moe') {
        const y = moeBlock(hn, F.moe);
        return h1.map((v, i) => v + y[i]!);
      }
      const gu = linear(hn, guW);
      const I = c.intermediateSize;
      const act = gu.slice(0, I).map((g, i) => (g / (1 + Math.exp(-g))) * gu[I + i]!);
      const down = linear(act, downW);
      return h1.map((v, i) => v + down[i]!);
    });
  }
  const head = matrix(w.lmHead ?? w.embedding!);
  return linear(rms(xs[xs.length - 1]!, vector(w.finalNorm!), c.rmsNormEps), head);
}
