// What the GGUF greedy goldens (tiny-gguf-greedy.json) are made from: tiny Qwen3 and Qwen3 MoE GGUFs
// with the full Qwen3 vocabulary, in Q8_0 and in llama.cpp's Q4_K_M mix. Changing anything here means
// regenerating on purpose: `npx tsx test/goldens/make-gguf-goldens.ts`.
import { join } from 'node:path';
import type { TinyGgufDirOptions } from '../helpers/tiny-model.ts';

export const GGUF_GOLDEN_MODELS = {
  'dense-Q8_0': { layers: 4, seed: 2, fileType: 'Q8_0' },
  'dense-Q4_K_M': { layers: 4, seed: 2, fileType: 'Q4_K_M' },
  'moe-Q8_0': { layers: 4, seed: 2, fileType: 'Q8_0', moe: { experts: 8, topK: 2 } },
  'moe-Q4_K_M': { layers: 4, seed: 2, fileType: 'Q4_K_M', moe: { experts: 8, topK: 2 } },
} as const satisfies Record<string, TinyGgufDirOptions>;
export type GgufGoldenName = keyof typeof GGUF_GOLDEN_MODELS;
export const GGUF_GOLDEN_FILE = join(import.meta.dirname, 'tiny-gguf-greedy.json');

export interface GgufGoldenFile {
  about: string;
  prompt: string;
  promptIds: number[];
  maxNewTokens: number;
  kvF16: boolean;
  models: Record<GgufGoldenName, { options: TinyGgufDirOptions; makeTinyModel: string; ids: number[]; text: string; minTop2Gap: number }>;
}
