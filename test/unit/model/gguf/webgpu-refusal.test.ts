// Until the WGSL kernels for ggml blocks and MoE exist, the WebGPU engine refuses such weights by name,
// before it asks for a GPU device (so this runs without one).
import { describe, expect, it } from 'vitest';
import { createWebGPUEngine } from '../../../../src/gpu/create-engine.ts';
import { UnsupportedWeightError } from '../../../../src/gpu/errors.ts';
import { loadWeights } from '../../../../src/model/load-weights.ts';
import { resolveModelSource } from '../../../../src/model/sources/resolve.ts';
import { tinyGgufModel } from '../../../helpers/tiny-model.ts';

describe('the WebGPU engine and GGUF weights', () => {
  it('refuses ggml block types and MoE layers with a named error', async () => {
    const q8 = await tinyGgufModel({ layers: 2, seed: 1, fileType: 'Q8_0' });
    const w = await loadWeights(await resolveModelSource(q8.path), { layers: [0, 1] });
    const err = (await createWebGPUEngine(w).then(() => null, (e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(UnsupportedWeightError);
    expect(err.message).toMatch(/tensor "blk\.0\.attn_q\.weight\+blk\.0\.attn_k\.weight\+blk\.0\.attn_v\.weight" is Q8_0: the WebGPU engine has no kernels for GGUF block types yet/);
    const moe = await tinyGgufModel({ layers: 2, seed: 1, fileType: 'BF16', moe: { experts: 4, topK: 2, intermediate: 64 } });
    const mw = await loadWeights(await resolveModelSource(moe.path), { layers: [1, 2] });
    await expect(createWebGPUEngine(mw)).rejects.toThrow(/layer 1 is a Qwen3 MoE layer: the WebGPU engine has no MoE kernels yet/);
  }, 180_000);

  it('refuses Qwen3.5 hybrid layers by name (Gated DeltaNet and gated attention)', async () => {
    const h = await tinyGgufModel({ layers: 4, seed: 1, fileType: 'BF16', hybrid: {} });
    const source = await resolveModelSource(h.path);
    for (const [layer, kind] of [[0, 'Gated DeltaNet'], [3, 'gated attention']] as const) {
      const w = await loadWeights(source, { layers: [layer, layer + 1] });
      const err = (await createWebGPUEngine(w).then(() => null, (e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(UnsupportedWeightError);
      expect(err.message).toBe(`layer ${layer} is a Qwen3.5 hybrid layer (${kind}): the WebGPU engine has no hybrid kernels yet (use the CPU reference engine)`);
    }
  }, 180_000);
});
