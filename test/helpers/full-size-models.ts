// The two rooms the product promises, at full size without weights (sparse GGUFs: the real header, a
// hole for the tensors): Qwen3-30B-A3B Q4_K_M (48 layers, 128 experts of 768, the Qwen3 vocabulary, as
// the released config) and Qwen3.6-35B-A3B Q4_K_M (40 layers, 30 Gated DeltaNet + 10 attention, 256
// experts of 512 and a shared one, 248,320 tokens: Qwen3's ids padded, since no package ships its
// vocabulary). Each tensor has the type llama-quantize's Q4_K_M mix gives it (src/model/tiny/gguf-mix.ts).
import { join } from 'node:path';
import { sparseGguf } from '../../src/model/tiny/sparse-gguf.ts';
import type { TinyModelOptions } from '../../src/model/tiny/tiny-model.ts';
import { qwen35TemplateTokenizerFiles, qwen3GgufVocab, writeSparseGguf } from '../../src/model/tiny/write-node.ts';
import { ggufVocabFromTokenizerJson } from '../../src/model/tiny/gguf-vocab.ts';

/** Qwen/Qwen3-30B-A3B config.json, the fields a GGUF keeps. */
export const QWEN3_30B_A3B: TinyModelOptions = {
  layers: 48, hidden: 2048, heads: 32, kvHeads: 4, headDim: 128, intermediate: 6144, vocab: 151936, tieWordEmbeddings: false,
  moe: { experts: 128, topK: 8, intermediate: 768 },
};

/** Qwen/Qwen3.6-35B-A3B text_config (test/unit/model/hybrid/hybrid-config.test.ts has it as released). */
export const QWEN36_35B_A3B: TinyModelOptions = {
  layers: 40, hidden: 2048, heads: 16, kvHeads: 2, headDim: 256, intermediate: 512, vocab: 248320, tieWordEmbeddings: false,
  moe: { experts: 256, topK: 8, intermediate: 512 },
  hybrid: { linearKeyHeads: 16, linearValueHeads: 32, linearHeadDim: 128, convKernel: 4, fullAttentionInterval: 4, partialRotaryFactor: 0.25, sharedExpertIntermediate: 512 },
};

/** Write the sparse Q4_K_M GGUF of `which` into `dir`; returns its path and size. */
export async function writeFullSizeGguf(dir: string, which: '30b-a3b' | '35b-a3b'): Promise<{ path: string; size: number }> {
  const hybrid = which === '35b-a3b';
  const vocab = hybrid
    ? await (async () => {
      const tok = await qwen35TemplateTokenizerFiles();
      const dec = new TextDecoder();
      return ggufVocabFromTokenizerJson(JSON.parse(dec.decode(tok['tokenizer.json'])), JSON.parse(dec.decode(tok['tokenizer_config.json'])), 248320);
    })()
    : await qwen3GgufVocab();
  const name = hybrid ? 'Qwen3.6-35B-A3B-Q4_K_M' : 'Qwen3-30B-A3B-Q4_K_M';
  const g = sparseGguf(hybrid ? QWEN36_35B_A3B : QWEN3_30B_A3B, 'Q4_K_M', vocab, name);
  const path = join(dir, `${name}.gguf`);
  await writeSparseGguf(path, g.header, g.size);
  return { path, size: g.size };
}
