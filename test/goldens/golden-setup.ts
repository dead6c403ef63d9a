// What the greedy-token goldens are made from, shared by the script that writes them
// (make-goldens.ts) and the tests that compare against them. Changing anything here means
// regenerating the goldens on purpose: `npx tsx test/goldens/make-goldens.ts`.

import { join } from 'node:path';
import { Generator } from '../../src/model/generator.ts';
import { loadModelConfig } from '../../src/model/config.ts';
import { loadWeights } from '../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import { NodeFolderSource } from '../../src/model/sources/node-folder.ts';
import type { ModelSource } from '../../src/model/types.ts';
import type { TinyModelDirOptions } from '../helpers/tiny-model.ts';

/** Tiny checkpoint options (same as `npm run make-tiny-model -- --layers 4 --seed 2`, other flags default). */
export const GOLDEN_MODEL = { layers: 4, seed: 2 } as const satisfies TinyModelDirOptions;
export const GOLDEN_FORMATS = ['safetensors', 'mlc'] as const;
export type GoldenFormat = (typeof GOLDEN_FORMATS)[number];
export const GOLDEN_PROMPT = 'The quick brown fox jumps over the lazy dog.';
export const GOLDEN_NEW_TOKENS = 32;
export const GOLDEN_FILE = join(import.meta.dirname, 'tiny-greedy.json');

export interface GoldenFile {
  about: string;
  model: typeof GOLDEN_MODEL;
  makeTinyModel: string;
  prompt: string;
  promptIds: number[];
  maxNewTokens: number;
  kvF16: boolean;
  formats: Record<GoldenFormat, { ids: number[]; text: string; minTop2Gap: number }>;
}

/**
 * The smallest gap between the best and second-best logit over the greedy steps (prompt + ids fed
 * token by token). Informational: an engine that rounds differently can only flip a step whose gap is
 * about as small as its error.
 */
export async function minTop2Gap(source: ModelSource, promptIds: number[], ids: number[]): Promise<number> {
  const { numLayers } = await loadModelConfig(source);
  const weights = await loadWeights(source, { layers: [0, numLayers], embedding: true, head: true });
  const engine = new ReferenceEngine(weights, { ctx: promptIds.length + ids.length });
  let hidden = await engine.runLayers([0, numLayers], 0, await engine.embed(promptIds));
  let min = Infinity;
  for (let i = 0; i < ids.length; i++) {
    const logits = await engine.logits(hidden);
    let best = -Infinity;
    let second = -Infinity;
    for (const v of logits) {
      if (v > best) [best, second] = [v, best];
      else if (v > second) second = v;
    }
    min = Math.min(min, best - second);
    hidden = await engine.runLayers([0, numLayers], promptIds.length + i, await engine.embed([ids[i]!]));
  }
  return min;
}

/** JSON with 2-space indentation but each array of numbers on one line. */
export function goldenJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2).replace(/\[\s*([-\d.e,\s]+?)\s*\]/g, (_, nums: string) => `[${nums.split(/,\s*/).join(', ')}]`)}\n`;
}

/** Greedy ids from the reference (f16 K/V, as the GPU stores them), no stop tokens, whole model. */
export async function referenceGreedy(source: ModelSource, promptIds: number[], maxNewTokens = GOLDEN_NEW_TOKENS): Promise<number[]> {
  const { numLayers } = await loadModelConfig(source);
  const weights = await loadWeights(source, { layers: [0, numLayers], embedding: true, head: true });
  const ctx = promptIds.length + maxNewTokens;
  const result = await new Generator(new ReferenceEngine(weights, { ctx }), { ctx }).generate(promptIds, { maxNewTokens });
  if (result.finish !== 'cap') throw result.error ?? new Error(`generation ended with ${result.finish}`);
  return result.ids;
}

export function folderSource(dir: string): ModelSource {
  return new NodeFolderSource(dir);
}

/** Not degenerate: varied tokens, no long run of one token, and still varied at the end. */
export function degeneracyReport(ids: number[]): { distinct: number; longestRun: number; distinctInLast8: number } {
  let run = 1;
  let longestRun = ids.length > 0 ? 1 : 0;
  for (let i = 1; i < ids.length; i++) {
    run = ids[i] === ids[i - 1] ? run + 1 : 1;
    longestRun = Math.max(longestRun, run);
  }
  return { distinct: new Set(ids).size, longestRun, distinctInLast8: new Set(ids.slice(-8)).size };
}
