// Gated DeltaNet's own operations (the equations of src/model/reference/gated-delta.ts, HF
// Qwen3_5GatedDeltaNet with transformers' torch fallbacks), on f32 buffers JS places. The reference sums
// in f64 and rounds to f32 where it stores; so do these: every lane runs the reference's own sequence of
// f64 operations (SIMD only across independent channels/columns, f32x4 widened to two f64x2), so results
// equal the reference's up to the last bit of Math.exp (this exp is AssemblyScript's, the reference's V8's).
//
// Shapes: n tokens; n_k key heads of d_k, n_v value heads of d_v; C = 2·n_k·d_k + n_v·d_v conv channels
// (q | k | v); K conv taps. Conv state [K−1, C] oldest first; delta state [n_v, d_k, d_v] per layer.

/** Lanes 0, 1 of f32x4 `v` as f64x2. */
@inline function lo2(v: v128): v128 {
  return f64x2.promote_low_f32x4(v);
}

/** Lanes 2, 3 of f32x4 `v` as f64x2. */
@inline function hi2(v: v128): v128 {
  return f64x2.promote_low_f32x4(i32x4.shuffle(v, v, 2, 3, 0, 1));
}

/** Two f64x2 rounded to one f32x4 (lo's lanes first), as Math.fround rounds each. */
@inline function round4(lo: v128, hi: v128): v128 {
  return i32x4.shuffle(f32x4.demote_f64x2_zero(lo), f32x4.demote_f64x2_zero(hi), 0, 1, 4, 5);
}

@inline function silu(x: f64): f64 {
  return x / (1 + Math.exp(-x));
}

/** Row r of u = state ++ x: state rows first (r < K−1), then x's rows (stride xStride floats). */
@inline function convRow(r: i32, state: usize, x: usize, xStride: i32, C: i32, K: i32): usize {
  return r < K - 1 ? state + ((<usize>r * <usize>C) << 2) : x + ((<usize>(r - (K - 1)) * <usize>xStride) << 2);
}

/**
 * Causal depthwise conv1d then SiLU over n tokens, continuing from `state` (HF causal_conv1d_update):
 * x: the first C columns of rows of xStride floats (the q|k|v part of in_proj_qkvz's output); wT [K, C]
 * the taps transposed (tap j of channel c at j·C + c); y [n, C] = silu(Σ_j wT[j][c] · u[t + j][c]) with
 * the sum in f64, j ascending, rounded to f32 before the SiLU. state ← the last K−1 rows of u.
 */
export function convSilu(x: usize, xStride: i32, n: i32, wT: usize, state: usize, C: i32, K: i32, y: usize): void {
  for (let t = 0; t < n; t++) {
    const yRow = y + ((<usize>t * <usize>C) << 2);
    let c = 0;
    for (; c + 4 <= C; c += 4) {
      const o = <usize>c << 2;
      let lo = f64x2.splat(0), hi = f64x2.splat(0);
      for (let j = 0; j < K; j++) {
        const u = v128.load(convRow(t + j, state, x, xStride, C, K) + o);
        const w = v128.load(wT + ((<usize>j * <usize>C) << 2) + o);
        lo = f64x2.add(lo, f64x2.mul(lo2(w), lo2(u)));
        hi = f64x2.add(hi, f64x2.mul(hi2(w), hi2(u)));
      }
      const r = round4(lo, hi);
      store<f32>(yRow + o, <f32>silu(<f64>f32x4.extract_lane(r, 0)));
      store<f32>(yRow + o + 4, <f32>silu(<f64>f32x4.extract_lane(r, 1)));
      store<f32>(yRow + o + 8, <f32>silu(<f64>f32x4.extract_lane(r, 2)));
      store<f32>(yRow + o + 12, <f32>silu(<f64>f32x4.extract_lane(r, 3)));
    }
    for (; c < C; c++) {
      const o = <usize>c << 2;
      let acc: f64 = 0;
      for (let j = 0; j < K; j++) {
        acc += <f64>load<f32>(wT + ((<usize>j * <usize>C) << 2) + o) * <f64>load<f32>(convRow(t + j, state, x, xStride, C, K) + o);
      }
      store<f32>(yRow + o, <f32>silu(<f64><f32>acc));
    }
  }
  // new state row i = u row n + i: an old state row (a later one, so copying in ascending order is safe) or an input row
  const rowBytes = <usize>C << 2;
  for (let i = 0; i < K - 1; i++) memory.copy(state + <usize>i * rowBytes, convRow(n + i, state, x, xStride, C, K), rowBytes);
}

