// What a fuzz target reports: how many cases it ran, how many inputs were accepted and refused (by the
// name of the error that refused them), and every crash (an error that is not one of the target's named
// refusals) and hang (a case that went past its time bound). A clean run has no crash and no hang.
export interface FuzzReport {
  target: string;
  seed: number;
  cases: number;
  accepted: number;
  refused: number;
  refusedBy: Record<string, number>;
  crashes: { case: number; error: string }[];
  hangs: { case: number; what: string }[];
  ms: number;
}

export function newReport(target: string, seed: number): FuzzReport {
  return { target, seed, cases: 0, accepted: 0, refused: 0, refusedBy: {}, crashes: [], hangs: [], ms: 0 };
}

/** Counts a refusal under its error's name. */
export function refusedWith(r: FuzzReport, e: Error): void {
  r.refused++;
  r.refusedBy[e.name] = (r.refusedBy[e.name] ?? 0) + 1;
}

/** Keeps the first few crashes whole (the rest are counted in `crashes.length` only by their case). */
export function crashed(r: FuzzReport, n: number, e: unknown): void {
  const err = e instanceof Error ? `${e.name}: ${e.message}\n${(e.stack ?? '').split('\n').slice(1, 6).join('\n')}` : String(e);
  r.crashes.push({ case: n, error: r.crashes.length < 5 ? err : err.split('\n')[0]! });
}

/** `p`, or 'hang' when it takes longer than `ms`. */
export async function bounded<T>(p: Promise<T>, ms: number): Promise<T | 'hang'> {
  p.catch(() => undefined); // a late failure, after the bound, is part of the hang already reported
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([p, new Promise<'hang'>((resolve) => { timer = setTimeout(() => resolve('hang'), ms); })]);
  } finally {
    clearTimeout(timer);   // also when p rejects: a live timer would hold the case (and all it read) for `ms`
  }
}

export function summary(r: FuzzReport): string {
  const by = Object.entries(r.refusedBy).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ');
  return `${r.target}: seed ${r.seed}, ${r.cases} cases in ${(r.ms / 1000).toFixed(1)} s — ${r.accepted} accepted, ${r.refused} refused` +
    `${by ? ` (${by})` : ''}; ${r.crashes.length} crashes, ${r.hangs.length} hangs`;
}
