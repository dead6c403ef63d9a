// The WASM row's scratch bytes (src/cpu/scratch-bytes.ts, what the deal counts for a WASM device) against
// the WASM engine's own allocations: on the tiny models of each family (dense Qwen3, qwen3_moe, the
// Qwen3.5 hybrid, dense and MoE), a prefill of n tokens and the head's logits, then the deepest frame the
// engine's memory held above its weights, KV and state (CpuEngineStats.scratchPeakBytes). The model must
// cover it and not overstate it much (it bounds the experts' tokens and the attention scores by n and ctx).
import { describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../../src/cpu/create-engine.ts';
import { wasmScratchBytes, wasmScratchFrames } from '../../../src/cpu/scratch-bytes.ts';
import { loadModelConfig } from '../../../src/model/config.ts';
import { engineScratchBytes } from '../../../src/model/engine-scratch.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { NodeFolderSource } from '../../../src/model/sources/node-folder.ts';
import { resolveModelSource } from '../../../src/model/sources/resolve.ts';
import type { ModelSource } from '../../../src/model/types.ts';
import { hybridGoldenSource } from '../../goldens/hybrid-golden-setup.ts';
import { tinyModelDir } from '../../helpers/tiny-model.ts';

const SLOW = 240_000;   // a fresh clone writes the tiny models (full Qwen3 vocabulary) first
const CTX = 64, N = 24;
const MODELS: [string, () => Promise<ModelSource>][] = [
  ['dense Qwen3', async () => new NodeFolderSource(await tinyModelDir({ layers: 2, seed: 3 }))],
  ['qwen3_moe', async () => new NodeFolderSource(await tinyModelDir({ layers: 2, seed: 11, moe: { experts: 8, topK: 2, intermediate: 64 } }))],
  ['Qwen3.5 hybrid', async () => resolveModelSource(await hybridGoldenSource('dense-safetensors'))],
  ['Qwen3.5 MoE hybrid', async () => resolveModelSource(await hybridGoldenSource('moe-safetensors'))],
];

describe.each(MODELS)('the WASM engine\'s scratch: %s', (_name, source) => {
  it(`the row's model covers the deepest frame of a ${N}-token prefill and of the logits, each within 1.5x`, async () => {
    const src = await source();
    const weights = await loadWeights(src, { layers: [0, (await loadModelConfig(src)).numLayers], embedding: true, head: true });
    const engine = await createCpuEngine(weights, { ctx: CTX });
    try {
      const L = weights.config.numLayers;
      const ids = Array.from({ length: N }, (_, i) => 100 + i);
      const frames = wasmScratchFrames(weights.config, { ctx: CTX, maxBatch: N }, 1);
      const hidden = await engine.runLayers([0, L], 0, await engine.embed(ids));
      const layers = engine.stats().scratchPeakBytes;   // the layers' frames only, so far
      await engine.logits(hidden);
      const real = engine.stats().scratchPeakBytes;
      const modelled = wasmScratchBytes(weights.config, { ctx: CTX, maxBatch: N }, 1);
      console.log(`[scratch] ${_name}: layers real ${layers} B, modelled ${frames.layers} B; with the head real ${real} B, modelled ${modelled} B; the WebGPU model said ${engineScratchBytes(weights.config, { ctx: CTX })} B`);
      expect(layers).toBeGreaterThan(N * weights.config.hiddenSize * 4);
      expect(frames.layers).toBeGreaterThanOrEqual(layers);
      expect(frames.layers).toBeLessThanOrEqual(1.5 * layers);
      expect(modelled).toBeGreaterThanOrEqual(real);
      expect(modelled).toBeLessThanOrEqual(1.5 * real + 65536);
    } finally {
      await engine.dispose();
    }
  }, SLOW);
});
