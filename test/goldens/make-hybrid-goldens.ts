// Writes test/goldens/tiny-hybrid-greedy.json: the reference's exact greedy ids for tiny Qwen3.5 hybrid
// checkpoints (dense and MoE; safetensors, GGUF Q8_0 and Q4_K_M). Run on purpose only:
// `npx tsx test/goldens/make-hybrid-goldens.ts`.
import { writeFile } from 'node:fs/promises';
import { resolveModelSource } from '../../src/model/sources/resolve.ts';
import { Tokenizer } from '../../src/model/tokenizer.ts';
import { degeneracyReport, goldenJson, GOLDEN_NEW_TOKENS, GOLDEN_PROMPT, minTop2Gap, referenceGreedy } from './golden-setup.ts';
import { HYBRID_GOLDEN_FILE, HYBRID_GOLDEN_MODELS, hybridGoldenCli, hybridGoldenSource, type HybridGoldenFile, type HybridGoldenName } from './hybrid-golden-setup.ts';

async function main(): Promise<void> {
  const models = {} as HybridGoldenFile['models'];
  let promptIds: number[] = [];
  for (const name of Object.keys(HYBRID_GOLDEN_MODELS) as HybridGoldenName[]) {
    const source = await resolveModelSource(await hybridGoldenSource(name));
    const tokenizer = await Tokenizer.fromSource(source);
    promptIds = tokenizer.encode(GOLDEN_PROMPT);
    const ids = await referenceGreedy(source, promptIds);
    const m = HYBRID_GOLDEN_MODELS[name];
    models[name] = { format: m.format, options: m.options, makeTinyModel: hybridGoldenCli(name), ids, text: tokenizer.decode(ids), minTop2Gap: await minTop2Gap(source, promptIds, ids) };
    console.log(name, JSON.stringify(degeneracyReport(ids)), models[name].minTop2Gap);
  }
  const golden: HybridGoldenFile = {
    about: 'Exact greedy token ids of the CPU reference (f16 K/V, recurrent delta rule) on tiny Qwen3.5 hybrid checkpoints. Written by test/goldens/make-hybrid-goldens.ts; compared by tests.',
    prompt: GOLDEN_PROMPT, promptIds, maxNewTokens: GOLDEN_NEW_TOKENS, kvF16: true, models,
  };
  await writeFile(HYBRID_GOLDEN_FILE, goldenJson(golden));
  console.log(`wrote ${HYBRID_GOLDEN_FILE}`);
}

main().then(() => process.exit(0), (e: unknown) => { console.error(e); process.exit(1); });
