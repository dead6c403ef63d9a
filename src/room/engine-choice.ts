// Which engine a device runs its layers on, from a short measured probe of the engines its table has
// (src/engines: WebGPU on a real or a software adapter, the WASM SIMD engine with its threads, the JS
// reference), and what memory of its offer that engine can use. Pure: the probes are measured in
// engine-probe.ts, and every per-engine fact comes from the engine's row.
import type { EngineKind, EngineProbe, EngineTable } from '../engines/contract.ts';

export type { EngineKind, EngineProbe } from '../engines/contract.ts';

export interface EngineChoice {
  engine: EngineKind;
  speed: number;
  label: string;
  /** Why this one, for logs and the tooltip: "fastest measured: wasm 3.1 GFLOP/s over webgpu 0.4". */
  why: string;
}

const usable = (p: EngineProbe): boolean => !p.failed && Number.isFinite(p.speed) && p.speed > 0;

/**
 * The engine to offer: `forced` (?engine=) when given, else the fastest usable probe of a row that is not
 * a last resort; a last-resort row (the reference: the oracle, never fast) only when none of those runs.
 * Ties go to an engine on dedicated hardware (software: false, WebGPU on a real adapter: it keeps the CPU
 * free). Throws when nothing at all can run (and nothing is forced).
 */
export function chooseEngine(probes: readonly EngineProbe[], engines: EngineTable, forced?: EngineKind): EngineChoice {
  if (forced) {
    // Forced stays forced: a failed probe leaves the speed unmeasured (0: the caller measures another
    // way) and the engine itself then says what is missing when it is created.
    const p = probes.find((q) => q.engine === forced);
    const ok = p !== undefined && usable(p);
    return { engine: forced, speed: ok ? p.speed : 0, label: p?.label ?? forced, why: `forced by ?engine=${forced}${p?.failed ? ` (its probe failed: ${p.failed})` : ''}` };
  }
  const lastResort = (p: EngineProbe): boolean => engines[p.engine]?.lastResort === true;
  const fast = probes.filter((p) => !lastResort(p) && usable(p));
  const rank = (p: EngineProbe): number => p.speed * (p.software === false ? 1 + 1e-9 : 1);
  const best = fast.reduce<EngineProbe | undefined>((a, p) => (!a || rank(p) > rank(a) ? p : a), undefined);
  const others = probes.filter((p) => p !== best).map((p) => (usable(p) ? `${p.engine} ${p.speed.toPrecision(3)}` : `${p.engine}: ${p.failed ?? 'no speed'}`));
  if (best) return { engine: best.engine, speed: best.speed, label: best.label, why: `fastest measured: ${best.engine} ${best.speed.toPrecision(3)} GFLOP/s${others.length ? ` over ${others.join(', ')}` : ''}` };
  const fallback = probes.find((p) => lastResort(p) && usable(p));
  if (fallback) {
    const titles = Object.values(engines).filter((r) => !r.lastResort).map((r) => r.title);
    return { engine: fallback.engine, speed: fallback.speed, label: fallback.label, why: `${titles.length > 1 ? 'neither' : 'not'} ${titles.join(' nor ')} runs here (${others.join(', ')})` };
  }
  throw new Error(`no engine runs on this device: ${probes.map((p) => `${p.engine}: ${p.failed ?? 'no speed'}`).join('; ')}`);
}

/** The memory a device's engine can use of what it offers (its row's cap: a WASM device at most a wasm32 memory). */
export function engineBudgetBytes(engines: EngineTable, engine: EngineKind, offeredBytes: number): number {
  return engines[engine]?.budgetBytes(offeredBytes) ?? offeredBytes;
}

/** The engine assumed before the probe ran: the first row of the table presumed here, else its last resort. */
export function presumedEngine(engines: EngineTable): EngineKind {
  const rows = Object.values(engines);
  const row = rows.find((r) => r.presumedHere()) ?? rows.find((r) => r.lastResort) ?? rows[0];
  if (!row) throw new Error('the engine table is empty');
  return row.kind;
}
