// Gated DeltaNet's own operations on the CPU (HF Qwen3_5GatedDeltaNet with transformers' torch fallbacks:
// torch_causal_conv1d_update, l2norm, torch_recurrent_gated_delta_rule, torch_chunk_gated_delta_rule,
// Qwen3_5RMSNormGated). The oracle for the WGSL kernels. Sums are accumulated in JS doubles and rounded
// to f32 once when stored, as in ./ops.ts; the recurrent state is f32 (Float32Array) between tokens.
//
// Shapes: n tokens; n_k key heads of d_k, n_v value heads of d_v (n_v a multiple of n_k, r = n_v / n_k);
// C = 2·n_k·d_k + n_v·d_v conv channels (q | k | v); K conv taps. The delta state is [n_v, d_k, d_v]:
// S[j][i][c] at (j·d_k + i)·d_v + c.

/** The shape of one Gated DeltaNet layer. */
export interface DeltaDims {
  numKeyHeads: number;         // n_k
  numValueHeads: number;       // n_v
  keyDim: number;              // d_k
  valueDim: number;            // d_v
  convKernel: number;          // K
  /** Which key head value head j reads: grouped j / r (HF), tiled j mod n_k (llama.cpp's Qwen3.5 GGUFs). */
  valueHeads: 'grouped' | 'tiled';
}

/** q | k | v channels of the causal conv: C = 2·n_k·d_k + n_v·d_v. */
export function convChannels(d: DeltaDims): number {
  return 2 * d.numKeyHeads * d.keyDim + d.numValueHeads * d.valueDim;
}

/** f32 values in one layer's recurrent state: conv [(K−1)·C] + delta [n_v·d_k·d_v]. */
export function stateFloats(d: DeltaDims): { conv: number; delta: number } {
  return { conv: (d.convKernel - 1) * convChannels(d), delta: d.numValueHeads * d.keyDim * d.valueDim };
}

/** The key head value head `j` reads. */
export function keyHeadOf(d: DeltaDims, j: number): number {
  return d.valueHeads === 'tiled' ? j % d.numKeyHeads : Math.floor(j / (d.numValueHeads / d.numKeyHeads));
}

export const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));
export const silu = (x: number): number => x / (1 + Math.exp(-x));
/** torch's F.softplus (beta 1, threshold 20: linear above it). */
export const softplus = (x: number): number => (x > 20 ? x : Math.log1p(Math.exp(x)));

/**
 * Causal depthwise conv1d over n tokens, then SiLU, continuing from `state` (HF causal_conv1d_update):
 *   x [n, C] this call's inputs; weight [C, K]; state [K−1, C] the K−1 inputs before them, oldest first
 *   (zeros at position 0). With u = state ++ x, y[t][c] = silu(Σ_j weight[c][j] · u[t + j][c]), j
 *   ascending. state ← the last K−1 rows of u. Returns y [n, C].
 */
export function causalConv1dSilu(x: Float32Array, n: number, weight: Float32Array, state: Float32Array, C: number, K: number): Float32Array {
  if (x.length !== n * C || weight.length !== C * K || state.length !== (K - 1) * C) {
    throw new RangeError(`causalConv1dSilu: x ${x.length}, weight ${weight.length}, state ${state.length} do not fit n ${n}, C ${C}, K ${K}`);
  }
  const u = new Float32Array((K - 1 + n) * C);             // [K−1+n, C]
  u.set(state);
  u.set(x, (K - 1) * C);
  const y = new Float32Array(n * C);
  for (let t = 0; t < n; t++) {
    for (let c = 0; c < C; c++) {
      let acc = 0;
      for (let j = 0; j < K; j++) acc += weight[c * K + j]! * u[(t + j) * C + c]!;
      y[t * C + c] = silu(Math.fround(acc));
    }
  }
  state.set(u.subarray(n * C));
  return y;
}

/**
 * Each head's vector (heads × dim per token, n tokens) divided by √(Σx² + 1e-6) (HF l2norm, FLA's eps),
 * times `scale` (1/√d_k for queries, 1 for keys). Returns a new array.
 */
export function l2NormHeads(x: Float32Array, dim: number, scale: number): Float32Array {
  const out = new Float32Array(x.length);
  for (let base = 0; base < x.length; base += dim) {
    let sumSq = 0;
    for (let i = 0; i < dim; i++) sumSq += x[base + i]! * x[base + i]!;
    const inv = scale / Math.sqrt(sumSq + 1e-6);
    for (let i = 0; i < dim; i++) out[base + i] = x[base + i]! * inv;
  }
  return out;
}

/** Per-token, per-value-head inputs of the delta rule after the conv. */
export interface DeltaInputs {
  q: Float32Array;             // [n, n_k·d_k] L2-normalised, · 1/√d_k
  k: Float32Array;             // [n, n_k·d_k] L2-normalised
  v: Float32Array;             // [n, n_v·d_v]
  g: Float32Array;             // [n, n_v] log decay (≤ 0)
  beta: Float32Array;          // [n, n_v] write strength in (0, 1)
}

