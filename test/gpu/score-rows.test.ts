// WebGPUEngine.decode on several rows (a speculative pass's candidates for every row in one submit and one read-back)
// against the CPU's choice on the engine's own logits (sortedCandidates): greedy rows, top-k rows,
// masked rows with an overrule reported, mixed in one call; rows needing every logit fall back.
import { beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { createWebGPUEngine } from '../../src/gpu/create-engine.ts';
import type { RowSampling } from '../../src/model/engine-types.ts';
import { allowOnly, sortedCandidates } from '../../src/model/sampler.ts';
import type { ModelWeights } from '../../src/model/types.ts';
import { loadTiny, testDevice, tinyModelFolder } from './helpers.ts';

describe('WebGPUEngine.decode of several rows (scoreRows)', () => {
  let weights: ModelWeights;
  beforeAll(async () => {
    weights = await loadTiny(path.join(await tinyModelFolder({ layers: 4, seed: 7 }), 'safetensors'));
  });

  it('every row in one read-back, as the CPU picks from the same logits', async () => {
    const device = await testDevice(false);
    const engine = await createWebGPUEngine(weights, { device, ctx: 64, useF16: false });
    try {
      const ids = [9707, 11, 1879, 0, 3555, 374];
      const hidden = await engine.runTokens(ids, engine.range, 0);              // [6, H]
      const H = weights.config.hiddenSize, V = weights.config.vocabSize;
      const logits = await Promise.all(ids.map((_, i) => engine.logits(hidden.subarray(i * H, (i + 1) * H))));
      const top = (i: number) => logits[i]!.reduce((best, v, id, all) => (v > all[best]! ? id : best), 0);
      const [top2, top4] = [top(2), top(4)];
      let overruled = 0;
      const notTop = allowOnly(Array.from({ length: V }, (_, id) => id).filter((id) => id !== top2 && id !== top4), V);
      const rows: RowSampling[] = [
        { opts: { temperature: 0 } },
        { opts: { temperature: 0.8, topK: 5, seed: 1 } },
        { opts: { temperature: 0 }, constraint: { ...notTop, overruled: () => { overruled++; } } },
        { opts: { temperature: 0.7, topK: 20, seed: 2 }, constraint: { ...notTop } },
        { opts: { temperature: 0.9, topK: 3, seed: 3 }, constraint: { ...notTop, overruled: () => { overruled++; } } },
        { opts: { temperature: 0 }, constraint: { ...notTop, greedy: true } },
      ];
      const before = engine.stats().readbacks;
      const got = await engine.decode({ hidden, rows });
      expect(engine.stats().readbacks - before).toBe(1);
      let cpuOverruled = 0;
      rows.forEach((r, i) => {
        const want = sortedCandidates(logits[i]!, r.opts, r.constraint && { ...r.constraint, ...(r.constraint.overruled ? { overruled: () => { cpuOverruled++; } } : {}) });
        const k = r.opts.temperature > 0 && !r.constraint?.greedy ? r.opts.topK! : 1;
        expect(got[i]!.ids, `row ${i}`).toEqual(want.ids.slice(0, k));
        got[i]!.logits.forEach((v, j) => expect(v).toBeCloseTo(want.logits[j]!, 5));
      });
      expect(overruled).toBe(2);                    // rows 2 and 4: the model's top choice is masked
      expect(overruled).toBe(cpuOverruled);
      // A row sampling every logit (no top-k) takes the full read-back path, with the same answer.
      const full = await engine.decode({ hidden: hidden.subarray(0, 2 * H), rows: [{ opts: { temperature: 0 } }, { opts: { temperature: 1, seed: 4 } }] });
      expect(full[1]!.ids).toEqual(sortedCandidates(logits[1]!, { temperature: 1 }).ids);
    } finally {
      await engine.dispose();
      device.destroy();
    }
  });
});
