// The primitive operations of the Qwen3 forward pass, in plain TypeScript: the oracle every WGSL kernel
// is checked against. Activations are f32 (Float32Array); sums are accumulated in JS doubles and rounded
// to f32 once when stored, so the reference is at least as accurate as any f32 kernel.
//
// Shapes are row-major. n = tokens in the batch, H = hidden size, D = head dim, Hq = query heads,
// Hkv = KV heads, I = intermediate size, V = vocabulary. A Linear is [N, K]: y = x · Wᵀ.

import { linearName, linearRowsToFloat32, toFloat32 } from '../tensor-utils.ts';
import type { Linear, TensorData } from '../types.ts';

/** Rows of a weight decoded per block in matmul: bounds the scratch to ROW_BLOCK·K floats. */
const ROW_BLOCK = 64;

/** A norm weight or any float tensor as f32. */
export function tensorToF32(t: TensorData): Float32Array {
  return toFloat32(t);
}

/** All of a Linear [N, K] as f32, dequantized exactly as its format defines (q4f16_1: (q − 7)·scale). */
export function dequantizeLinear(w: Linear): Float32Array {
  return linearRowsToFloat32(w, 0, w.rows);
}

/** A Linear decoded to f32 once (an engine's cache of hot weights): values [N, K]. */
export interface DecodedLinear {
  kind: 'f32';
  rows: number;                // N
  cols: number;                // K
  values: Float32Array;        // [N, K]
  name: string;
}

export function decodeLinear(w: Linear): DecodedLinear {
  return { kind: 'f32', rows: w.rows, cols: w.cols, values: dequantizeLinear(w), name: linearName(w) };
}

/**
 * y [n, N] = x [n, K] · Wᵀ for a Linear W [N, K] (BF16/F16/F32 dense or q4f16_1) or a decoded one.
 * Decodes ROW_BLOCK rows of W at a time and reuses them for all n tokens, so a weight is decoded once
 * per call whatever n is. The sum order is the same either way, so results are bitwise equal.
 */
export function matmul(w: Linear | DecodedLinear, x: Float32Array, n: number): Float32Array {
  const { rows: N, cols: K } = w;
  if (x.length !== n * K) {
    throw new RangeError(`matmul ${w.kind === 'f32' ? w.name : linearName(w)}: input has ${x.length} values, expected ${n}×${K}`);
  }
  const y = new Float32Array(n * N);
  const blockRows = w.kind === 'f32' ? N : ROW_BLOCK;
  for (let r0 = 0; r0 < N; r0 += blockRows) {
    const r1 = Math.min(N, r0 + blockRows);
    const block = w.kind === 'f32' ? w.values : linearRowsToFloat32(w, r0, r1); // [r1-r0, K]
    for (let r = r0; r < r1; r++) {
      const rowOffset = (r - r0) * K;
      for (let t = 0; t < n; t++) {
        const xOffset = t * K;
        let acc = 0;
        for (let k = 0; k < K; k++) acc += block[rowOffset + k]! * x[xOffset + k]!;
        y[t * N + r] = acc;
      }
    }
  }
  return y;
}

/** y [N] = W [N, K] · x [K]. */
export function matvec(w: Linear | DecodedLinear, x: Float32Array): Float32Array {
  return matmul(w, x, 1);
}

/** Embedding lookup: rows `ids` of E [V, H] -> [n, H] (a q4f16_1 embedding is dequantized per row). */
export function embedRows(embedding: Linear, ids: readonly number[]): Float32Array {
  const H = embedding.cols;
  const out = new Float32Array(ids.length * H);
  ids.forEach((id, t) => {
    if (!Number.isInteger(id) || id < 0 || id >= embedding.rows) {
      throw new RangeError(`embedding ${linearName(embedding)}: token id ${id} outside [0, ${embedding.rows})`);
    }
    out.set(linearRowsToFloat32(embedding, id, id + 1), t * H);
  });
  return out;
}

