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

it('timers run while a CPU engine decodes, and an abort from a timer stops the answer part-way', async () => {
  const weights = syntheticWeights({ layers: 2, seed: 3 });
  const generator = new Generator(new BusyEngine(10, weights, { ctx: 256 }), { ctx: 256 });
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  try {
    const r = await generator.generate([1, 2, 3, 4], { maxNewTokens: 200, signal: controller.signal });
    expect(r.finish).toBe('stopped');
    expect(r.ids.length).toBeGreaterThan(5);
    expect(r.ids.length).toBeLessThan(100);        // 200 tokens take ≥ 2 s: it stopped near 300 ms
    expect(ticks).toBeGreaterThan(3);
  } finally {
    clearInterval(timer);
  }
});
