// A CPU engine computes on the page's own thread: the Generator gives the event loop a turn at least
// every 50 ms, so the page paints the streaming answer and a Stop (an abort from a click or a timer)
// lands mid-answer instead of after it.
import { expect, it } from 'vitest';
import { Generator } from '../../../src/model/generator.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { syntheticWeights } from './reference/synthetic-model.ts';

/** A reference engine whose layers also spin the CPU for `ms` without yielding (a slow device). */
class BusyEngine extends ReferenceEngine {
  constructor(private readonly ms: number, ...args: ConstructorParameters<typeof ReferenceEngine>) { super(...args); }
  override async runLayers(...args: Parameters<ReferenceEngine['runLayers']>) {
    const until = performance.now() + this.ms;
    while (performance.now() < until) { /* spin */ }
    return super.runLayers(...args);
  }
}

it('a timer set mid-answer runs mid-answer: an abort from it stops a CPU-engine answer part-way', async () => {
  const weights = syntheticWeights({ layers: 2, seed: 3 });
  const generator = new Generator(new BusyEngine(10, weights, { ctx: 256 }), { ctx: 256 });
  const controller = new AbortController();
  let abortedAt = -1;
  // At the 5th token, ask a timer to stop the answer: it can only fire if the loop gives timers a turn.
  const onToken = (_id: number, soFar: readonly number[]) => {
    if (soFar.length === 5) setTimeout(() => { abortedAt = soFar.length; controller.abort(); }, 0);
  };
  const r = await generator.generate([1, 2, 3, 4], { maxNewTokens: 200, signal: controller.signal, onToken });
  expect(r.finish).toBe('stopped');
  expect(abortedAt).toBeGreaterThanOrEqual(5);
  // 10 ms of spinning per token and a turn for the page at least every 50 ms: stopped within a few
  // tokens of the request (without the turns the timer fires only after all 200 tokens).
  expect(r.ids.length).toBeLessThan(60);
});
