// What a device tells the host about itself: WebGPU adapter and limits, shader-f16, a memory budget
// (suggested from what the browser reveals, adjustable by the user: suggestedOffer) and a quick measured
// speed (the chosen engine's probe, a ~40 ms f32 matvec on that engine: engine-probe.ts; relative only, used
// to deal layers in proportion).
import { adapterLabel, requestAdapter, summarizeAdapter } from '../gpu/adapter.ts';
import type { DeviceCaps } from './protocol.ts';
import type { EngineOptions, EngineTable } from '../engines/contract.ts';
import { measureSpeed } from '../model/js-speed.ts';
import { chooseEngine, engineBudgetBytes, type EngineKind, type EngineProbe } from './engine-choice.ts';
import { probeEngines } from './engine-probe.ts';
import { MAX_ENGINE_STEP } from './device-bytes.ts';

export { measureSpeed };

const GiB = 2 ** 30;

export interface CapabilityOptions {
  /** The engines this page runs (src/engines/table.ts ENGINES, handed in by src/app; tests give their own). */
  engines: EngineTable;
  /** The engines' options (?simd=…): each row reads its own. */
  options?: EngineOptions;
  /** Forced (?engine=); otherwise the probe's fastest. */
  engine?: EngineKind;
  /** The probe (tests give their own results). */
  probe?: (o: { only?: EngineKind }) => Promise<EngineProbe[]>;
  /** Override the memory budget (bytes). Default: suggestedOffer from what the browser reveals. */
  memoryBudgetBytes?: number;
  /** Override the measured speed (tests that want a fixed deal). */
  speed?: number;
  /** Override the engine's prefill step (tests that give devices different steps); default: its row's prefillStep. */
  step?: number;
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
  } catch { /* no WebGPU: the device can still run the WASM or the reference engine */ }
  // The probe: only the forced engine's (its speed), or every engine's, offering the fastest.
  // A forced engine with a fixed speed (tests) needs no measuring, only its name.
  const forcedRow = opts.engine === undefined ? undefined : opts.engines[opts.engine];
  if (opts.engine !== undefined && !forcedRow) throw new Error(`engine "${opts.engine}" is none of ${Object.keys(opts.engines).join(', ')}`);
  const probes = forcedRow && opts.speed !== undefined && !opts.probe
    ? [{ engine: forcedRow.kind, speed: opts.speed, label: await forcedRow.label({ adapter: caps.adapter }, opts.options ?? {}) }]
    : await (opts.probe ?? ((o) => probeEngines(opts.engines, { ...o, ...(opts.options ? { options: opts.options } : {}) })))({ ...(opts.engine ? { only: opts.engine } : {}) });
  const choice = chooseEngine(probes, opts.engines, opts.engine);
  const row = opts.engines[choice.engine];
  const step = opts.step ?? await row?.prefillStep?.(opts.options ?? {}).catch(() => undefined);
  const offered = opts.memoryBudgetBytes ?? suggestedOffer({ deviceMemoryGiB, platform: platformOf(globalThis.navigator) }).bytes;
  return {
    ...caps, engine: choice.engine, engineLabel: choice.label, deviceMemoryGiB,
    memoryBudgetBytes: engineBudgetBytes(opts.engines, choice.engine, offered),
    speed: opts.speed ?? (choice.speed > 0 ? choice.speed : measureSpeed()),
    ...(step !== undefined ? { step: Math.min(MAX_ENGINE_STEP, step) } : {}),
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
