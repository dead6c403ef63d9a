// The prefill micro-chunk from measured stage times: the fitted line, the choice it implies (small chunks
// when calls are cheap, large when each call costs), chains paced by their depth, and the probe that
// gets a second size before any fit.
import { describe, expect, it } from 'vitest';
import { chooseChunk, StageTimes } from '../../../src/room/chunk-choice.ts';

/** A stage whose chunk of m tokens takes a + b·m seconds, measured at `sizes`. */
function stage(a: number, b: number, sizes = [4, 16], depth = 1): StageTimes {
  const t = new StageTimes();
  t.depth = depth;
  for (const m of sizes) t.observe(m, a + b * m);
  return t;
}

describe('chunk choice', () => {
  it('fits a + b·m through the sizes seen, recent times weighing more, and ignores bad times', () => {
    const t = stage(0.01, 0.002, [4, 8, 32]);
    expect(t.predict(64)).toBeCloseTo(0.01 + 0.002 * 64, 9);
    t.observe(8, Number.NaN);
    t.observe(-1, 1);
    expect(t.predict(64)).toBeCloseTo(0.01 + 0.002 * 64, 9);
    for (let i = 0; i < 40; i++) t.observe(32, 0.2);            // the stage got slower at 32
    expect(t.predict(32)!).toBeGreaterThan(0.01 + 0.002 * 32 + 0.05);
    expect(new StageTimes().predict(8)).toBeNull();
    expect(stage(0, 1, [4, 4]).predict(8)).toBeNull();           // one size only: no line
    expect(stage(0, 1, [1, 2]).predict(8)).toBeNull();           // decode-sized calls are no prefill chunks
  });

  it('cheap calls: small chunks overlap the stages; costly calls: large chunks', () => {
    expect(chooseChunk(512, [stage(0, 0.001), stage(0, 0.001)], 16)).toBe(4);
    expect(chooseChunk(512, [stage(1, 0.001), stage(1, 0.001)], 16)).toBe(512);
    const mid = chooseChunk(512, [stage(0.02, 0.001), stage(0.02, 0.001)], 16);
    expect(mid).toBeGreaterThan(4);
    expect(mid).toBeLessThan(512);
    expect(chooseChunk(40, [stage(1, 0.001), stage(1, 0.001)], 16)).toBeLessThanOrEqual(40);   // never past the prompt
  });

  it('a chain of devices is paced by its time over its depth', () => {
    // The same per-call cost: a two-device chain takes chunks twice as fast, so smaller chunks pay.
    const flat = chooseChunk(512, [stage(0.004, 0.002), stage(0.01, 0.004)], 16);
    const chained = chooseChunk(512, [stage(0.004, 0.002), stage(0.01, 0.004, [1, 16], 2)], 16);
    expect(chained).toBeLessThanOrEqual(flat);
  });

  it('a remote stage whose hops overlap: paced by its measured queue, not its latency', () => {
    // 20 ms of hops each way per chunk alone, but chunks in flight overlap: 2 ms per token between ends.
    const remote = stage(0.04, 0.002, [16, 64]);
    const latencyOnly = chooseChunk(512, [stage(0.001, 0.002, [16, 64]), remote], 16);
    remote.observePace(16, 0.002 * 16);
    remote.observePace(64, 0.002 * 64);
    expect(remote.pace(32)).toBeCloseTo(0.064, 9);
    expect(chooseChunk(512, [stage(0.001, 0.002, [16, 64]), remote], 16)).toBeLessThan(latencyOnly);
  });

  it('never below the sizes measured (small batches cost about what a few rows cost)', () => {
    expect(chooseChunk(512, [stage(0, 0.001, [16, 64]), stage(0, 0.001, [32, 128])], 16)).toBe(32);
  });

  it('before a fit: the fallback, then a size not yet run', () => {
    expect(chooseChunk(512, [new StageTimes(), new StageTimes()], 16)).toBe(16);
    const once = stage(0.01, 0.001, [16]);
    const probe = chooseChunk(512, [once, stage(0.01, 0.001)], 16);
    expect(probe).toBe(32);
    once.observe(probe, 0.01 + 0.001 * probe);
    expect(once.predict(64)).toBeCloseTo(0.01 + 0.064, 9);
  });
});
