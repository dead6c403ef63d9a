// Writes test/goldens/tiny-greedy.json: the reference's exact greedy ids for the tiny BF16 safetensors and
// q4f16_1 MLC checkpoints. Run on purpose only: `npx tsx test/goldens/make-goldens.ts`. Tests never
// regenerate it; they compare (test/unit/model/reference/goldens.test.ts).

import { writeFile } from 'node:fs/promises';
import { Tokenizer } from '../../src/model/tokenizer.ts';
import { tinyModelDir } from '../helpers/tiny-model.ts';
import {
  degeneracyReport, folderSource, goldenJson, minTop2Gap, GOLDEN_FILE, GOLDEN_FORMATS, GOLDEN_MODEL, GOLDEN_NEW_TOKENS, GOLDEN_PROMPT,
  referenceGreedy, type GoldenFile, type GoldenFormat,
} from './golden-setup.ts';

async function main(): Promise<void> {
  const formats = {} as GoldenFile['formats'];
  let promptIds: number[] = [];
  for (const format of GOLDEN_FORMATS) {
    const source = folderSource(await tinyModelDir({ ...GOLDEN_MODEL, format }));
    const tokenizer = await Tokenizer.fromSource(source);
    promptIds = tokenizer.encode(GOLDEN_PROMPT);
    const ids = await referenceGreedy(source, promptIds);
    formats[format as GoldenFormat] = { ids, text: tokenizer.decode(ids), minTop2Gap: await minTop2Gap(source, promptIds, ids) };
    console.log(format, JSON.stringify(degeneracyReport(ids)));
  }
  const golden: GoldenFile = {
    about: 'Exact greedy token ids of the CPU reference (f16 K/V) on tiny Qwen3 checkpoints. Written by test/goldens/make-goldens.ts; compared by tests.',
    model: GOLDEN_MODEL,
    makeTinyModel: 'npm run make-tiny-model -- --out DIR --layers 4 --seed 2 --format both',
    prompt: GOLDEN_PROMPT,
    promptIds,
    maxNewTokens: GOLDEN_NEW_TOKENS,
    kvF16: true,
    formats,
  };
  await writeFile(GOLDEN_FILE, goldenJson(golden));
  console.log(`wrote ${GOLDEN_FILE}`);
}

main().then(() => process.exit(0), (e: unknown) => {
  console.error(e);
  process.exit(1);
});
