// The q8_0 KV cache (src/model/kv-quant.ts, llama.cpp's --cache-type-k/v q8_0): per block of 32 values
// of one head, d = max|x| / 127 kept as f16 and q = round(x / d) (half away from zero) as int8; a value
// reads back as q · f16(d) in f32. A head of D values takes ⌈D/32⌉ blocks, the last padded with zeros.
// Quants and scales are kept apart so a block's 32 quants load as two v128: per token row, quants
// [Hkv·nb, 32] int8 and scales [Hkv·nb] f16 bits (nb = ⌈D/32⌉ blocks a head).
import { f32ToHalf, halfToF32 } from './half';
import { dot } from './linear';

/**
 * rows vectors of D f32 at src (one head of one token each, contiguous) quantized to q8_0: quants at
 * qs (rows·nb·32 int8), scales at ds (rows·nb f16). Each block as kv-quant.ts's quantizeQ8_0Block.
 */
export function quantizeQ8_0(src: usize, qs: usize, ds: usize, rows: i32, D: i32): void {
  const nb = (D + 31) >> 5;
  for (let r = 0; r < rows; r++) {
    for (let b = 0; b < nb; b++) {
      const x = src + ((<usize>(r * D + b * 32)) << 2);
      const count = min(32, D - b * 32);
      let amax: f32 = 0;
      for (let i = 0; i < count; i++) amax = max(amax, abs(load<f32>(x + (<usize>i << 2))));
      const d: f32 = amax / 127;
      const id: f32 = d != 0 ? <f32>1 / d : 0;
      const blk = <usize>(r * nb + b);
      const q = qs + (blk << 5);
      memory.fill(q, 0, 32);
      for (let i = 0; i < count; i++) {
        const v = load<f32>(x + (<usize>i << 2)) * id;
        // the reference rounds |v| + 0.5 in f64 (an f32 add could round 0.49999997 + 0.5 up to 1)
        const m = <i32>Math.floor(<f64>abs(v) + 0.5);
        store<i8>(q + <usize>i, <i8>(v < 0 ? -m : m));
      }
      store<u16>(ds + (blk << 1), <u16>f32ToHalf(d));
    }
  }
}

/** One head's D values of q8_0 blocks (quants q, scales d) as f32 at dst. */
@inline function dequantHead(q: usize, d: usize, D: i32, dst: usize): void {
  for (let b = 0; b * 32 < D; b++) {
    const scale = halfToF32(load<u16>(d + (<usize>b << 1)));
    const s4 = f32x4.splat(scale);
    const qb = q + (<usize>b << 5), ob = dst + (<usize>b << 7);
    const count = min(32, D - b * 32);
    let i = 0;
    for (; i + 8 <= count; i += 8) {
      const w = i16x8.extend_low_i8x16_s(v128.load64_zero(qb + <usize>i));
      v128.store(ob + (<usize>i << 2), f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(w)), s4));
      v128.store(ob + (<usize>i << 2) + 16, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(w)), s4));
    }
    for (; i < count; i++) store<f32>(ob + (<usize>i << 2), <f32>load<i8>(qb + <usize>i) * scale);
  }
}

/** rows heads of q8_0 blocks back to f32 [rows, D] (tests and the cache's read()). */
export function dequantQ8_0(qs: usize, ds: usize, rows: i32, D: i32, dst: usize): void {
  const nb = (D + 31) >> 5;
  for (let r = 0; r < rows; r++) dequantHead(qs + ((<usize>(r * nb)) << 5), ds + ((<usize>(r * nb)) << 1), D, dst + ((<usize>(r * D)) << 2));
}

/**
 * Causal GQA over a q8_0 cache, scale 1/√D: the f16 attention of ./ops.ts with each cached head
 * decoded to f32 first (exactly the values the reference's q8_0 cache holds). q [n, Hq·D] for positions
 * pos0 + t; keys/values: quants kq, vq and scales kd, vd for ≥ pos0 + n tokens of Hkv heads; out
 * [n, Hq·D]. kbuf, vbuf: D f32 scratch each; scores: (pos0 + n) f64 scratch. Only the query heads of KV
 * heads [g0, g1) (the thread pool's split; a head's result does not depend on it).
 */
export function attentionQ8_0(q: usize, kq: usize, kd: usize, vq: usize, vd: usize, out: usize, n: i32, pos0: i32, Hq: i32, Hkv: i32, D: i32, kbuf: usize, vbuf: usize, scores: usize, g0: i32, g1: i32): void {
  const group = Hq / Hkv;
  const nb = (D + 31) >> 5;
  const scale: f64 = 1 / Math.sqrt(<f64>D);
  for (let t = 0; t < n; t++) {
    const pos = pos0 + t;
    for (let h = g0 * group; h < g1 * group; h++) {
      const qp = q + ((<usize>(t * Hq + h) * <usize>D) << 2);
      const hk = h / group;
      let mx: f64 = -Infinity;
      for (let j = 0; j <= pos; j++) {
        const blk = <usize>((j * Hkv + hk) * nb);
        dequantHead(kq + (blk << 5), kd + (blk << 1), D, kbuf);
        const s = <f64>dot(qp, kbuf, D) * scale;
        store<f64>(scores + (<usize>j << 3), s);
        if (s > mx) mx = s;
      }
      let sum: f64 = 0;
      for (let j = 0; j <= pos; j++) {
        const e = Math.exp(load<f64>(scores + (<usize>j << 3)) - mx);
        store<f64>(scores + (<usize>j << 3), e);
        sum += e;
      }
      const op = out + ((<usize>(t * Hq + h) * <usize>D) << 2);
      memory.fill(op, 0, <usize>D << 2);
      for (let j = 0; j <= pos; j++) {
        const wv = f32x4.splat(<f32>(load<f64>(scores + (<usize>j << 3)) / sum));
        const blk = <usize>((j * Hkv + hk) * nb);
        dequantHead(vq + (blk << 5), vd + (blk << 1), D, vbuf);
        let d = 0;
        for (; d + 4 <= D; d += 4) {
          const o = op + (<usize>d << 2);
          v128.store(o, f32x4.add(v128.load(o), f32x4.mul(wv, v128.load(vbuf + (<usize>d << 2)))));
        }
        const w1 = f32x4.extract_lane(wv, 0);
        for (; d < D; d++) {
          const o = op + (<usize>d << 2);
          store<f32>(o, load<f32>(o) + w1 * load<f32>(vbuf + (<usize>d << 2)));
        }
      }
    }
  }
}
