// The WebGPU engine's row in the engine table (src/engines/table.ts): our WGSL kernels on the adapter the
// browser gives, real or software. Its share streams into the engine's buffers on the page's thread
// (openWeights: at most LOAD_IN_FLIGHT_BYTES of weights in JS at once). The engine, its speed probe and
// the loader are lazy imports: the start page loads this row, not the engine.
import type { EngineRow } from '../engines/contract.ts';
import { ENGINE_MAX_BATCH, engineScratchBytes } from '../model/engine-scratch.ts';
import { inThreadShare } from '../engines/in-thread-share.ts';
import { adapterLabel, requestAdapter, summarizeAdapter } from './adapter.ts';
import { adapterClassOf, PREFILL_STEPS } from './tuning.ts';

const SOFTWARE = /swiftshader|llvmpipe|lavapipe|software|basic render/i;

/**
 * Its options are a bench's own settings only (./bench-settings.ts), none of them the app's URL parameters.
 * The step: the adapter's ('auto', src/gpu/tuning.ts prefillStepFor), at most the one the deal gave it
 * (the default step when it gave none).
 */
const createWebGPU: EngineRow['createEngine'] = (options) => async (weights, { ctx, kv, step }) => {
  const [{ benchSettings }, { createWebGPUEngine }] = await Promise.all([import('./bench-settings.ts'), import('./create-engine.ts')]);
  // No dealt step: the deal counted the default step's scratch (ENGINE_MAX_BATCH), so no more than that.
  return createWebGPUEngine(weights, { ctx, kv: kv ?? 'f16', maxBatch: 'auto', maxStep: step ?? ENGINE_MAX_BATCH, ...benchSettings(options) });
};

export const webgpuRow: EngineRow = {
  kind: 'webgpu',
  title: 'WebGPU',
  labelNamesAdapter: true,
  inWorker: false,
  options: [],
  presumedHere: () => Boolean(globalThis.navigator?.gpu),
  async probe(budgetMs) {
    if (!globalThis.navigator?.gpu) return { engine: 'webgpu', speed: 0, label: 'WebGPU', failed: 'this browser has no WebGPU' };
    const adapter = await requestAdapter();
    const s = summarizeAdapter(adapter);
    const software = s.isFallbackAdapter || SOFTWARE.test(`${s.description} ${s.vendor} ${s.architecture} ${s.device}`);
    const { measureGpuSpeed } = await import('./speed-probe.ts');
    return { engine: 'webgpu', speed: await measureGpuSpeed(adapter, budgetMs), label: `WebGPU · ${adapterLabel(s)}`, software };
  },
  /** The adapter class's step (PREFILL_STEPS: 512 on a discrete GPU), before any model's limits; 64 without WebGPU. */
  async prefillStep() {
    if (!globalThis.navigator?.gpu) return PREFILL_STEPS.cpu;
    return PREFILL_STEPS[adapterClassOf(summarizeAdapter(await requestAdapter()))];
  },
  label: async ({ adapter }) => `WebGPU · ${adapter}`,
  fallbackLabel: ({ adapter }) => `WebGPU · ${adapter}`,
  budgetBytes: (offered) => offered,
  capNote: () => '',
  /** Its buffers as src/model/engine-scratch.ts models them (test/gpu/deal-bytes.test.ts checks the model). */
  scratchBytes: (config, o) => engineScratchBytes(config, o),
  loadShare: (options) => inThreadShare(async (s, r) => (await import('../model/load-weights.ts')).openWeights(s, r), createWebGPU(options)),
  createEngine: createWebGPU,
};