/**
 * The delta rule's gates per token and value head from ba [n, 2·n_v] (b: β logits, then a): β = σ(b),
 * g = A · softplus(a + dt_bias) (torch's softplus: linear above 20), each rounded to f32 where HF's
 * f32 tensors hold it. A [n_v] = −exp(A_log), dtBias [n_v]; g, beta [n, n_v].
 */
export function deltaGates(ba: usize, A: usize, dtBias: usize, n: i32, nv: i32, g: usize, beta: usize): void {
  for (let t = 0; t < n; t++) {
    const row = ba + ((<usize>(t * 2 * nv)) << 2), out = (<usize>(t * nv)) << 2;
    for (let j = 0; j < nv; j++) {
      const o = <usize>j << 2;
      store<f32>(beta + out + o, <f32>(1 / (1 + Math.exp(-<f64>load<f32>(row + o)))));
      const x = <f64>(load<f32>(row + ((<usize>(nv + j)) << 2)) + load<f32>(dtBias + o));
      const sp = <f64><f32>(x > 20 ? x : Math.log1p(Math.exp(x)));
      store<f32>(g + out + o, <f32>(<f64>load<f32>(A + o) * sp));
    }
  }
}

/**
 * In place, each of `heads` vectors of `dim` floats per row (rows of `stride` floats, n rows) times
 * scale / √(Σx² + 1e-6) (HF l2norm with FLA's eps; scale 1/√d_k for queries, 1 for keys).
 */
export function l2normHeads(x: usize, stride: i32, n: i32, heads: i32, dim: i32, scale: f64): void {
  for (let t = 0; t < n; t++) {
    for (let h = 0; h < heads; h++) {
      const p = x + ((<usize>(t * stride + h * dim)) << 2);
      let sumSq: f64 = 0;
      for (let i = 0; i < dim; i++) {
        const v = <f64>load<f32>(p + (<usize>i << 2));
        sumSq += v * v;
      }
      const inv = scale / Math.sqrt(sumSq + 1e-6);
      for (let i = 0; i < dim; i++) {
        const o = p + (<usize>i << 2);
        store<f32>(o, <f32>(<f64>load<f32>(o) * inv));
      }
    }
  }
}

/**
 * The gated delta rule one token at a time (HF torch_recurrent_gated_delta_rule), continuing from the
 * delta state S [n_v, d_k, d_v] it updates in place. conv [n, C]: q̂ | k̂ | v per token (q̂, k̂ already
 * L2-normalised); g, beta [n, n_v]; out [n, n_v·d_v]. Value head j reads key head j / (n_v / n_k)
 * (tiled = 0, HF) or j mod n_k (tiled = 1, llama.cpp's GGUFs). Per head:
 *   S ← e^g · S;  mem = Sᵀk;  δ = (v − mem) · β;  S ← S + k δᵀ;  o = Sᵀq
 * every stored value rounded to f32 as the reference's f32 state rounds it. Four columns of S at a time
 * run both passes over their rows (the sums over d_k stay in row order, one f64 accumulator a column).
 * Value heads [j0, j1) only: each head's state and output are its own, so the thread pool splits the
 * heads and any split gives the same bits.
 */