/**
 * The delta rule's inputs from a layer's conv output and its b|a projection (HF Qwen3_5GatedDeltaNet):
 * conv [n, C] = q | k | v after the conv and SiLU; ba [n, 2·n_v] = b (β logits) then a (decay inputs);
 * A [n_v] = −exp(A_log); dtBias [n_v]. q̂ = l2norm(q)/√d_k, k̂ = l2norm(k), β = σ(b),
 * g = A · softplus(a + dt_bias) (each rounded to f32 where HF's f32 tensors hold it).
 */
export function deltaInputs(conv: Float32Array, ba: Float32Array, A: Float32Array, dtBias: Float32Array, n: number, d: DeltaDims): DeltaInputs {
  const { numKeyHeads: nk, numValueHeads: nv, keyDim: dk } = d;
  const C = convChannels(d), Kd = nk * dk;
  const g = new Float32Array(n * nv);
  const beta = new Float32Array(n * nv);
  for (let t = 0; t < n; t++) {
    for (let j = 0; j < nv; j++) {
      beta[t * nv + j] = sigmoid(ba[t * 2 * nv + j]!);
      g[t * nv + j] = A[j]! * Math.fround(softplus(Math.fround(ba[t * 2 * nv + nv + j]! + dtBias[j]!)));
    }
  }
  const cols = (a: number, b: number): Float32Array => {
    const out = new Float32Array(n * (b - a));
    for (let t = 0; t < n; t++) out.set(conv.subarray(t * C + a, t * C + b), t * (b - a));
    return out;
  };
  return { q: l2NormHeads(cols(0, Kd), dk, 1 / Math.sqrt(dk)), k: l2NormHeads(cols(Kd, 2 * Kd), dk, 1), v: cols(2 * Kd, C), g, beta };
}

/**
 * The gated delta rule, one token at a time (HF torch_recurrent_gated_delta_rule), continuing from
 * `state` [n_v, d_k, d_v], which it updates in place. For value head j and its key head kh:
 *   S ← e^g · S;  mem = Sᵀk;  δ = (v − mem) · β;  S ← S + k δᵀ;  o = Sᵀq.
 * Each stored value is rounded to f32 (the state is f32, as on the GPU). Returns o [n, n_v·d_v].
 */
export function gatedDeltaRecurrent(inp: DeltaInputs, n: number, d: DeltaDims, state: Float32Array): Float32Array {
  const { numKeyHeads: nk, numValueHeads: nv, keyDim: dk, valueDim: dv } = d;
  const out = new Float32Array(n * nv * dv);
  const delta = new Float64Array(dv);
  for (let t = 0; t < n; t++) {
    for (let j = 0; j < nv; j++) {
      const kh = keyHeadOf(d, j);
      const qo = (t * nk + kh) * dk, vo = (t * nv + j) * dv, so = j * dk * dv;
      const decay = Math.exp(inp.g[t * nv + j]!);
      const beta = inp.beta[t * nv + j]!;
      for (let i = 0; i < dk * dv; i++) state[so + i] = state[so + i]! * decay;
      for (let c = 0; c < dv; c++) {
        let mem = 0;
        for (let i = 0; i < dk; i++) mem += state[so + i * dv + c]! * inp.k[qo + i]!;
        delta[c] = Math.fround((inp.v[vo + c]! - Math.fround(mem)) * beta);
      }
      for (let i = 0; i < dk; i++) {
        const ki = inp.k[qo + i]!;
        for (let c = 0; c < dv; c++) state[so + i * dv + c] = state[so + i * dv + c]! + ki * delta[c]!;
      }
      for (let c = 0; c < dv; c++) {
        let o = 0;
        for (let i = 0; i < dk; i++) o += state[so + i * dv + c]! * inp.q[qo + i]!;
        out[vo + c] = o;
      }
    }
  }
  return out;
}

/**
 * The same rule in chunks of `chunk` tokens (HF torch_chunk_gated_delta_rule: the WY / UT form, in
 * doubles), continuing from `state` and updating it. Within a chunk, with G the cumulative log decay:
 *   T = (I + strictly-lower(β_i k_i·k_j e^{G_i−G_j}))⁻¹;  U = T(β v);  W = T(β k e^G)
 *   v' = U − W S;  o_i = e^{G_i} q_i S + Σ_{j≤i} (q_i·k_j) e^{G_i−G_j} v'_j
 *   S ← e^{G_last} S + Σ_j e^{G_last−G_j} k_j v'_jᵀ
 * Equal to gatedDeltaRecurrent up to rounding (tests hold it to 1e-5); the engines run the recurrent form
 * so that results do not depend on where a prefill is cut (docs/hybrid-models.md).
 */
