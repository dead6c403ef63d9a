// ggml's reference K-quant quantizers (quantize_row_q{4,5,6}_K_ref and their helpers make_qkx2_quants,
// make_qx_quants, nearest_int), one 256-value super-block at a time, every float operation rounded to
// f32 in the C order. Block layouts: GgmlLinear in ../../types.ts.

import { f16BitsToF32, f32ToF16Bits } from '../../tensor-utils.ts';
import { scaleMinK4 } from './ggml-dequant.ts';

const f = Math.fround;
const QK_K = 256;
const GROUP_MAX_EPS = f(1e-15);

/** ggml's nearest_int: round half to even through the f32 addition of 1.5·2^23. */
export function nearestInt(x: number): number {
  return f(x + 12582912) - 12582912;
}

function putHalf(out: Uint8Array, p: number, x: number): void {
  const h = f32ToF16Bits(x);
  out[p] = h & 0xff;
  out[p + 1] = h >> 8;
}

/**
 * make_qkx2_quants: the best (scale, min) for x[0..n) on levels 0..nmax under weights w, trying nstep+1
 * scales around nmax/(max−min). Writes levels to L[lo..lo+n). Returns [scale, −min].
 */
function makeQkx2Quants(n: number, nmax: number, x: Float32Array, xo: number, w: Float32Array, L: Uint8Array, lo: number,
  rmin: number, rdelta: number, nstep: number): [number, number] {
  let min = x[xo]!, max = x[xo]!;
  let sumW = w[0]!;
  let sumX = f(sumW * x[xo]!);
  for (let i = 1; i < n; i++) {
    const v = x[xo + i]!;
    if (v < min) min = v;
    if (v > max) max = v;
    sumW = f(sumW + w[i]!);
    sumX = f(sumX + f(w[i]! * v));
  }
  if (min > 0) min = 0;
  if (max === min) {
    L.fill(0, lo, lo + n);
    return [0, -min];
  }
  let iscale = f(nmax / f(max - min));
  let scale = f(1 / iscale);
  let bestError = 0;
  for (let i = 0; i < n; i++) {
    const l = Math.max(0, Math.min(nmax, nearestInt(f(iscale * f(x[xo + i]! - min)))));
    L[lo + i] = l;
    const diff = f(f(f(scale * l) + min) - x[xo + i]!);
    bestError = f(bestError + f(w[i]! * f(diff * diff)));
  }
  const aux = new Uint8Array(n);
  for (let is = 0; is <= nstep; is++) {
    iscale = f(f(f(rmin + f(rdelta * is)) + nmax) / f(max - min));
    let sumL = 0, sumL2 = 0, sumXL = 0;
    for (let i = 0; i < n; i++) {
      const l = Math.max(0, Math.min(nmax, nearestInt(f(iscale * f(x[xo + i]! - min)))));
      aux[i] = l;
      const wl = f(w[i]! * l);
      sumL = f(sumL + wl);
      sumL2 = f(sumL2 + f(wl * l));
      sumXL = f(sumXL + f(wl * x[xo + i]!));
    }
    const D = f(f(sumW * sumL2) - f(sumL * sumL));
    if (D > 0) {
      let thisScale = f(f(f(sumW * sumXL) - f(sumX * sumL)) / D);
      let thisMin = f(f(f(sumL2 * sumX) - f(sumL * sumXL)) / D);
      if (thisMin > 0) {
        thisMin = 0;
        thisScale = f(sumXL / sumL2);
      }
      let curError = 0;
      for (let i = 0; i < n; i++) {
        const diff = f(f(f(thisScale * aux[i]!) + thisMin) - x[xo + i]!);
        curError = f(curError + f(w[i]! * f(diff * diff)));
      }
      if (curError < bestError) {
        L.set(aux, lo);
        bestError = curError;
        scale = thisScale;
        min = thisMin;
      }
    }
  }
  return [scale, -min];
}

