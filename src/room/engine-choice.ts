// Which engine a device runs its layers on, from a short measured probe of the engines it has (WebGPU on
// a real or a software adapter, the WASM SIMD engine with its threads, the JS reference), and what its
// device card calls it. Pure: the probes are measured in engine-probe.ts.
export type EngineKind = 'webgpu' | 'reference' | 'wasm';

const GiB = 2 ** 30;
/** A wasm32 memory addresses at most 4 GiB: the most weights + KV one WASM device can hold. */
export const WASM32_MEMORY_BYTES = 4 * GiB;
/** The most threads the WASM engine's pool runs. */
export const WASM_MAX_THREADS = 8;

/** One engine's probe: its measured speed (GFLOP/s of a matvec on that engine) or why it could not run. */
export interface EngineProbe {
  engine: EngineKind;
  /** GFLOP/s of the probe's matvec (0 when it failed). */
  speed: number;
  /** What the device card names it: "WebGPU · SwiftShader (fallback) …", "CPU · 2 threads · SIMD", "reference". */
  label: string;
  /** webgpu only: the adapter is a software one (SwiftShader, llvmpipe, lavapipe, a fallback adapter). */
  software?: boolean;
  /** Set when the engine is absent or the probe failed (no WebGPU, no WASM SIMD…). */
  failed?: string;
}

export interface EngineChoice {
  engine: EngineKind;
  speed: number;
  label: string;
  /** Why this one, for logs and the tooltip: "fastest measured: wasm 3.1 GFLOP/s over webgpu 0.4". */
  why: string;
}

const usable = (p: EngineProbe): boolean => !p.failed && Number.isFinite(p.speed) && p.speed > 0;

/**
 * The engine to offer: `forced` (?engine=) when given, else the fastest usable WebGPU or WASM probe;
 * the reference only when neither runs (it is the oracle, never fast). Ties go to WebGPU on a real
 * adapter (it keeps the CPU free). Throws when nothing at all can run (and nothing is forced).
 */
export function chooseEngine(probes: readonly EngineProbe[], forced?: EngineKind): EngineChoice {
  if (forced) {
    // Forced stays forced: a failed probe leaves the speed unmeasured (0: the caller measures another
    // way) and the engine itself then says what is missing when it is created.
    const p = probes.find((q) => q.engine === forced);
    const ok = p !== undefined && usable(p);
    return { engine: forced, speed: ok ? p.speed : 0, label: p?.label ?? forced, why: `forced by ?engine=${forced}${p?.failed ? ` (its probe failed: ${p.failed})` : ''}` };
  }
  const fast = probes.filter((p) => p.engine !== 'reference' && usable(p));
  const rank = (p: EngineProbe): number => p.speed * (p.engine === 'webgpu' && !p.software ? 1 + 1e-9 : 1);
  const best = fast.reduce<EngineProbe | undefined>((a, p) => (!a || rank(p) > rank(a) ? p : a), undefined);
  const others = probes.filter((p) => p !== best).map((p) => (usable(p) ? `${p.engine} ${p.speed.toPrecision(3)}` : `${p.engine}: ${p.failed ?? 'no speed'}`));
  if (best) return { engine: best.engine, speed: best.speed, label: best.label, why: `fastest measured: ${best.engine} ${best.speed.toPrecision(3)} GFLOP/s${others.length ? ` over ${others.join(', ')}` : ''}` };
  const ref = probes.find((p) => p.engine === 'reference' && usable(p));
  if (ref) return { engine: 'reference', speed: ref.speed, label: ref.label, why: `neither WebGPU nor WASM runs here (${others.join(', ')})` };
  throw new Error(`no engine runs on this device: ${probes.map((p) => `${p.engine}: ${p.failed ?? 'no speed'}`).join('; ')}`);
}

/** The memory a device's engine can use of what it offers: a WASM device at most a wasm32 memory. */
export function engineBudgetBytes(engine: EngineKind, offeredBytes: number): number {
  return engine === 'wasm' ? Math.min(offeredBytes, WASM32_MEMORY_BYTES) : offeredBytes;
}

/** Whether the offer shown for a device was cut to the wasm32 limit (the card says so). */
export function cappedByWasm32(engine: EngineKind, offeredBytes: number): boolean {
  return engine === 'wasm' && offeredBytes >= WASM32_MEMORY_BYTES;
}

/**
 * The WASM engine's card name: "CPU · 4 threads · relaxed SIMD"; a page that is not cross-origin isolated
 * has no SharedArrayBuffer, so its engine runs one thread and says why: "CPU · 1 thread (page not
 * cross-origin isolated) · SIMD".
 */
export function wasmLabel(o: { threads: number; relaxedSimd: boolean; isolated: boolean; q8?: boolean }): string {
  const threads = `${o.threads} thread${o.threads === 1 ? '' : 's'}${o.isolated ? '' : ' (page not cross-origin isolated)'}`;
  return `CPU · ${threads} · ${o.relaxedSimd ? 'relaxed SIMD' : 'SIMD'}${o.q8 ? ' · 8-bit activations' : ''}`;
}

/**
 * Threads the WASM engine may use: one unless the page is isolated and the caller may block (its worker,
 * Node); at most WASM_MAX_THREADS (past that the rows per thread get few and the pool's start-up long).
 */
export function wasmThreads(o: { isolated: boolean; canBlock: boolean; cores: number }): number {
  if (!o.isolated || !o.canBlock) return 1;
  return Math.max(1, Math.min(WASM_MAX_THREADS, Math.floor(o.cores) || 1));
}
