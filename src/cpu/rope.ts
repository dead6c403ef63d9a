// RoPE's (cos, sin) for a run of positions, rounded as the reference rounds them
// (src/model/reference/ops.ts ropeNeox): angle = f32(pos · inv_freq_i), then f32(cos), f32(sin).
import { ropeInvFreq } from '../model/reference/ops.ts';

const invFreqs = new Map<string, Float32Array>();

/** [n, R/2, 2] (cos, sin) for positions pos0 .. pos0 + n − 1 and R rotary dims. */
export function ropeCosSin(pos0: number, n: number, rotaryDim: number, theta: number): Float32Array {
  const key = `${rotaryDim}/${theta}`;
  let inv = invFreqs.get(key);
  if (!inv) invFreqs.set(key, (inv = ropeInvFreq(rotaryDim, theta)));
  const half = rotaryDim / 2;
  const out = new Float32Array(n * half * 2);
  for (let t = 0; t < n; t++) {
    for (let i = 0; i < half; i++) {
      const angle = Math.fround((pos0 + t) * inv[i]!);
      out[(t * half + i) * 2] = Math.cos(angle);
      out[(t * half + i) * 2 + 1] = Math.sin(angle);
    }
  }
  return out;
}
