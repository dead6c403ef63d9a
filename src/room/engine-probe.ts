// The measured probe behind the engine choice (engine-choice.ts): each engine this device has times the
// same kind of work, an f32 matvec, for a few tens of ms, on its own code: WebGPU on the adapter the
// browser gives (real or software), the WASM SIMD kernels (src/cpu; relaxed SIMD where the browser has
// it, the card says which) where the engine will run them (in a browser its worker, with the pool's
// threads when the page is cross-origin isolated), and the JS reference (capabilities.ts measureSpeed).
// Each probe is bounded (PROBE_TIMEOUT_MS) and a failure
// is reported, never thrown, so a device with one broken engine still joins on another.
import { adapterLabel, requestAdapter, summarizeAdapter } from '../gpu/adapter.ts';
import { wasmLabel, wasmThreads, type EngineKind, type EngineProbe } from './engine-choice.ts';

export const PROBE_TIMEOUT_MS = 15_000;

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


const SOFTWARE = /swiftshader|llvmpipe|lavapipe|software|basic render/i;

function bounded<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} took over ${PROBE_TIMEOUT_MS / 1000} s`)), PROBE_TIMEOUT_MS); });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Whether this page may share memory with workers (COOP + COEP), which the WASM engine's threads need. */
export function pageIsolated(): boolean {
  return Boolean((globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated);
}

/** A browser page's main thread (the WASM engine then runs in a worker of its own), not Node or a worker. */
function onPageMainThread(): boolean {
  return typeof (globalThis as { window?: unknown }).window !== 'undefined' && typeof Worker !== 'undefined';
}

/**
 * Threads the WASM engine runs on here: on a page its worker may block, so the pool runs
 * min(cores, WASM_MAX_THREADS) threads when the page is cross-origin isolated (one otherwise).
 */
export function wasmThreadsHere(): number {
  return wasmThreads({ isolated: pageIsolated(), canBlock: true, cores: globalThis.navigator?.hardwareConcurrency ?? 1 });
}

/** Threads a WASM engine made on this very thread may run (a page's main thread may not block: one). */
export function wasmThreadsOnThisThread(): number {
  return onPageMainThread() ? 1 : wasmThreadsHere();
}

async function probeWebGPU(budgetMs: number): Promise<EngineProbe> {
  if (!globalThis.navigator?.gpu) return { engine: 'webgpu', speed: 0, label: 'WebGPU', failed: 'this browser has no WebGPU' };
  const adapter = await requestAdapter();
  const s = summarizeAdapter(adapter);
  const label = `WebGPU · ${adapterLabel(s)}`;
  const software = s.isFallbackAdapter || SOFTWARE.test(`${s.description} ${s.vendor} ${s.architecture} ${s.device}`);
  const { measureGpuSpeed } = await import('../gpu/speed-probe.ts');
  return { engine: 'webgpu', speed: await measureGpuSpeed(adapter, budgetMs), label, software };
}

/** In a browser the probe runs in the engine's worker with the pool it would run (a few tens of ms to start it). */
async function probeWasm(budgetMs: number): Promise<EngineProbe> {
  // The build the probe ran is the one the engine will load (relaxed SIMD where validated, unless ?simd=plain).
  const q8 = (await import('../cpu/simd-path.ts')).cpuActivationsPreference() === 'q8';   // ?cpu-activations=q8: the card says so
  if (onPageMainThread()) {
    const { CpuWorkerEngine } = await import('../cpu/worker-engine.ts');
    const p = await CpuWorkerEngine.probe(budgetMs, wasmThreadsHere());
    return { engine: 'wasm', speed: p.speed, label: wasmLabel({ threads: p.threads, relaxedSimd: p.simd === 'relaxed', isolated: p.isolated, q8 }) };
  }
  const threads = wasmThreadsHere();
  const { measureWasmSpeed } = await import('../cpu/speed-probe.ts');
  const m = await measureWasmSpeed(budgetMs, threads);
  return { engine: 'wasm', speed: m.speed, label: wasmLabel({ threads, relaxedSimd: m.simd === 'relaxed', isolated: pageIsolated(), q8 }) };
}

/** What a card calls `engine` without measuring it (a forced engine with a fixed speed). */
export async function engineLabelHere(engine: EngineKind, adapter: string): Promise<string> {
  if (engine === 'webgpu') return `WebGPU · ${adapter}`;
  if (engine === 'wasm') {
    const { resolveSimdPath } = await import('../cpu/kernel-binary.ts');   // the path the engine will load
    const { cpuActivationsPreference } = await import('../cpu/simd-path.ts');
    return wasmLabel({ threads: wasmThreadsHere(), relaxedSimd: await resolveSimdPath() === 'relaxed', isolated: pageIsolated(), q8: cpuActivationsPreference() === 'q8' });
  }
  return REFERENCE_LABEL;
}

export const REFERENCE_LABEL = 'reference (JS on the CPU)';

/** Probe `only` one engine (a forced ?engine=) or all three; ~40 ms each plus set-up. */
export async function probeEngines(opts: { only?: EngineKind; budgetMs?: number } = {}): Promise<EngineProbe[]> {
  const budgetMs = opts.budgetMs ?? 40;
  const kinds: EngineKind[] = opts.only ? [opts.only] : ['webgpu', 'wasm', 'reference'];
  const out: EngineProbe[] = [];
  for (const kind of kinds) {                                       // one at a time: they share the CPU
    try {
      if (kind === 'webgpu') out.push(await bounded('the WebGPU probe', probeWebGPU(budgetMs)));
      else if (kind === 'wasm') out.push(await bounded('the WASM probe', probeWasm(budgetMs)));
      else out.push({ engine: 'reference', speed: measureSpeed(budgetMs), label: REFERENCE_LABEL });
    } catch (e) {
      out.push({ engine: kind, speed: 0, label: kind, failed: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}
