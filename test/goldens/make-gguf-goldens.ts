// Writes test/goldens/tiny-gguf-greedy.json: the reference's exact greedy ids for tiny GGUF models
// (dense and MoE, Q8_0 and Q4_K_M). Run on purpose only: `npx tsx test/goldens/make-gguf-goldens.ts`.
import { writeFile } from 'node:fs/promises';
import { resolveModelSource } from '../../src/model/sources/resolve.ts';
import { Tokenizer } from '../../src/model/tokenizer.ts';
import { tinyGgufModel } from '../helpers/tiny-model.ts';
import { degeneracyReport, goldenJson, GOLDEN_NEW_TOKENS, GOLDEN_PROMPT, minTop2Gap, referenceGreedy } from './golden-setup.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile } from './gguf-golden-setup.ts';

function cli(o: (typeof GGUF_GOLDEN_MODELS)[keyof typeof GGUF_GOLDEN_MODELS]): string {
  const moe = 'moe' in o ? ` --experts ${o.moe.experts} --top-k ${o.moe.topK}` : '';
  return `npm run make-tiny-model -- --out DIR --format gguf --quant ${o.fileType} --layers ${o.layers} --seed ${o.seed} --head-dim 64 --intermediate 256${moe}`;
}

async function main(): Promise<void> {
  const models = {} as GgufGoldenFile['models'];
  let promptIds: number[] = [];
  for (const [name, options] of Object.entries(GGUF_GOLDEN_MODELS) as [keyof typeof GGUF_GOLDEN_MODELS, (typeof GGUF_GOLDEN_MODELS)[keyof typeof GGUF_GOLDEN_MODELS]][]) {
    const m = await tinyGgufModel(options);
    const source = await resolveModelSource(m.path);
    const tokenizer = await Tokenizer.fromSource(source);
    promptIds = tokenizer.encode(GOLDEN_PROMPT);
    const ids = await referenceGreedy(source, promptIds);
    models[name] = { options, makeTinyModel: cli(options), ids, text: tokenizer.decode(ids), minTop2Gap: await minTop2Gap(source, promptIds, ids) };
    console.log(name, JSON.stringify(degeneracyReport(ids)), models[name].minTop2Gap);
  }
  const golden: GgufGoldenFile = {
    about: 'Exact greedy token ids of the CPU reference (f16 K/V) on tiny GGUF checkpoints. Written by test/goldens/make-gguf-goldens.ts; compared by tests.',
    prompt: GOLDEN_PROMPT, promptIds, maxNewTokens: GOLDEN_NEW_TOKENS, kvF16: true, models,
  };
  await writeFile(GGUF_GOLDEN_FILE, goldenJson(golden));
  console.log(`wrote ${GGUF_GOLDEN_FILE}`);
}

main().then(() => process.exit(0), (e: unknown) => { console.error(e); process.exit(1); });
