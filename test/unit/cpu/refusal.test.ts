// What the CPU engine refuses by name before it takes any memory: a weight whose rows are not whole
// blocks of its format, and a context whose KV cache cannot fit a wasm32 memory.
import { describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../../src/cpu/create-engine.ts';
import { CpuUnsupportedError } from '../../../src/cpu/errors.ts';
import { checkLinear } from '../../../src/cpu/layers.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { folderSource, GOLDEN_MODEL } from '../../goldens/golden-setup.ts';
import { tinyModelDir } from '../../helpers/tiny-model.ts';

describe('CPU engine refusals', () => {
  it('a Q4_K matrix with rows of 96 values (not whole 256-value blocks) is refused by name', () => {
    const l = { kind: 'ggml' as const, rows: 2, cols: 96, segments: [{ name: 'blk.0.ffn_down.weight', type: 'Q4_K' as const, rows: 2, bytes: new Uint8Array(0) }] };
    expect(() => checkLinear(l, 'layer 0')).toThrow(CpuUnsupportedError);
    expect(() => checkLinear(l, 'layer 0')).toThrow(/layer 0: blk.0.ffn_down.weight has rows of 96 values, not whole 256-value blocks/);
  });

  it('a context whose KV cache passes 2 GiB is refused before the kernels are made', async () => {
    const weights = await loadWeights(folderSource(await tinyModelDir({ ...GOLDEN_MODEL, format: 'safetensors' })), { layers: [0, 4], embedding: true, head: true });
    await expect(createCpuEngine(weights, { ctx: 2 ** 24, binary: new Uint8Array(0) })).rejects.toThrow(/a wasm32 memory holds 4 GiB in all; choose a smaller ctx/);
    await expect(createCpuEngine(weights, { ctx: 0 })).rejects.toThrow(/ctx 0 must be a positive integer/);
    // an activations value from a worker's load request is checked, not taken as f32
    await expect(createCpuEngine(weights, { ctx: 64, activations: 'int4' as 'q8', binary: new Uint8Array(0) })).rejects.toThrow(/activations "int4" must be f32 or q8/);
  }, 120_000);
});
