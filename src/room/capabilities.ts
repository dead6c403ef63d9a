// What a device tells the host about itself: WebGPU adapter and limits, shader-f16, a memory budget
// (suggested from what the browser reveals, adjustable by the user: suggestedOffer) and a quick measured
// speed (a ~30 ms f32 matvec in JS: relative only, used to deal layers in proportion).
import { adapterLabel, requestAdapter, summarizeAdapter } from '../gpu/adapter.ts';
import type { DeviceCaps } from './protocol.ts';

const GiB = 2 ** 30;

export interface CapabilityOptions {
  engine: 'webgpu' | 'reference' | 'wasm';
  /** Override the memory budget (bytes). Default: suggestedOffer from what the browser reveals. */
  memoryBudgetBytes?: number;
  /** Override the measured speed (tests that want a fixed deal). */
  speed?: number;
}

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

export async function measureCapabilities(opts: CapabilityOptions): Promise<DeviceCaps> {
  const deviceMemoryGiB = (globalThis.navigator as { deviceMemory?: number } | undefined)?.deviceMemory ?? 0;
  let caps: Omit<DeviceCaps, 'memoryBudgetBytes' | 'speed' | 'deviceMemoryGiB' | 'engine'> = {
    adapter: 'no WebGPU', isFallbackAdapter: false, shaderF16: false, maxStorageBufferBindingSize: 0, maxBufferSize: 0,
  };
  try {
    const s = summarizeAdapter(await requestAdapter());
    caps = {
      adapter: adapterLabel(s), isFallbackAdapter: s.isFallbackAdapter, shaderF16: s.shaderF16,
      maxStorageBufferBindingSize: s.maxStorageBufferBindingSize, maxBufferSize: s.maxBufferSize,
    };
  } catch { /* no WebGPU: the device can still run the reference engine */ }
  return {
    ...caps, engine: opts.engine, deviceMemoryGiB,
    memoryBudgetBytes: opts.memoryBudgetBytes ?? suggestedOffer({ deviceMemoryGiB, platform: platformOf(globalThis.navigator) }).bytes,
    speed: opts.speed ?? measureSpeed(),
  };
}

export type DevicePlatform = 'phone' | 'tablet' | 'desktop';

interface NavigatorLike {
  userAgent?: string;
  maxTouchPoints?: number;
  userAgentData?: { mobile?: boolean };
}

/** Phone, tablet or desktop, from the user agent (Client Hints' mobile flag where there is one; iPadOS says "Macintosh" with touch). */
export function platformOf(nav: NavigatorLike | undefined): DevicePlatform {
  const ua = nav?.userAgent ?? '';
  if (/iPad|Tablet/i.test(ua) || (/Macintosh/.test(ua) && (nav?.maxTouchPoints ?? 0) > 1) || (/Android/.test(ua) && !/Mobile/.test(ua))) return 'tablet';
  if (nav?.userAgentData?.mobile || /iPhone|iPod|Android.*Mobile|Mobile/.test(ua)) return 'phone';
  return 'desktop';
}

export interface OfferSuggestion { bytes: number; why: string }

/**
 * The memory to suggest a device offers, from what the browser reveals. navigator.deviceMemory is rounded
 * down to a power of two and capped at 8 (Safari gives none); a tab must leave the system and the
 * browser their share, more so on a phone, where the GPU shares the same memory:
 *   phone: half of what it reports, at most 4 GiB; 2 GiB when it says nothing (Safari on an iPhone);
 *   tablet: half; 3 GiB when it says nothing;
 *   desktop: 6 GiB when it reports the cap of 8 (it has at least that), else half; 4 GiB when it says nothing.
 * Whole quarter GiB. The user's own figure replaces it (and is kept per device: src/app/memory-budget.ts).
 */
export function suggestedOffer(o: { deviceMemoryGiB: number; platform: DevicePlatform }): OfferSuggestion {
  const r = o.deviceMemoryGiB > 0 ? o.deviceMemoryGiB : 0;
  const quarter = (g: number) => Math.max(0.25, Math.floor(g * 4) / 4) * GiB;
  if (o.platform === 'phone') {
    return r > 0 ? { bytes: quarter(Math.min(4, r / 2)), why: `half of the ${r} GB this phone's browser reports, at most 4 GiB` }
      : { bytes: 2 * GiB, why: 'this phone\'s browser does not report its memory, so 2 GiB' };
  }
  if (o.platform === 'tablet') {
    return r > 0 ? { bytes: quarter(r / 2), why: `half of the ${r} GB this tablet's browser reports` }
      : { bytes: 3 * GiB, why: 'this tablet\'s browser does not report its memory, so 3 GiB' };
  }
  if (r >= 8) return { bytes: 6 * GiB, why: 'this browser reports 8 GB (its most: the computer has at least that), so 6 GiB' };
  return r > 0 ? { bytes: quarter(r / 2), why: `half of the ${r} GB this browser reports` }
    : { bytes: 4 * GiB, why: 'this browser does not report its memory, so 4 GiB' };
}
