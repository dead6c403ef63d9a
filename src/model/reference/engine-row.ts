// The reference engine's row in the engine table (src/engines/table.ts): the JS engine on the CPU, the
// oracle every other engine is tested against, chosen only when no other engine runs. It holds its
// weights in JS anyway, so its share loads whole on this thread (loadWeights fills each tensor once: its
// weights plus LOAD_IN_FLIGHT_BYTES at the peak). The engine is a lazy import.
import type { EngineRow } from '../../engines/contract.ts';
import { engineScratchBytes } from '../engine-scratch.ts';
import { inThreadShare } from '../../engines/in-thread-share.ts';
import { measureSpeed } from '../js-speed.ts';

export const REFERENCE_LABEL = 'reference (JS on the CPU)';

const createReference: EngineRow['createEngine'] = () => async (weights, { ctx, range, kv }) => {
  const [{ ReferenceEngine }, { materializeWeights }] = await Promise.all([import('./reference-engine.ts'), import('../load-stream.ts')]);
  return new ReferenceEngine(await materializeWeights(weights), { ctx, range, kvType: kv ?? 'f16' });
};

export const referenceRow: EngineRow = {
  kind: 'reference',
  title: 'reference',
  lastResort: true,
  inWorker: false,
  options: [],
  presumedHere: () => false,
  probe: async (budgetMs) => ({ engine: 'reference', speed: measureSpeed(budgetMs), label: REFERENCE_LABEL }),
  label: async () => REFERENCE_LABEL,
  fallbackLabel: () => REFERENCE_LABEL,
  budgetBytes: (offered) => offered,
  capNote: () => '',
  /** Counted as the WebGPU engine's buffers (src/model/engine-scratch.ts), the bound the deal has always used. */
  scratchBytes: (config, o) => engineScratchBytes(config, o),
  loadShare: (options) => inThreadShare(async (s, r) => (await import('../load-weights.ts')).loadWeights(s, r), createReference(options)),
  createEngine: createReference,
};
