// A second, deliberately naive Qwen3 forward pass written from the HF modeling code's equations with
// nested number arrays and no KV cache: the whole sequence at once, full attention matrix with a causal
// mask. Tests compare the ReferenceEngine against it; the two share only the weight decoding.

import { dequantizeLinear, tensorToF32 } from '../../../../src/model/reference/ops.ts';
import type { Linear, ModelWeights, TensorData } from '../../../../src/model/types.ts';

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
const heads = (x: number[], count: number, D: number): number[][] => Array.from({ length: count }, (_, h) => x.slice(h * D, (h + 1) * D));

/** Logits [V] of the last token of `ids`, layers [0, L), in doubles. */
export function naiveLastLogits(w: ModelWeights, ids: number[]): number[] {
  const c = w.config;
  const D = c.headDim;
  const embed = matrix(w.embedding!);
  let xs = ids.map((id) => [...embed[id]!]);
  for (let l = 0; l < c.numLayers; l++) {
    const L = w.layers.get(l)!;
    const [qkvW, oW, guW, downW] = [matrix(L.qkv), matrix(L.o), matrix(L.gateUp), matrix(L.down)];
    const [inN, qN, kN, postN] = [vector(L.inputNorm), vector(L.qNorm), vector(L.kNorm), vector(L.postNorm)];
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
      const gu = linear(rms(h1, postN, c.rmsNormEps), guW);
      const I = c.intermediateSize;
      const act = gu.slice(0, I).map((g, i) => (g / (1 + Math.exp(-g))) * gu[I + i]!);
      const down = linear(act, downW);
      return h1.map((v, i) => v + down[i]!);
    });
  }
  const head = matrix(w.lmHead ?? w.embedding!);
  return linear(rms(xs[xs.length - 1]!, vector(w.finalNorm!), c.rmsNormEps), head);
}
