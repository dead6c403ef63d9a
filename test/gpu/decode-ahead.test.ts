// Issue 36 (host time per decode token): plain greedy decoding submits the next token before the last
// token's read-back returns (src/gpu/engine.ts decodeOne, the pick written into the ids buffer on the
// device). Shown here: the tokens are the reference's; in the steady loop every step takes the token
// submitted by the step before (one submit a token, none made twice); a token fed other than the device's pick (the
// work ahead dropped) and a truncate between steps still give the reference's tokens.
import { beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { createWebGPUEngine } from '../../src/gpu/create-engine.ts';
import { Generator } from '../../src/model/generator.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import { decodeNext, sampleNext } from '../../src/model/engine-types.ts';
import type { ModelWeights } from '../../src/model/types.ts';
import { loadTiny, testDevice, tinyModelFolder } from './helpers.ts';

const CTX = 96;
const PROMPT = [9707, 11, 1879, 0, 5209, 13, 2585, 374];
const GREEDY = { temperature: 0 };

describe('greedy decode with the next token submitted ahead', () => {
  let weights: ModelWeights;
  let expected: number[];
  beforeAll(async () => {
    weights = await loadTiny(path.join(await tinyModelFolder({ layers: 4, seed: 7 }), 'mlc'));
    expected = (await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(PROMPT, { maxNewTokens: 24 })).ids;
  });

  it('gives the reference tokens with the queue never drained between tokens', async () => {
    const device = await testDevice(false);
    const engine = await createWebGPUEngine(weights, { device, ctx: CTX, useF16: false });
    try {
      const L = weights.config.numLayers;
      const ids = [await sampleNext(engine, await engine.runTokens(PROMPT, [0, L], 0), GREEDY)];
      ids.push(await decodeNext(engine, ids[0]!, GREEDY));     // submits its own token and the next
      const before = engine.stats();
      while (ids.length < 24) ids.push(await decodeNext(engine, ids.at(-1)!, GREEDY));
      const after = engine.stats();
      expect(ids).toEqual(expected);
      // 22 steps, each taking the token the step before submitted (one submit each, none made again)
      expect(after.decodesAhead - before.decodesAhead).toBe(22);
      expect(after.submits - before.submits).toBe(22);
      expect(engine.kvLength()).toBe(PROMPT.length + 23);
    } finally {
      await engine.dispose();
      device.destroy();
    }
  });

  it('drops the work ahead when another token is fed or the cache is cut', async () => {
    const device = await testDevice(false);
    const engine = await createWebGPUEngine(weights, { device, ctx: CTX, useF16: false });
    try {
      const L = weights.config.numLayers;
      const first = await sampleNext(engine, await engine.runTokens(PROMPT, [0, L], 0), GREEDY);
      const picked = await decodeNext(engine, first, GREEDY);   // the engine runs `picked` ahead
      expect(picked).toBe(expected[1]);
      // feed another token at that position: the reference's pick after it
      const other = (picked + 1) % weights.config.vocabSize;
      const ref = new ReferenceEngine(weights, { ctx: CTX });
      await ref.runLayers([0, L], 0, await ref.embed([...PROMPT, first]));
      const want = await decodeNext(ref, other, GREEDY);
      expect(await decodeNext(engine, other, GREEDY)).toBe(want);
      // cut back to the prompt + first and go on from the pick: the reference's tokens again
      await engine.truncate(PROMPT.length + 1);
      const ids = [first, picked];
      while (ids.length < 8) ids.push(await decodeNext(engine, ids.at(-1)!, GREEDY));
      expect(ids).toEqual(expected.slice(0, 8));
    } finally {
      await engine.dispose();
      device.destroy();
    }
  });
});
