// The WebGPU row's settings a bench passes in its options (harness/engine.ts, the CPU bench's page),
// beside the app's URL options (the row lists none): checked here, since they may cross from another
// global (the engine worker's load request).
import type { EngineOptions } from '../engines/contract.ts';
import { EngineUsageError } from '../model/engine-errors.ts';
import type { TopkLayout } from './tuning.ts';

/**
 * A bench's own settings for the engine, beside the URL's (none of them are URL parameters of the app):
 * f16=off forces the f32 path; topk=WGxITEMS the head's top-k layout (benches compare layouts).
 */
export function benchSettings(o: EngineOptions): { useF16?: boolean; topk?: TopkLayout } {
  const out: { useF16?: boolean; topk?: TopkLayout } = {};
  if (o.f16 !== undefined) {
    if (o.f16 !== 'on' && o.f16 !== 'off') throw new EngineUsageError(`the WebGPU engine's f16 must be on or off, got "${o.f16}"`);
    out.useF16 = o.f16 === 'on';
  }
  if (o.topk !== undefined) {
    const m = /^(\d{1,4})x(\d{1,3})$/.exec(o.topk);
    if (!m) throw new EngineUsageError(`the WebGPU engine's topk must be WGxITEMS (e.g. 64x4), got "${o.topk}"`);
    out.topk = { WG: Number(m[1]), ITEMS: Number(m[2]) };
  }
  return out;
}