/**
 * RMSNorm over rows of width `width`: x [rows, width], weight [width] -> [rows, width].
 * y = x / sqrt(mean(x²) + eps) · weight.
 */
export function rmsNorm(x: Float32Array, weight: Float32Array, eps: number): Float32Array {
  const width = weight.length;
  if (x.length % width !== 0) throw new RangeError(`rmsNorm: ${x.length} values is not a whole number of rows of ${width}`);
  const y = new Float32Array(x.length);
  for (let base = 0; base < x.length; base += width) {
    let sumSq = 0;
    for (let i = 0; i < width; i++) sumSq += x[base + i]! * x[base + i]!;
    const inv = 1 / Math.sqrt(sumSq / width + eps);
    for (let i = 0; i < width; i++) y[base + i] = x[base + i]! * inv * weight[i]!;
  }
  return y;
}

/** Qwen3's q_norm / k_norm: RMSNorm of each head separately. x [n, heads·D], weight [D]. */
export function headRmsNorm(x: Float32Array, weight: Float32Array, eps: number): Float32Array {
  return rmsNorm(x, weight, eps);
}

/**
 * RoPE inverse frequencies [R/2] for R rotary dims: inv_freq_i = θ^(−2i/R), rounded to f32 as HF (and a
 * GPU) holds them.
 */
export function ropeInvFreq(headDim: number, theta: number): Float32Array {
  const half = headDim / 2;
  const inv = new Float32Array(half);
  for (let i = 0; i < half; i++) inv[i] = Math.pow(theta, (-2 * i) / headDim);
  return inv;
}

/**
 * RoPE, neox style (rotate_half), in place on x [n, heads·D] at positions [n], on the first `rotaryDim`
 * dims of each head (all D for Qwen3; D · partial_rotary_factor for Qwen3.5, the rest pass through).
 * With R = rotaryDim and inv_freq_i = θ^(−2i/R), pair (i, i + R/2): angle = f32(pos · inv_freq_i) (f32
 * like HF and the GPU; it matters at large positions), x_i' = x_i·cos − x_{i+R/2}·sin,
 * x_{i+R/2}' = x_{i+R/2}·cos + x_i·sin.
 */
export function ropeNeox(x: Float32Array, positions: readonly number[], heads: number, headDim: number, theta: number, rotaryDim = headDim): void {
  const half = rotaryDim / 2;
  const width = heads * headDim;
  if (x.length !== positions.length * width) {
    throw new RangeError(`ropeNeox: ${x.length} values, expected ${positions.length}×${heads}×${headDim}`);
  }
  if (!(Number.isInteger(half) && half >= 1 && rotaryDim <= headDim)) throw new RangeError(`ropeNeox: rotary dims ${rotaryDim} must be even and at most ${headDim}`);
  const invFreq = ropeInvFreq(rotaryDim, theta);
  const cos = new Float64Array(half);
  const sin = new Float64Array(half);
  positions.forEach((pos, t) => {
    for (let i = 0; i < half; i++) {
      const angle = Math.fround(pos * invFreq[i]!);
      cos[i] = Math.fround(Math.cos(angle));
      sin[i] = Math.fround(Math.sin(angle));
    }
    for (let h = 0; h < heads; h++) {
      const base = t * width + h * headDim;
      for (let i = 0; i < half; i++) {
        const a = x[base + i]!;
        const b = x[base + i + half]!;
        x[base + i] = a * cos[i]! - b * sin[i]!;
        x[base + i + half] = b * cos[i]! + a * sin[i]!;
      }
    }
  });
}

/** Where attention reads keys and values: [length ≥ last position + 1, Hkv·D] each. */
export interface KvView {
  keys: Float32Array;
  values: Float32Array;
}

