// The measured probe behind the engine choice (engine-choice.ts): each engine of the table times the same
// kind of work, an f32 matvec, for a few tens of ms, on its own code (its row's probe: src/engines).
// Each probe is bounded (PROBE_TIMEOUT_MS) and a failure is reported, never thrown, so a device with one
// broken engine still joins on another. No engine is imported here: the table is handed in.
import type { EngineKind, EngineOptions, EngineProbe, EngineTable } from '../engines/contract.ts';

export const PROBE_TIMEOUT_MS = 15_000;

function bounded<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} took over ${PROBE_TIMEOUT_MS / 1000} s`)), PROBE_TIMEOUT_MS); });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Probe `only` one engine (a forced ?engine=) or every row of the table, in its order; ~40 ms each plus set-up. */
export async function probeEngines(engines: EngineTable, opts: { only?: EngineKind; budgetMs?: number; options?: EngineOptions } = {}): Promise<EngineProbe[]> {
  const budgetMs = opts.budgetMs ?? 40;
  const kinds = opts.only ? [opts.only] : Object.keys(engines);
  const out: EngineProbe[] = [];
  for (const kind of kinds) {                                       // one at a time: they share the CPU
    try {
      const row = engines[kind];
      if (!row) throw new Error(`no engine "${kind}" here (${Object.keys(engines).join(', ')})`);
      out.push(await bounded(`the ${row.title} probe`, row.probe(budgetMs, opts.options ?? {})));
    } catch (e) {
      out.push({ engine: kind, speed: 0, label: kind, failed: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}
