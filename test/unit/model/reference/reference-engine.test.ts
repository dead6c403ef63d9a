import { describe, expect, it } from 'vitest';
import { ContextFullError, EngineUsageError, PositionError } from '../../../../src/model/engine-errors.ts';
import { ReferenceEngine } from '../../../../src/model/reference/reference-engine.ts';
import { argmax } from '../../../../src/model/sampler.ts';
import { naiveLastLogits } from './naive-forward.ts';
import { syntheticWeights, weightsSubset } from './synthetic-model.ts';
import { sampleNext } from '../../../../src/model/engine-types.ts';

const ids = [5, 17, 3, 88, 42, 42, 7];

async function lastLogits(engine: ReferenceEngine, tokens: number[]): Promise<Float32Array> {
  const L = engine.config.numLayers;
  const hidden = await engine.runLayers([0, L], engine.kvLength(), await engine.embed(tokens));
  return engine.logits(hidden);
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe('ReferenceEngine against a naive whole-sequence forward', () => {
  for (const [dtype, tied] of [['F32', true], ['BF16', false], ['q4f16_1', true]] as const) {
    it(`${dtype}, ${tied ? 'tied' : 'untied'} head: logits agree to 1e-4 and are not trivial`, async () => {
      const w = syntheticWeights({ dtype, tied, seed: 11 });
      const engine = new ReferenceEngine(w, { kvF16: false });
      const got = await lastLogits(engine, ids);
      const want = naiveLastLogits(w, ids);
      expect(got.length).toBe(w.config.vocabSize);
      expect(maxAbsDiff(got, want)).toBeLessThan(1e-4);
      expect(Math.max(...want) - Math.min(...want)).toBeGreaterThan(0.5);
    });
  }

  it('weights decoded once to f32 (within the budget) give bitwise the same logits as decoding per call', async () => {
    for (const dtype of ['BF16', 'q4f16_1'] as const) {
      const w = syntheticWeights({ dtype, seed: 13 });
      const cached = await lastLogits(new ReferenceEngine(w), ids);
      const uncached = await lastLogits(new ReferenceEngine(w, { decodeBudgetBytes: 0 }), ids);
      expect(cached).toEqual(uncached);
    }
  });

  it('f16 K/V storage (the default) changes logits only slightly', async () => {
    const w = syntheticWeights({ seed: 12 });
    const exact = await lastLogits(new ReferenceEngine(w, { kvF16: false }), ids);
    const rounded = await lastLogits(new ReferenceEngine(w), ids);
    const diff = maxAbsDiff(exact, rounded);
    expect(diff).toBeGreaterThan(0);
    expect(diff).toBeLessThan(1e-2);
  });
});

describe('ReferenceEngine caching and splitting', () => {
  const w = syntheticWeights({ layers: 4, seed: 21 });

  it('prefill in one call equals token-by-token decode, bitwise', async () => {
    const whole = new ReferenceEngine(w);
    const byToken = new ReferenceEngine(w);
    const a = await whole.runLayers([0, 4], 0, await whole.embed(ids));
    const rows: Float32Array[] = [];
    for (let t = 0; t < ids.length; t++) rows.push(await byToken.runLayers([0, 4], t, await byToken.embed([ids[t]!])));
    const b = new Float32Array(a.length);
    rows.forEach((r, t) => b.set(r, t * r.length));
    expect(b).toEqual(a);
    expect(whole.kvLength()).toBe(ids.length);
    expect(byToken.kvLength()).toBe(ids.length);
  });

  for (const k of [1, 2, 3]) {
    it(`layers [0,${k}) then [${k},4) on the hidden state equal [0,4), bitwise, on one engine and on two`, async () => {
      const full = new ReferenceEngine(w);
      const want = await full.runLayers([0, 4], 0, await full.embed(ids));

      const one = new ReferenceEngine(w);
      const mid = await one.runLayers([0, k], 0, await one.embed(ids));
      expect(one.kvLength()).toBe(0); // layers k.. have not seen the tokens yet
      expect(await one.runLayers([k, 4], 0, mid)).toEqual(want);

      const front = new ReferenceEngine(weightsSubset(w, 0, k, { embedding: true }));
      const back = new ReferenceEngine(weightsSubset(w, k, 4, { head: true }));
      expect(front.range).toEqual([0, k]);
      expect(front.hasHead).toBe(false);
      expect(back.hasHead).toBe(true);
      const split = await back.runLayers([k, 4], 0, await front.runLayers([0, k], 0, await front.embed(ids)));
      expect(split).toEqual(want);
      expect(await back.logits(split)).toEqual(await full.logits(want));
    });
  }

  it('truncate restores an earlier state: recomputing the tail gives the same hidden states', async () => {
    const e = new ReferenceEngine(w);
    const first = await e.runLayers([0, 4], 0, await e.embed(ids));
    await e.truncate(3);
    expect(e.kvLength()).toBe(3);
    const tail = await e.runLayers([0, 4], 3, await e.embed(ids.slice(3)));
    expect(tail).toEqual(first.slice(3 * w.config.hiddenSize));
  });

  it('greedy decode loop produces varied tokens (not one token repeated)', async () => {
    const e = new ReferenceEngine(w);
    let hidden = await e.runLayers([0, 4], 0, await e.embed(ids));
    const out: number[] = [];
    for (let i = 0; i < 12; i++) {
      const id = argmax(await e.logits(hidden));
      expect(await sampleNext(e, hidden, { temperature: 0 })).toBe(id);
      out.push(id);
      hidden = await e.runLayers([0, 4], e.kvLength(), await e.embed([id]));
    }
    expect(new Set(out).size).toBeGreaterThan(3);
  });
});

describe('ReferenceEngine errors leave the cache as it was', () => {
  const w = syntheticWeights({ layers: 2, seed: 31 });

  it('positions that do not continue the cache: PositionError naming the layer', async () => {
    const e = new ReferenceEngine(w);
    await e.runLayers([0, 2], 0, await e.embed([1, 2]));
    await expect(e.runLayers([0, 2], 3, await e.embed([3]))).rejects.toThrow(PositionError);
    await expect(e.runLayers([0, 2], 1, await e.embed([3]))).rejects.toThrow(/layer 0: position 1 does not continue its KV cache of 2 tokens/);
    expect(e.kvLength()).toBe(2);
  });

  it('a range outside the engine: PositionError', async () => {
    const e = new ReferenceEngine(weightsSubset(w, 0, 1, { embedding: true }));
    await expect(e.runLayers([0, 2], 0, await e.embed([1]))).rejects.toThrow(/layers \[0, 2\) are not inside this engine's \[0, 1\)/);
  });

  it('past the context: ContextFullError, nothing written', async () => {
    const e = new ReferenceEngine(w, { ctx: 4 });
    await e.runLayers([0, 2], 0, await e.embed([1, 2, 3]));
    await expect(e.runLayers([0, 2], 3, await e.embed([4, 5]))).rejects.toThrow(ContextFullError);
    expect(e.kvLength()).toBe(3);
    expect(e.layerKvLength(0)).toBe(3);
  });

  it('embedding or head missing: EngineUsageError', async () => {
    const middle = new ReferenceEngine(weightsSubset(w, 1, 2, {}));
    await expect(middle.embed([1])).rejects.toThrow(EngineUsageError);
    await expect(middle.logits(new Float32Array(w.config.hiddenSize))).rejects.toThrow(/holds no head/);
  });

  it('hidden of the wrong size: EngineUsageError', async () => {
    const e = new ReferenceEngine(w);
    await expect(e.runLayers([0, 2], 0, new Float32Array(5))).rejects.toThrow(/hidden has 5 values, not a whole number of rows of 64/);
  });

  it('a range asking for layers not loaded: EngineUsageError at construction', () => {
    expect(() => new ReferenceEngine(weightsSubset(w, 0, 1, {}), { range: [0, 2] })).toThrow(/layer 1 is not in the loaded weights/);
  });
});
