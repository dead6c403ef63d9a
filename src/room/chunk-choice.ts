// Choosing the prefill micro-chunk from measured stage times. Each stage's time for a chunk of m tokens
// is fitted as a + b·m (a: per-call cost — hops, submits, read-backs; b: per token) from its recent calls
// that ran alone (no other chunk queued on it). A prefill of n tokens in chunks of m through stages s
// takes about Σ t_s(m) + (⌈n/m⌉ − 1) · max_s t_s(m) / depth_s: the first chunk crosses every stage, the
// rest follow at the pace of the slowest (a chain of d devices passes chunks on inside itself, so its
// pace is its time over d). Small chunks overlap the stages more; large ones pay the per-call cost less.

export const CHUNK_CANDIDATES = [4, 8, 16, 32, 64, 128, 256, 512] as const;
const DECAY = 0.9;   // each new observation weighs more than the ones before it

/** A recency-weighted least-squares line through (tokens, seconds). */
export class StageTimes {
  private w = 0; private m = 0; private t = 0; private mm = 0; private mt = 0;
  private sizes = new Set<number>();
  /** Devices the stage passes chunks through in turn (a chain's length; 1 otherwise). */
  depth = 1;

  observe(tokens: number, seconds: number): void {
    if (!(tokens > 0 && seconds >= 0 && Number.isFinite(seconds))) return;
    this.w = this.w * DECAY + 1;
    this.m = this.m * DECAY + tokens;
    this.t = this.t * DECAY + seconds;
    this.mm = this.mm * DECAY + tokens * tokens;
    this.mt = this.mt * DECAY + tokens * seconds;
    this.sizes.add(tokens);
  }

  /** Predicted seconds for a chunk of `tokens`, or null before two different sizes were seen. */
  predict(tokens: number): number | null {
    if (this.sizes.size < 2 || this.w === 0) return null;
    const meanM = this.m / this.w, meanT = this.t / this.w;
    const varM = this.mm / this.w - meanM * meanM;
    if (varM <= 1e-12) return null;
    const b = Math.max(0, (this.mt / this.w - meanM * meanT) / varM);
    const a = Math.max(0, meanT - b * meanM);
    return a + b * tokens;
  }
}

/** The chunk (of CHUNK_CANDIDATES, ≤ n) with the least predicted prefill time, or `fallback` without data. */
export function chooseChunk(n: number, stages: readonly StageTimes[], fallback: number): number {
  let best = fallback, bestTime = Infinity;
  for (const m of CHUNK_CANDIDATES) {
    if (m > n && m !== CHUNK_CANDIDATES[0]) break;
    const times: number[] = [];
    for (const s of stages) {
      const t = s.predict(m);
      if (t === null) return fallback;
      times.push(t);
    }
    const sum = times.reduce((a, t) => a + t, 0);
    const pace = Math.max(...times.map((t, i) => t / stages[i]!.depth));
    const total = sum + (Math.ceil(n / m) - 1) * pace;
    if (total <= bestTime) { best = m; bestTime = total; }
  }
  return best;
}
