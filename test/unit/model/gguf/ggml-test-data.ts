// Seeded test rows for the ggml quantizer tests: blocks of zeros, constants, tiny values, outliers,
// all-positive values and plain Gaussians, so every branch of the reference quantizers is taken.
import { Sfc32 } from '../../../../src/model/tiny/prng.ts';

export function mixedRows(seed: number, blocks: number): Float32Array {
  const r = new Sfc32(seed);
  const x = new Float32Array(blocks * 256);
  for (let i = 0; i < x.length; i++) {
    const kind = Math.floor(i / 256) % 7;
    x[i] = kind === 0 ? 0 : kind === 1 ? 0.25 : kind === 2 ? r.normal() * 1e-3
      : kind === 3 ? (r.uniform() < 0.1 ? r.normal() * 10 : r.normal()) : kind === 4 ? Math.abs(r.normal()) : r.normal() * 0.05;
  }
  return x;
}
