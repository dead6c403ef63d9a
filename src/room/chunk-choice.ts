// Choosing the prefill micro-chunk from measured stage times. Each stage's time for a chunk of m tokens
// is fitted as a + b·m (a: per-call cost — hops, submits, read-backs; b: per token) through the recent
// mean time of each chunk size it ran alone (no other chunk queued on it), and its pace p_s(m) likewise
// through the times between chunk ends while chunks queue on it. A prefill of n tokens in chunks of m
// through stages s takes about Σ t_s(m) + (⌈n/m⌉ − 1) · max_s p_s(m): the first chunk crosses every
// stage, the rest follow at the pace of the slowest. Before a pace is measured it is taken as t_s(m) over
// the stage's depth (a chain of d devices passes chunks on inside itself). Small chunks overlap the
// stages more; large ones pay the per-call cost less. Until a stage has run two sizes, the choice probes a larger one it has not run.
// The line is not extrapolated below the sizes measured: a device costs about the same for any batch up
// to a few rows (it reads its weights once), so chunks smaller than those seen would be predicted too
// cheap. Single-token calls (decoding) are not prefill chunks and are left out of the fit.

export const CHUNK_CANDIDATES = [4, 8, 16, 32, 64, 128, 256, 512] as const;
const DECAY = 0.8;          // a size's mean: each new time weighs 20%
const SIZES_KEPT = 8;       // the most recently seen chunk sizes

/** Per chunk size, a recency-weighted mean time; a least-squares line through them. */
class SizeLine {
  private readonly means = new Map<number, number>();   // tokens → seconds (insertion order = recency)

  observe(tokens: number, seconds: number): void {
    if (!(Number.isInteger(tokens) && tokens >= CHUNK_CANDIDATES[0] && seconds >= 0 && Number.isFinite(seconds))) return;
    const old = this.means.get(tokens);
    this.means.delete(tokens);
    this.means.set(tokens, old === undefined ? seconds : old * DECAY + seconds * (1 - DECAY));
    if (this.means.size > SIZES_KEPT) this.means.delete(this.means.keys().next().value!);
  }

  sizes(): number[] { return [...this.means.keys()]; }

  predict(tokens: number): number | null {
    if (this.means.size < 2) return null;
    const pts = [...this.means];
    const meanM = pts.reduce((s, [m]) => s + m, 0) / pts.length;
    const meanT = pts.reduce((s, [, t]) => s + t, 0) / pts.length;
    const varM = pts.reduce((s, [m]) => s + (m - meanM) ** 2, 0);
    const cov = pts.reduce((s, [m, t]) => s + (m - meanM) * (t - meanT), 0);
    const b = Math.max(0, cov / varM);
    const a = Math.max(0, meanT - b * meanM);
    return a + b * tokens;
  }
}

/**
 * A stage's measured times: a chunk's time when it ran alone (the latency a chunk pays to cross it), and
 * its pace when chunks queue on it (the time between one chunk's end and the next's; hops in flight
 * overlap there, so a remote stage's pace is below its latency).
 */
export class StageTimes {
  private readonly alone = new SizeLine();
  private readonly queued = new SizeLine();
  /** Devices the stage passes chunks through in turn (a chain's length; 1 otherwise). */
  depth = 1;

  observe(tokens: number, seconds: number): void { this.alone.observe(tokens, seconds); }
  observePace(tokens: number, seconds: number): void { this.queued.observe(tokens, seconds); }

  /** Chunk sizes with a measured time alone. */
  sizes(): number[] { return this.alone.sizes(); }

  /** Predicted seconds for a chunk of `tokens` alone, or null before two different sizes were seen. */
  predict(tokens: number): number | null { return this.alone.predict(tokens); }

  /** Predicted seconds between chunks of `tokens` in a queue: measured, else the time alone over the depth. */
  pace(tokens: number): number | null {
    const t = this.predict(tokens);
    const p = this.queued.predict(tokens);
    if (t === null) return null;
    return p === null ? t / this.depth : Math.min(p, t);
  }
}

/**
 * The chunk (of CHUNK_CANDIDATES, ≤ n, ≥ the smallest size every stage measured) with the least
 * predicted prefill time. Before every stage has two sizes: `fallback`, or, once that size was run, the
 * first larger candidate the stage has not run (a probe), else a smaller one.
 */
export function chooseChunk(n: number, stages: readonly StageTimes[], fallback: number): number {
  const fits = CHUNK_CANDIDATES.filter((m) => m <= n);
  const unfit = stages.find((s) => s.predict(CHUNK_CANDIDATES[0]) === null);
  if (unfit) {
    const seen = new Set(unfit.sizes());
    if (!seen.has(fallback)) return fallback;
    return fits.find((m) => !seen.has(m) && m > fallback) ?? [...fits].reverse().find((m) => !seen.has(m)) ?? fallback;
  }
  const floor = Math.max(...stages.map((s) => Math.min(...s.sizes())));
  const usable = fits.filter((m) => m >= floor);
  if (usable.length === 0) return Math.min(n, floor);
  let best = fallback, bestTime = Infinity;
  for (const m of usable) {
    const sum = stages.reduce((a, s) => a + s.predict(m)!, 0);
    const pace = Math.max(...stages.map((s) => s.pace(m)!));
    const total = sum + (Math.ceil(n / m) - 1) * pace;
    if (total < bestTime) { best = m; bestTime = total; }
  }
  return best;
}