/** make_qx_quants with rmse_type 1 and no weights (what Q6_K's reference uses). Levels (signed + nmax) into L. */
function makeQxQuants(n: number, nmax: number, x: Float32Array, xo: number, L: Int8Array, lo: number): number {
  let max = 0, amax = 0;
  for (let i = 0; i < n; i++) {
    const ax = Math.abs(x[xo + i]!);
    if (ax > amax) { amax = ax; max = x[xo + i]!; }
  }
  if (amax < GROUP_MAX_EPS) {
    L.fill(0, lo, lo + n);
    return 0;
  }
  const level = (iscale: number, v: number) => Math.max(-nmax, Math.min(nmax - 1, nearestInt(f(iscale * v))));
  let iscale = f(-nmax / max);
  let sumlx = 0, suml2 = 0;
  for (let i = 0; i < n; i++) {
    const v = x[xo + i]!;
    const l = level(iscale, v);
    L[lo + i] = l + nmax;
    const w = f(v * v);
    sumlx = f(sumlx + f(f(w * v) * l));
    suml2 = f(suml2 + f(f(w * l) * l));
  }
  let scale = suml2 ? f(sumlx / suml2) : 0;
  let best = f(scale * sumlx);
  for (let is = -9; is <= 9; is++) {
    if (is === 0) continue;
    iscale = f(-f(nmax + f(f(0.1) * is)) / max);
    sumlx = 0;
    suml2 = 0;
    for (let i = 0; i < n; i++) {
      const v = x[xo + i]!;
      const l = level(iscale, v);
      const w = f(v * v);
      sumlx = f(sumlx + f(f(w * v) * l));
      suml2 = f(suml2 + f(f(w * l) * l));
    }
    if (suml2 > 0 && f(sumlx * sumlx) > f(best * suml2)) {
      for (let i = 0; i < n; i++) L[lo + i] = nmax + level(iscale, x[xo + i]!);
      scale = f(sumlx / suml2);
      best = f(scale * sumlx);
    }
  }
  return scale;
}