export function gatedDeltaRule(conv: usize, C: i32, g: usize, beta: usize, S: usize, out: usize, n: i32, nk: i32, nv: i32, dk: i32, dv: i32, tiled: i32, j0: i32, j1: i32): void {
  const group = nv / nk;
  const rowBytes = <usize>dv << 2;
  for (let t = 0; t < n; t++) {
    const row = conv + ((<usize>(t * C)) << 2);
    for (let j = j0; j < j1; j++) {
      const kh = tiled ? j % nk : j / group;
      const q = row + ((<usize>(kh * dk)) << 2);
      const k = row + ((<usize>(nk * dk + kh * dk)) << 2);
      const v = row + ((<usize>(2 * nk * dk + j * dv)) << 2);
      const s0 = S + ((<usize>j * <usize>dk * <usize>dv) << 2);
      const o0 = out + ((<usize>((t * nv + j) * dv)) << 2);
      const decay = Math.exp(<f64>load<f32>(g + ((<usize>(t * nv + j)) << 2)));
      const b = <f64>load<f32>(beta + ((<usize>(t * nv + j)) << 2));
      const decay2 = f64x2.splat(decay), b2 = f64x2.splat(b);
      let c = 0;
      for (; c + 4 <= dv; c += 4) {
        const col = <usize>c << 2;
        let memLo = f64x2.splat(0), memHi = f64x2.splat(0);
        for (let i = 0; i < dk; i++) {
          const p = s0 + <usize>i * rowBytes + col;
          const s = round4(f64x2.mul(lo2(v128.load(p)), decay2), f64x2.mul(hi2(v128.load(p)), decay2));
          v128.store(p, s);
          const ki = f64x2.splat(<f64>load<f32>(k + (<usize>i << 2)));
          memLo = f64x2.add(memLo, f64x2.mul(lo2(s), ki));
          memHi = f64x2.add(memHi, f64x2.mul(hi2(s), ki));
        }
        const mem = round4(memLo, memHi), vv = v128.load(v + col);
        const d = round4(f64x2.mul(f64x2.sub(lo2(vv), lo2(mem)), b2), f64x2.mul(f64x2.sub(hi2(vv), hi2(mem)), b2));
        const dLo = lo2(d), dHi = hi2(d);
        let oLo = f64x2.splat(0), oHi = f64x2.splat(0);
        for (let i = 0; i < dk; i++) {
          const p = s0 + <usize>i * rowBytes + col;
          const ki = f64x2.splat(<f64>load<f32>(k + (<usize>i << 2)));
          const s = round4(f64x2.add(lo2(v128.load(p)), f64x2.mul(ki, dLo)), f64x2.add(hi2(v128.load(p)), f64x2.mul(ki, dHi)));
          v128.store(p, s);
          const qi = f64x2.splat(<f64>load<f32>(q + (<usize>i << 2)));
          oLo = f64x2.add(oLo, f64x2.mul(lo2(s), qi));
          oHi = f64x2.add(oHi, f64x2.mul(hi2(s), qi));
        }
        v128.store(o0 + col, round4(oLo, oHi));
      }
      for (; c < dv; c++) {
        const col = <usize>c << 2;
        let mem: f64 = 0;
        for (let i = 0; i < dk; i++) {
          const p = s0 + <usize>i * rowBytes + col;
          const s = <f32>(<f64>load<f32>(p) * decay);
          store<f32>(p, s);
          mem += <f64>s * <f64>load<f32>(k + (<usize>i << 2));
        }
        const d = <f64><f32>((<f64>load<f32>(v + col) - <f64><f32>mem) * b);
        let o: f64 = 0;
        for (let i = 0; i < dk; i++) {
          const p = s0 + <usize>i * rowBytes + col;
          const s = <f32>(<f64>load<f32>(p) + <f64>load<f32>(k + (<usize>i << 2)) * d);
          store<f32>(p, s);
          o += <f64>s * <f64>load<f32>(q + (<usize>i << 2));
        }
        store<f32>(o0 + col, <f32>o);
      }
    }
  }
}

/**
 * The layer's output norm (HF Qwen3_5RMSNormGated), per value head of dv: y = o / √(mean(o²) + eps) ·
 * w · silu(z), in f64, rounded once. o, y [n, n_v·d_v]; z: n rows of zStride floats (its first n_v·d_v
 * columns); w [d_v] (a plain weight, not 1 + w).
 */
export function gatedRmsNorm(o: usize, z: usize, zStride: i32, w: usize, y: usize, n: i32, nv: i32, dv: i32, eps: f64): void {
  for (let t = 0; t < n; t++) {
    for (let j = 0; j < nv; j++) {
      const at = (<usize>((t * nv + j) * dv)) << 2;
      const zp = z + ((<usize>(t * zStride + j * dv)) << 2);
      let sumSq: f64 = 0;
      for (let c = 0; c < dv; c++) {
        const v = <f64>load<f32>(o + at + (<usize>c << 2));
        sumSq += v * v;
      }
      const inv = 1 / Math.sqrt(sumSq / <f64>dv + eps);
      for (let c = 0; c < dv; c++) {
        const cc = <usize>c << 2;
        store<f32>(y + at + cc, <f32>(<f64>load<f32>(o + at + cc) * inv * <f64>load<f32>(w + cc) * silu(<f64>load<f32>(zp + cc))));
      }
    }
  }
}

/** x ← x · σ(gate) over count f32 (gated attention's output gate), in f64, rounded once. */
export function sigmoidGate(x: usize, gate: usize, count: i32): void {
  for (let i = 0; i < count; i++) {
    const o = <usize>i << 2;
    store<f32>(x + o, <f32>(<f64>load<f32>(x + o) * (1 / (1 + Math.exp(-<f64>load<f32>(gate + o))))));
  }
}
