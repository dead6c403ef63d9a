// The JS reference's speed probe, and the room's fallback measure when a forced engine's own probe
// failed: GFLOP/s of a 256×256 f32 matvec repeated for ~budgetMs, in plain JS.

/** GFLOP/s of a 256×256 f32 matvec repeated for ~budgetMs. */
export function measureSpeed(budgetMs = 30): number {
  const n = 256;
  const w = new Float32Array(n * n).map((_, i) => ((i * 7919) % 1000) / 1000 - 0.5);
  const x = new Float32Array(n).map((_, i) => (i % 10) / 10);
  const y = new Float32Array(n);
  let reps = 0;
  const t0 = performance.now();
  let t = t0;
  do {
    for (let r = 0; r < n; r++) {
      let acc = 0;
      for (let k = 0; k < n; k++) acc += w[r * n + k]! * x[k]!;
      y[r] = acc;
    }
    reps++;
    t = performance.now();
  } while (t - t0 < budgetMs);
  return (reps * 2 * n * n) / ((t - t0) / 1000) / 1e9 + y[0]! * 0; // y read so the loop is not dead code
}
