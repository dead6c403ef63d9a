// The GPU bench's shapes (docs/peer-benchmarks.md): released Qwen3 configs as tiny-model options, written as
// full-size Q4_K_M GGUFs by ./synth-gguf.ts. `tiny` is for the test that keeps the bench from rotting
// (test/gpu/gpu-bench.test.ts): the same code path, small enough for lavapipe in seconds.
import type { TinyModelOptions } from '../../src/model/tiny/tiny-options.ts';
import { QWEN3_30B_A3B } from '../../test/helpers/full-size-models.ts';

export interface BenchShape {
  name: string;
  label: string;
  model: TinyModelOptions;
}

export const GPU_BENCH_SHAPES: Record<string, BenchShape> = {
  tiny: {
    name: 'tiny', label: 'tiny (2 layers, hidden 256, 4/2 heads of 64, intermediate 512, Qwen3 vocabulary)',
    model: { layers: 2, hidden: 256, heads: 4, kvHeads: 2, headDim: 64, intermediate: 512, vocab: 151936, tieWordEmbeddings: true },
  },
  '0.6b': {
    name: '0.6b', label: 'Qwen3-0.6B (28 layers, hidden 1024, 16/8 heads of 128, intermediate 3072, tied)',
    model: { layers: 28, hidden: 1024, heads: 16, kvHeads: 8, headDim: 128, intermediate: 3072, vocab: 151936, tieWordEmbeddings: true },
  },
  '8b': {
    name: '8b', label: 'Qwen3-8B (36 layers, hidden 4096, 32/8 heads of 128, intermediate 12288)',
    model: { layers: 36, hidden: 4096, heads: 32, kvHeads: 8, headDim: 128, intermediate: 12288, vocab: 151936, tieWordEmbeddings: false },
  },
  '30b-a3b': {
    name: '30b-a3b', label: 'Qwen3-30B-A3B (48 layers, hidden 2048, 32/4 heads of 128, 128 experts of 768, top 8)',
    model: QWEN3_30B_A3B,
  },
};

/** `--shapes a,b` checked against the table. */
export function pickShapes(list: string): BenchShape[] {
  return list.split(',').map((s) => s.trim()).filter(Boolean).map((s) => {
    const shape = GPU_BENCH_SHAPES[s];
    if (!shape) throw new Error(`--shapes: no shape ${JSON.stringify(s)} (known: ${Object.keys(GPU_BENCH_SHAPES).join(', ')})`);
    return shape;
  });
}
