// Where the WASM engine runs and on how many threads: a page's worker may block, so its pool runs
// min(cores, WASM_MAX_THREADS) threads when the page is cross-origin isolated (one otherwise); a page's
// main thread may not block (one). And what its device card calls it. Small and pure: the engine row
// (./engine-row.ts) loads it on the start page.
import { onPageMainThread } from '../engines/contract.ts';

const GiB = 2 ** 30;
/** A wasm32 memory addresses at most 4 GiB: the most weights + KV one WASM device can hold. */
export const WASM32_MEMORY_BYTES = 4 * GiB;
/** The most threads the WASM engine's pool runs. */
export const WASM_MAX_THREADS = 8;

/**
 * Threads the WASM engine may use: one unless the page is isolated and the caller may block (its worker,
 * Node); at most WASM_MAX_THREADS (past that the rows per thread get few and the pool's start-up long).
 */
export function wasmThreads(o: { isolated: boolean; canBlock: boolean; cores: number }): number {
  if (!o.isolated || !o.canBlock) return 1;
  return Math.max(1, Math.min(WASM_MAX_THREADS, Math.floor(o.cores) || 1));
}

/** Whether this page may share memory with workers (COOP + COEP), which the WASM engine's threads need. */
export function pageIsolated(): boolean {
  return Boolean((globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated);
}

/** Threads the WASM engine runs on here (in a page: in its worker). */
export function wasmThreadsHere(): number {
  return wasmThreads({ isolated: pageIsolated(), canBlock: true, cores: globalThis.navigator?.hardwareConcurrency ?? 1 });
}

/** Threads a WASM engine made on this very thread may run (a page's main thread may not block: one). */
export function wasmThreadsOnThisThread(): number {
  return onPageMainThread() ? 1 : wasmThreadsHere();
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
