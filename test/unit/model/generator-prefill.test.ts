// Reading a long prompt: the Generator reports how many of its tokens are read after each prefill chunk
// (reused ones counted), and a Stop during prefill takes effect at the next chunk boundary: the engine
// runs at most the chunk it was in, and the tokens read so far stay in the cache for the next request.
import { expect, it } from 'vitest';
import { Generator } from '../../../src/model/generator.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { syntheticWeights } from './reference/synthetic-model.ts';

/** A reference engine whose layers take `ms` of wall time per call (a slow device), counting its calls. */
class SlowEngine extends ReferenceEngine {
  calls: { start: number; tokens: number; at: number }[] = [];
  constructor(private readonly ms: number, ...args: ConstructorParameters<typeof ReferenceEngine>) { super(...args); }
  override async runLayers(...args: Parameters<ReferenceEngine['runLayers']>) {
    await new Promise((r) => setTimeout(r, this.ms));
    this.calls.push({ start: args[1], tokens: args[2].length / weights.config.hiddenSize, at: performance.now() });
    return super.runLayers(...args);
  }
}

const weights = syntheticWeights({ layers: 2, seed: 5 });
const prompt = Array.from({ length: 100 }, (_, i) => (i * 7) % 50 + 1);

it('reports prompt progress per chunk: 0, 16, 32 … of 100, reused tokens counted on the next request', async () => {
  const engine = new SlowEngine(0, weights, { ctx: 512 });
  const generator = new Generator(engine, { ctx: 512, prefillChunk: 16 });
  const seen: [number, number][] = [];
  const r = await generator.generate(prompt, { maxNewTokens: 1, onPrefill: (done, total) => seen.push([done, total]) });
  expect(r.finish).toBe('cap');
  expect(seen).toEqual([0, 16, 32, 48, 64, 80, 96, 100].map((d) => [d, 100]));
  // The same prompt plus 20 tokens: the 100 are reused (the answer checkpoint), 20 more read in 2 chunks.
  const longer = [...prompt, ...prompt.slice(0, 20)];
  const again: number[] = [];
  const r2 = await generator.generate(longer, { maxNewTokens: 1, onPrefill: (done) => again.push(done) });
  expect(r2.stats.promptReused).toBeGreaterThanOrEqual(100);
  expect(again[0]).toBe(r2.stats.promptReused);
  expect(again.at(-1)).toBe(120);
});

it('Stop during prefill returns within one chunk: no chunk starts after the abort', async () => {
  const chunkMs = 60;
  const engine = new SlowEngine(chunkMs, weights, { ctx: 512 });
  const generator = new Generator(engine, { ctx: 512, prefillChunk: 10 });
  const controller = new AbortController();
  let abortAt = 0;
  // Abort while the 3rd chunk runs (tokens 20–29).
  const onPrefill = (done: number) => {
    if (done === 20) setTimeout(() => { abortAt = performance.now(); controller.abort(); }, chunkMs / 2);
  };
  const r = await generator.generate(prompt, { maxNewTokens: 50, signal: controller.signal, onPrefill });
  const returnedAt = performance.now();
  expect(r.finish).toBe('stopped');
  expect(r.ids).toEqual([]);
  expect(abortAt).toBeGreaterThan(0);
  // The chunk that was running finished; none began after the abort (2 layers = 1 runLayers call a chunk).
  expect(engine.calls.filter((c) => c.at > abortAt + 1).length).toBeLessThanOrEqual(1);
  expect(engine.calls.map((c) => [c.start, c.tokens])).toEqual([[0, 10], [10, 10], [20, 10]]);
  expect(r.stats.promptComputed).toBe(30);
  // Within one chunk's time of the abort (plus slack for a busy 2-core box).
  expect(returnedAt - abortAt).toBeLessThan(chunkMs + 200);
  // The next request reuses what was read.
  const next = await generator.generate(prompt, { maxNewTokens: 1 });
  expect(next.stats.promptReused).toBe(30);
}, 20_000);   // 3 chunks of 60 ms, then a full 100-token prompt at 60 ms a chunk: well under a second
