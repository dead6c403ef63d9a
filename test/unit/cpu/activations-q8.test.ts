// The engine option activations: 'q8' (integer linears, src/cpu/asm/linear-q8.ts) on a whole model, the
// tiny GGUF dense-Q4_K_M golden (Q4_K and Q6_K linears): 1 and 2 threads give the same hidden states bit
// for bit; the numbers really differ from the default f32 path, and its logits stay near the f32 path's.
// The logit bound 0.1 (max |logit| ≈ 2 here) is loose on purpose: measured 0.037 over the golden's 32
// positions; a wrong block or scale moves logits by O(1). Its greedy tokens are NOT the golden's (they
// flip at token 2: the golden's top-2 gaps go down to 0.0024), which is why 'f32' is the default.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { createCpuEngine, DEFAULT_ACTIVATIONS } from '../../../src/cpu/create-engine.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { resolveModelSource } from '../../../src/model/sources/resolve.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile } from '../../goldens/gguf-golden-setup.ts';
import { tinyGgufModel } from '../../helpers/tiny-model.ts';

const SLOW = 240_000;   // the threads build compiles on first use; a fresh clone writes the tiny GGUF

it('activations q8 on a whole model: 1 and 2 threads bit for bit, logits within 0.1 of the f32 path', async () => {
  expect(DEFAULT_ACTIVATIONS).toBe('f32');
  const golden = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
  const m = await tinyGgufModel(GGUF_GOLDEN_MODELS['dense-Q4_K_M']);
  const weights = await loadWeights(await resolveModelSource(m.path), { layers: [0, 4], embedding: true, head: true });
  const seq = [...golden.promptIds, ...golden.models['dense-Q4_K_M'].ids.slice(0, 8)];
  const run = async (activations: 'f32' | 'q8', threads: number): Promise<{ hidden: Float32Array; logits: Float32Array }> => {
    const e = await createCpuEngine(weights, { ctx: 64, threads, activations });
    const hidden = await e.runLayers([0, 4], 0, await e.embed(seq));
    const logits = await e.logits(hidden);
    await e.dispose();
    return { hidden, logits };
  };
  const q1 = await run('q8', 1), q2 = await run('q8', 2), f = await run('f32', 1);
  expect(q2.hidden).toEqual(q1.hidden);
  expect(q1.hidden).not.toEqual(f.hidden);
  let d = 0;
  for (let i = 0; i < f.logits.length; i++) d = Math.max(d, Math.abs(q1.logits[i]! - f.logits[i]!));
  expect(d).toBeGreaterThan(0);
  expect(d).toBeLessThan(0.1);
}, SLOW);