/**
 * Causal grouped-query attention with scale 1/√D.
 * q [n, Hq·D] for the tokens at `positions`; keys/values [≥ max(pos)+1, Hkv·D] already hold these
 * tokens' K/V. Query head h reads KV head floor(h / (Hq/Hkv)); token at position p sees keys 0..p.
 * Returns [n, Hq·D]. Softmax in doubles with the max subtracted.
 */
export function attention(
  q: Float32Array, kv: KvView, positions: readonly number[], numHeads: number, numKvHeads: number, headDim: number,
): Float32Array {
  const D = headDim;
  const qWidth = numHeads * D;
  const kvWidth = numKvHeads * D;
  const group = numHeads / numKvHeads;
  if (!Number.isInteger(group)) throw new RangeError(`attention: ${numHeads} heads is not a multiple of ${numKvHeads} KV heads`);
  const scale = 1 / Math.sqrt(D);
  const out = new Float32Array(positions.length * qWidth);
  const maxPos = positions.reduce((m, p) => Math.max(m, p), 0);
  const scores = new Float64Array(maxPos + 1);
  const acc = new Float64Array(D);
  positions.forEach((pos, t) => {
    if ((pos + 1) * kvWidth > kv.keys.length || (pos + 1) * kvWidth > kv.values.length) {
      throw new RangeError(`attention: position ${pos} is past the KV cache`);
    }
    for (let h = 0; h < numHeads; h++) {
      const qBase = t * qWidth + h * D;
      const kvHead = Math.floor(h / group) * D;
      let max = -Infinity;
      for (let j = 0; j <= pos; j++) {
        const kBase = j * kvWidth + kvHead;
        let dot = 0;
        for (let d = 0; d < D; d++) dot += q[qBase + d]! * kv.keys[kBase + d]!;
        scores[j] = dot * scale;
        if (scores[j]! > max) max = scores[j]!;
      }
      let sum = 0;
      for (let j = 0; j <= pos; j++) {
        scores[j] = Math.exp(scores[j]! - max);
        sum += scores[j]!;
      }
      acc.fill(0);
      for (let j = 0; j <= pos; j++) {
        const w = scores[j]! / sum;
        const vBase = j * kvWidth + kvHead;
        for (let d = 0; d < D; d++) acc[d] += w * kv.values[vBase + d]!;
      }
      for (let d = 0; d < D; d++) out[qBase + d] = acc[d]!;
    }
  });
  return out;
}

/** SiLU(gate) · up. gateUp [n, 2·I] (each row: gate I values, then up I values) -> [n, I]. */
export function siluMul(gateUp: Float32Array, intermediate: number): Float32Array {
  const I = intermediate;
  const n = gateUp.length / (2 * I);
  if (!Number.isInteger(n)) throw new RangeError(`siluMul: ${gateUp.length} values is not a whole number of rows of 2×${I}`);
  const out = new Float32Array(n * I);
  for (let t = 0; t < n; t++) {
    for (let i = 0; i < I; i++) {
      const g = gateUp[t * 2 * I + i]!;
      const u = gateUp[t * 2 * I + I + i]!;
      out[t * I + i] = (g / (1 + Math.exp(-g))) * u;
    }
  }
  return out;
}

/** x += y, elementwise, in place (the residual connection). */
export function addInPlace(x: Float32Array, y: Float32Array): void {
  if (x.length !== y.length) throw new RangeError(`addInPlace: lengths ${x.length} and ${y.length} differ`);
  for (let i = 0; i < x.length; i++) x[i] = x[i]! + y[i]!;
}

/** Columns [col0, col1) of every row of x [n, width] -> [n, col1 − col0] (splitting the stacked q|k|v). */
export function sliceColumns(x: Float32Array, width: number, col0: number, col1: number): Float32Array {
  const n = x.length / width;
  const w = col1 - col0;
  const out = new Float32Array(n * w);
  for (let t = 0; t < n; t++) out.set(x.subarray(t * width + col0, t * width + col1), t * w);
  return out;
}
