// What the hybrid greedy goldens (tiny-hybrid-greedy.json) are made from: tiny Qwen3.5 (dense) and
// Qwen3.5 MoE checkpoints with n_k ≠ n_v and linear + full-attention layers, as safetensors (BF16) and as
// GGUF (Q8_0 and llama.cpp's Q4_K_M mix), the full Qwen3 vocabulary. Changing anything here means
// regenerating on purpose: `npx tsx test/goldens/make-hybrid-goldens.ts`.
import { join } from 'node:path';
import { tinyGgufModel, tinyModelDir, type TinyGgufDirOptions, type TinyModelDirOptions } from '../helpers/tiny-model.ts';

const DENSE = { layers: 4, seed: 2, headDim: 64, intermediate: 256, hybrid: {} } as const;
const MOE = { ...DENSE, moe: { experts: 8, topK: 2 } } as const;

export const HYBRID_GOLDEN_MODELS = {
  'dense-safetensors': { format: 'safetensors', options: DENSE },
  'moe-safetensors': { format: 'safetensors', options: MOE },
  'dense-Q8_0': { format: 'gguf', options: { ...DENSE, fileType: 'Q8_0' } },
  'dense-Q4_K_M': { format: 'gguf', options: { ...DENSE, fileType: 'Q4_K_M' } },
  'moe-Q8_0': { format: 'gguf', options: { ...MOE, fileType: 'Q8_0' } },
  'moe-Q4_K_M': { format: 'gguf', options: { ...MOE, fileType: 'Q4_K_M' } },
} as const satisfies Record<string, { format: 'safetensors'; options: TinyModelDirOptions } | { format: 'gguf'; options: TinyGgufDirOptions }>;
export type HybridGoldenName = keyof typeof HYBRID_GOLDEN_MODELS;
export const HYBRID_GOLDEN_FILE = join(import.meta.dirname, 'tiny-hybrid-greedy.json');

export interface HybridGoldenFile {
  about: string;
  prompt: string;
  promptIds: number[];
  maxNewTokens: number;
  kvF16: boolean;
  models: Record<HybridGoldenName, { format: 'safetensors' | 'gguf'; options: unknown; makeTinyModel: string; ids: number[]; text: string; minTop2Gap: number }>;
}

/** The make-tiny-model command line that writes a golden model. */
export function hybridGoldenCli(name: HybridGoldenName): string {
  const m = HYBRID_GOLDEN_MODELS[name];
  const o = m.options as TinyGgufDirOptions;
  const gguf = m.format === 'gguf' ? ` --format gguf --quant ${o.fileType}` : '';
  const moe = o.moe ? ` --experts ${o.moe.experts} --top-k ${o.moe.topK}` : '';
  return `npm run make-tiny-model -- --out DIR --hybrid${gguf} --layers ${o.layers} --seed ${o.seed} --head-dim 64 --intermediate 256${moe}`;
}

/** The path of a golden model (built on first use): a folder for safetensors, the .gguf file for GGUF. */
export async function hybridGoldenSource(name: HybridGoldenName): Promise<string> {
  const m = HYBRID_GOLDEN_MODELS[name];
  return m.format === 'gguf' ? (await tinyGgufModel(m.options)).path : tinyModelDir(m.options);
}
