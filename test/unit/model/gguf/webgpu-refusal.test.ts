// Until the WGSL kernels for ggml blocks and MoE (Qwen3 MoE, Qwen3.5 MoE's routed experts) exist, the WebGPU engine refuses such weights by name,
// before it asks for a GPU device (so this runs without one).
import { describe, expect, it } from 'vitest';
import { createWebGPUEngine } from '../../../../src/gpu/create-engine.ts';
import { UnsupportedWeightError } from '../../../../src/gpu/errors.ts';
import { loadWeights } from '../../../../src/model/load-weights.ts';
import { resolveModelSource } from '../../../../src/model/sources/resolve.ts';
import { NodeFolderSource } from '../../../../src/model/sources/node-folder.ts';
import { tinyGgufModel, tinyModelDir } from '../../../helpers/tiny-model.ts';

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

  it('runs Qwen3.5 hybrids with a dense MLP (test/gpu/hybrid-model.test.ts) but refuses by name their routed MoE, GGUF block types and shapes past its kernels', async () => {
    const refusal = async (w: Awaited<ReturnType<typeof loadWeights>>): Promise<Error> => {
      const err = (await createWebGPUEngine(w).then(() => null, (e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(UnsupportedWeightError);
      return err;
    };
    const moe = await loadWeights(new NodeFolderSource(await tinyModelDir({ layers: 4, seed: 1, hybrid: {}, moe: { experts: 4, topK: 2 } })), { layers: [0, 1] });
    expect((await refusal(moe)).message).toBe('layer 0 is a Qwen3.5 MoE layer (routed experts and a shared expert): the WebGPU engine has no routed-MoE kernels yet (use the CPU reference engine)');
    const gguf = await tinyGgufModel({ layers: 4, seed: 1, fileType: 'Q8_0', hybrid: {} });
    const g = await loadWeights(await resolveModelSource(gguf.path), { layers: [0, 1] });
    expect((await refusal(g)).message).toMatch(/^tensor "blk\.0\.[a-z_.+0-9]+" is Q8_0: the WebGPU engine has no kernels for GGUF block types yet/);
    const wide = await loadWeights(new NodeFolderSource(await tinyModelDir({
      layers: 4, seed: 1, hybrid: { linearKeyHeads: 1, linearValueHeads: 2, linearHeadDim: 264 },
    })), { layers: [0, 1] });
    expect((await refusal(wide)).message).toBe('layer 0: Gated DeltaNet key heads of 264 dims; the WebGPU delta-rule kernel holds at most 256');
  }, 180_000);
});
