// The WebGPU engine runs Qwen3 MoE (test/gpu/moe-kernels.test.ts, moe-model.test.ts) and Qwen3.5 hybrids,
// dense and MoE; what its kernels cannot hold is refused by name before it asks for a GPU device (so
// this runs without one).
import { describe, expect, it } from 'vitest';
import { createWebGPUEngine } from '../../../../src/gpu/create-engine.ts';
import { UnsupportedWeightError } from '../../../../src/gpu/errors.ts';
import { loadWeights } from '../../../../src/model/load-weights.ts';
import { resolveModelSource } from '../../../../src/model/sources/resolve.ts';
import { NodeFolderSource } from '../../../../src/model/sources/node-folder.ts';
import { tinyGgufModel, tinyModelDir } from '../../../helpers/tiny-model.ts';

describe('what the WebGPU engine refuses', () => {
  it('refuses more experts than its routing kernels take, with a named error', async () => {
    const moe = await tinyGgufModel({ layers: 2, seed: 1, fileType: 'BF16', tokenizer: 'tiny-bpe', moe: { experts: 520, topK: 2, intermediate: 16 } });
    const mw = await loadWeights(await resolveModelSource(moe.path), { layers: [1, 2] });
    const err = (await createWebGPUEngine(mw).then(() => null, (e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(UnsupportedWeightError);
    expect(err.message).toMatch(/520 experts, top-2: the WebGPU engine's routing takes up to 512 experts/);
  }, 180_000);

  it('runs Qwen3.5 hybrids, dense and MoE (test/gpu/hybrid-model.test.ts, hybrid-moe.test.ts), but refuses by name shapes past its kernels', async () => {
    const refusal = async (w: Awaited<ReturnType<typeof loadWeights>>): Promise<Error> => {
      const err = (await createWebGPUEngine(w).then(() => null, (e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(UnsupportedWeightError);
      return err;
    };
    const wide = await loadWeights(new NodeFolderSource(await tinyModelDir({
      layers: 4, seed: 1, hybrid: { linearKeyHeads: 1, linearValueHeads: 2, linearHeadDim: 264 },
    })), { layers: [0, 1] });
    expect((await refusal(wide)).message).toBe('layer 0: Gated DeltaNet key heads of 264 dims; the WebGPU delta-rule kernel holds at most 256');
  }, 180_000);
});