export function gatedDeltaChunked(inp: DeltaInputs, n: number, d: DeltaDims, state: Float32Array, chunk = 64): Float32Array {
  const { numKeyHeads: nk, numValueHeads: nv, keyDim: dk, valueDim: dv } = d;
  const out = new Float32Array(n * nv * dv);
  for (let j = 0; j < nv; j++) {
    const kh = keyHeadOf(d, j);
    const S = Float64Array.from(state.subarray(j * dk * dv, (j + 1) * dk * dv));   // [d_k, d_v]
    for (let t0 = 0; t0 < n; t0 += chunk) {
      const L = Math.min(chunk, n - t0);
      const q = (t: number, i: number) => inp.q[((t0 + t) * nk + kh) * dk + i]!;
      const k = (t: number, i: number) => inp.k[((t0 + t) * nk + kh) * dk + i]!;
      const v = (t: number, c: number) => inp.v[((t0 + t) * nv + j) * dv + c]!;
      const beta = (t: number) => inp.beta[(t0 + t) * nv + j]!;
      const G = new Float64Array(L);
      for (let t = 0, acc = 0; t < L; t++) { acc += inp.g[(t0 + t) * nv + j]!; G[t] = acc; }
      const kk = (a: number, b: number) => { let s = 0; for (let i = 0; i < dk; i++) s += k(a, i) * k(b, i); return s; };
      // T: forward substitution on A = −strictly-lower(β_i k_i·k_j e^{G_i−G_j}), row by row, then + I.
      const T = new Float64Array(L * L);
      for (let a = 1; a < L; a++) for (let b = 0; b < a; b++) T[a * L + b] = -beta(a) * kk(a, b) * Math.exp(G[a]! - G[b]!);
      for (let a = 1; a < L; a++) {
        const row = T.slice(a * L, a * L + a);
        for (let b = 0; b < a; b++) {
          let s = 0;
          for (let m = b; m < a; m++) s += row[m]! * T[m * L + b]!;
          T[a * L + b] = row[b]! + s;
        }
      }
      for (let a = 0; a < L; a++) T[a * L + a] = 1;
      // v' = T(βv) − T(βk e^G) S, one row at a time.
      const vNew = new Float64Array(L * dv);
      for (let a = 0; a < L; a++) {
        for (let c = 0; c < dv; c++) {
          let u = 0, w = 0;
          for (let b = 0; b <= a; b++) {
            const tab = T[a * L + b]!;
            if (tab === 0) continue;
            u += tab * beta(b) * v(b, c);
            let ws = 0;
            for (let i = 0; i < dk; i++) ws += k(b, i) * S[i * dv + c]!;
            w += tab * beta(b) * Math.exp(G[b]!) * ws;
          }
          vNew[a * dv + c] = u - w;
        }
      }
      for (let a = 0; a < L; a++) {
        const eg = Math.exp(G[a]!);
        for (let c = 0; c < dv; c++) {
          let o = 0;
          for (let i = 0; i < dk; i++) o += q(a, i) * eg * S[i * dv + c]!;
          for (let b = 0; b <= a; b++) {
            let qk = 0;
            for (let i = 0; i < dk; i++) qk += q(a, i) * k(b, i);
            o += qk * Math.exp(G[a]! - G[b]!) * vNew[b * dv + c]!;
          }
          out[((t0 + a) * nv + j) * dv + c] = o;
        }
      }
      const last = G[L - 1]!;
      for (let i = 0; i < dk; i++) {
        for (let c = 0; c < dv; c++) {
          let s = S[i * dv + c]! * Math.exp(last);
          for (let b = 0; b < L; b++) s += Math.exp(last - G[b]!) * k(b, i) * vNew[b * dv + c]!;
          S[i * dv + c] = s;
        }
      }
    }
    state.set(S, j * dk * dv);
  }
  return out;
}

/**
 * The output norm of a Gated DeltaNet layer (HF Qwen3_5RMSNormGated): per value head,
 * y = o / √(mean(o²) + eps) · weight · silu(z). o, z [n, n_v·d_v]; weight [d_v] (a plain weight, not 1 + w).
 */
export function gatedRmsNorm(o: Float32Array, z: Float32Array, weight: Float32Array, eps: number): Float32Array {
  const dv = weight.length;
  const y = new Float32Array(o.length);
  for (let base = 0; base < o.length; base += dv) {
    let sumSq = 0;
    for (let c = 0; c < dv; c++) sumSq += o[base + c]! * o[base + c]!;
    const inv = 1 / Math.sqrt(sumSq / dv + eps);
    for (let c = 0; c < dv; c++) y[base + c] = o[base + c]! * inv * weight[c]! * silu(z[base + c]!);
  }
  return y;
}