/** Shared by Q4_K and Q5_K: sub-block scales/mins → 6-bit codes in the 12 scale bytes at p + 4, d and dmin. */
function packScalesMins(scales: Float32Array, mins: Float32Array, out: Uint8Array, p: number): void {
  let maxScale = 0, maxMin = 0;
  for (let j = 0; j < 8; j++) {
    if (scales[j]! > maxScale) maxScale = scales[j]!;
    if (mins[j]! > maxMin) maxMin = mins[j]!;
  }
  const invScale = maxScale > 0 ? f(63 / maxScale) : 0;
  const invMin = maxMin > 0 ? f(63 / maxMin) : 0;
  const s = p + 4;
  for (let j = 0; j < 8; j++) {
    const ls = Math.min(63, nearestInt(f(invScale * scales[j]!)) & 0xff);
    const lm = Math.min(63, nearestInt(f(invMin * mins[j]!)) & 0xff);
    if (j < 4) {
      out[s + j] = ls;
      out[s + j + 4] = lm;
    } else {
      out[s + j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
      out[s + j - 4] |= (ls >> 4) << 6;
      out[s + j] |= (lm >> 4) << 6;
    }
  }
  putHalf(out, p, f(maxScale / 63));
  putHalf(out, p + 2, f(maxMin / 63));
}

/** Q4_K / Q5_K levels: best fit per sub-block, then requantized against the stored 6-bit scales. */
function kLevels(x: Float32Array, xo: number, out: Uint8Array, p: number, nmax: number, rmin: number, nstep: number): Uint8Array {
  const L = new Uint8Array(QK_K);
  const scales = new Float32Array(8), mins = new Float32Array(8), weights = new Float32Array(32);
  for (let j = 0; j < 8; j++) {
    let sumX2 = 0;
    for (let l = 0; l < 32; l++) sumX2 = f(sumX2 + f(x[xo + 32 * j + l]! * x[xo + 32 * j + l]!));
    const avX = f(Math.sqrt(f(sumX2 / 32)));
    for (let l = 0; l < 32; l++) weights[l] = f(avX + Math.abs(x[xo + 32 * j + l]!));
    const [scale, min] = makeQkx2Quants(32, nmax, x, xo + 32 * j, weights, L, 32 * j, rmin, f(0.1), nstep);
    scales[j] = scale;
    mins[j] = min;
  }
  packScalesMins(scales, mins, out, p);
  const d = f16BitsToF32(out[p]! | (out[p + 1]! << 8)), dmin = f16BitsToF32(out[p + 2]! | (out[p + 3]! << 8));
  for (let j = 0; j < 8; j++) {
    const [sc, m] = scaleMinK4(out, p + 4, j);
    const dj = f(d * sc);
    if (!dj) continue;
    const dm = f(dmin * m);
    for (let i = 0; i < 32; i++) {
      L[32 * j + i] = Math.max(0, Math.min(nmax, nearestInt(f(f(x[xo + 32 * j + i]! + dm) / dj))));
    }
  }
  return L;
}

/** quantize_row_q4_K_ref for the 256 values at x[xo..]: 144 bytes at out[p..]. */
export function quantizeBlockQ4K(x: Float32Array, xo: number, out: Uint8Array, p: number): void {
  const L = kLevels(x, xo, out, p, 15, -1, 20);
  for (let pair = 0; pair < 4; pair++) {
    for (let l = 0; l < 32; l++) out[p + 16 + 32 * pair + l] = L[64 * pair + l]! | (L[64 * pair + 32 + l]! << 4);
  }
}

/** quantize_row_q5_K_ref: 176 bytes. */
export function quantizeBlockQ5K(x: Float32Array, xo: number, out: Uint8Array, p: number): void {
  const L = kLevels(x, xo, out, p, 31, -0.5, 15);
  const qh = p + 16;
  out.fill(0, qh, qh + 32);
  for (let pair = 0; pair < 4; pair++) {
    const m1 = 1 << (2 * pair), m2 = 2 << (2 * pair);
    for (let j = 0; j < 32; j++) {
      let l1 = L[64 * pair + j]!, l2 = L[64 * pair + 32 + j]!;
      if (l1 > 15) { l1 -= 16; out[qh + j] |= m1; }
      if (l2 > 15) { l2 -= 16; out[qh + j] |= m2; }
      out[p + 48 + 32 * pair + j] = l1 | (l2 << 4);
    }
  }
}

/** quantize_row_q6_K_ref: 210 bytes. */
export function quantizeBlockQ6K(x: Float32Array, xo: number, out: Uint8Array, p: number): void {
  const L = new Int8Array(QK_K);
  const scales = new Float32Array(16);
  let maxScale = 0, maxAbsScale = 0;
  for (let ib = 0; ib < 16; ib++) {
    const scale = makeQxQuants(16, 32, x, xo + 16 * ib, L, 16 * ib);
    scales[ib] = scale;
    if (Math.abs(scale) > maxAbsScale) { maxAbsScale = Math.abs(scale); maxScale = scale; }
  }
  out.fill(0, p, p + 210);
  if (maxAbsScale < GROUP_MAX_EPS) return;
  const iscale = f(-128 / maxScale);
  putHalf(out, p + 208, f(1 / iscale));
  const d = f16BitsToF32(out[p + 208]! | (out[p + 209]! << 8));
  for (let ib = 0; ib < 16; ib++) out[p + 192 + ib] = Math.min(127, nearestInt(f(iscale * scales[ib]!))) & 0xff;
  for (let j = 0; j < 16; j++) {
    const dj = f(d * ((out[p + 192 + j]! << 24) >> 24));
    if (!dj) continue;
    for (let i = 0; i < 16; i++) L[16 * j + i] = Math.max(-32, Math.min(31, nearestInt(f(x[xo + 16 * j + i]! / dj)))) + 32;
  }
  for (let h = 0; h < 2; h++) {
    const ql = p + 64 * h, qh = p + 128 + 32 * h, base = 128 * h;
    for (let l = 0; l < 32; l++) {
      const q1 = L[base + l]! & 0xf, q2 = L[base + l + 32]! & 0xf, q3 = L[base + l + 64]! & 0xf, q4 = L[base + l + 96]! & 0xf;
      out[ql + l] = q1 | (q3 << 4);
      out[ql + 32 + l] = q2 | (q4 << 4);
      out[qh + l] = (L[base + l]! >> 4) | ((L[base + l + 32]! >> 4) << 2) | ((L[base + l + 64]! >> 4) << 4) | ((L[base + l + 96]! >> 4) << 6);
    }
  }
}
