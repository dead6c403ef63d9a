// The per-token operations around the linears, each the reference's equation (src/model/reference/ops.ts):
// RMSNorm and RoPE compute in f64 exactly as the reference does (same order, one rounding to f32), SiLU·mul
// too; attention reads an f16 K/V cache, dots in f32x4 and does the softmax in f64 (q·k and Σ p·v fused
// multiply-adds in the relaxed-SIMD build: ./linear.ts madd).
import { f32ToHalf, half4, halfToF32 } from './half';
import { dot, madd } from './linear';

/** y [rows, width] = x / sqrt(mean(x²) + eps) · w, sums in f64 in index order. */
export function rmsnorm(x: usize, w: usize, y: usize, rows: i32, width: i32, eps: f64): void {
  for (let r = 0; r < rows; r++) {
    const base = <usize>r * <usize>width << 2;
    let sum: f64 = 0;
    for (let i = 0; i < width; i++) {
      const v = <f64>load<f32>(x + base + (<usize>i << 2));
      sum += v * v;
    }
    const inv = 1 / Math.sqrt(sum / <f64>width + eps);
    for (let i = 0; i < width; i++) {
      const o = <usize>i << 2;
      store<f32>(y + base + o, <f32>(<f64>load<f32>(x + base + o) * inv * <f64>load<f32>(w + o)));
    }
  }
}

/**
 * NeoX RoPE in place on x [n, heads·D], on the first rotaryDim dims of each head. cs [n, R/2, 2]: the
 * f32 (cos, sin) of each token's angles, from JS (as the reference rounds them).
 */
export function rope(x: usize, cs: usize, n: i32, heads: i32, D: i32, R: i32): void {
  const half = R >> 1;
  for (let t = 0; t < n; t++) {
    const c = cs + (<usize>t * <usize>half << 3);
    for (let h = 0; h < heads; h++) {
      const base = x + ((<usize>(t * heads + h) * <usize>D) << 2);
      for (let i = 0; i < half; i++) {
        const cos = <f64>load<f32>(c + (<usize>i << 3)), sin = <f64>load<f32>(c + (<usize>i << 3) + 4);
        const pa = base + (<usize>i << 2), pb = base + (<usize>(i + half) << 2);
        const a = <f64>load<f32>(pa), b = <f64>load<f32>(pb);
        store<f32>(pa, <f32>(a * cos - b * sin));
        store<f32>(pb, <f32>(b * cos + a * sin));
      }
    }
  }
}

/** out [n, I] = silu(gate) · up for gu [n, 2I] (gate I values, then up I values per row), in f64. */
export function siluMul(gu: usize, out: usize, n: i32, I: i32): void {
  for (let t = 0; t < n; t++) {
    const g0 = gu + (<usize>t * <usize>(2 * I) << 2), o0 = out + (<usize>t * <usize>I << 2);
    for (let i = 0; i < I; i++) {
      const g = <f64>load<f32>(g0 + (<usize>i << 2)), u = <f64>load<f32>(g0 + (<usize>(I + i) << 2));
      store<f32>(o0 + (<usize>i << 2), <f32>((g / (1 + Math.exp(-g))) * u));
    }
  }
}

/** count f32 values at src stored as f16 bits (round to nearest even) at dst. */
export function toHalf(src: usize, dst: usize, count: i32): void {
  for (let i = 0; i < count; i++) store<u16>(dst + (<usize>i << 1), <u16>f32ToHalf(load<f32>(src + (<usize>i << 2))));
}

/** count f16 values at src as f32 at dst. */
export function fromHalf(src: usize, dst: usize, count: i32): void {
  let i = 0;
  for (; i + 4 <= count; i += 4) v128.store(dst + (<usize>i << 2), half4(src + (<usize>i << 1)));
  for (; i < count; i++) store<f32>(dst + (<usize>i << 2), halfToF32(load<u16>(src + (<usize>i << 1))));
}

/**
 * Causal GQA over an f16 cache, scale 1/√D, for the KV heads [g0, g1) (the thread pool splits them; each
 * head's result is the same whatever the split). q [n, Hq·D] for tokens at positions pos0 + t; keys,
 * values f16 [≥ pos0 + n, kvWidth]; out [n, Hq·D]. kbuf: D f32 scratch; scores: group·(pos0 + n) f64.
 * Query head h reads KV head h / group (group = Hq / Hkv); token t sees keys 0 ..= pos0 + t. Each key is
 * decoded once for its whole group of query heads.
 */
export function attention(q: usize, keys: usize, values: usize, out: usize, n: i32, pos0: i32, Hq: i32, Hkv: i32, D: i32, kbuf: usize, scores: usize, g0: i32, g1: i32): void {
  const group = Hq / Hkv;
  const kvWidth = Hkv * D;
  const scale: f64 = 1 / Math.sqrt(<f64>D);
  for (let t = 0; t < n; t++) {
    const pos = pos0 + t;
    const row: usize = <usize>(pos + 1) << 3;   // bytes of one query head's scores
    for (let g = g0; g < g1; g++) {
      const head = g * D;
      for (let j = 0; j <= pos; j++) {
        fromHalf(keys + ((<usize>(j * kvWidth + head)) << 1), kbuf, D);
        for (let i = 0; i < group; i++) {
          const qp = q + ((<usize>(t * Hq + g * group + i) * <usize>D) << 2);
          store<f64>(scores + <usize>i * row + (<usize>j << 3), <f64>dot(qp, kbuf, D) * scale);
        }
      }
      for (let i = 0; i < group; i++) {
        const sc = scores + <usize>i * row;
        let max: f64 = -Infinity;
        for (let j = 0; j <= pos; j++) {
          const s = load<f64>(sc + (<usize>j << 3));
          if (s > max) max = s;
        }
        let sum: f64 = 0;
        for (let j = 0; j <= pos; j++) {
          const e = Math.exp(load<f64>(sc + (<usize>j << 3)) - max);
          store<f64>(sc + (<usize>j << 3), e);
          sum += e;
        }
        const op = out + ((<usize>(t * Hq + g * group + i) * <usize>D) << 2);
        memory.fill(op, 0, <usize>D << 2);
        for (let j = 0; j <= pos; j++) {
          const wv = f32x4.splat(<f32>(load<f64>(sc + (<usize>j << 3)) / sum));
          const vp = values + ((<usize>(j * kvWidth + head)) << 1);
          let d = 0;
          for (; d + 4 <= D; d += 4) {
            const o = op + (<usize>d << 2);
            v128.store(o, madd(wv, half4(vp + (<usize>d << 1)), v128.load(o)));
          }
          const w1 = f32x4.extract_lane(wv, 0);
          for (; d < D; d++) {
            const o = op + (<usize>d << 2);
            store<f32>(o, load<f32>(o) + w1 * halfToF32(load<u16>(vp + (<usize>d << 1))));
          }
        }
      }
    }
  }
}

/** x += y over count f32 (the residual connection; f32 adds, as the reference rounds them). */
export function addInPlace(x: usize, y: usize, count: i32): void {
  let i = 0;
  for (; i + 4 <= count; i += 4) {
    const o = <usize>i << 2;
    v128.store(x + o, f32x4.add(v128.load(x + o), v128.load(y + o)));
  }
  for (; i < count; i++) {
    const o = <usize>i << 2;
    store<f32>(x + o, load<f32>(x + o) + load<f32>(y + o));
  }
}
