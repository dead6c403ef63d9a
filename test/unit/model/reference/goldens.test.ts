// Issue 2 acceptance 2 and 3 on real tiny checkpoints (BF16 safetensors and q4f16_1 MLC, real tokenizer):
// the reference's exact greedy ids equal the checked-in goldens, read from disk and over HTTP Range;
// and running layers [0,k) then [k,L) on the hidden state equals [0,L) bitwise.
// The goldens are never regenerated here: `npx tsx test/goldens/make-goldens.ts` writes them on purpose.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWeights } from '../../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../../src/model/reference/reference-engine.ts';
import { resolveModelSource } from '../../../../src/model/sources/resolve.ts';
import { Tokenizer } from '../../../../src/model/tokenizer.ts';
import type { ModelSource } from '../../../../src/model/types.ts';
import {
  degeneracyReport, folderSource, GOLDEN_FILE, GOLDEN_FORMATS, GOLDEN_MODEL, GOLDEN_NEW_TOKENS, GOLDEN_PROMPT,
  referenceGreedy, type GoldenFile,
} from '../../../goldens/golden-setup.ts';
import { startRangeServer, type RangeServer } from '../../../helpers/range-server.ts';
import { tinyModelDir } from '../../../helpers/tiny-model.ts';

const golden = JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as GoldenFile;
const SLOW = 180_000;

it('the golden file records the setup the tests use', () => {
  expect(golden.model).toEqual(GOLDEN_MODEL);
  expect(golden.prompt).toBe(GOLDEN_PROMPT);
  expect(golden.maxNewTokens).toBe(GOLDEN_NEW_TOKENS);
  expect(Object.keys(golden.formats).sort()).toEqual([...GOLDEN_FORMATS].sort());
});

describe.each(GOLDEN_FORMATS)('tiny %s checkpoint', (format) => {
  const want = golden.formats[format].ids;
  let dir: string;
  let disk: ModelSource;

  beforeAll(async () => {
    dir = await tinyModelDir({ ...GOLDEN_MODEL, format });
    disk = folderSource(dir);
  }, SLOW);

  it('the golden ids are not degenerate', () => {
    expect(want).toHaveLength(GOLDEN_NEW_TOKENS);
    const report = degeneracyReport(want);
    expect(report.distinct).toBeGreaterThanOrEqual(16);
    expect(report.longestRun).toBeLessThanOrEqual(4);
    expect(report.distinctInLast8).toBeGreaterThanOrEqual(4);
  });

  it('the real tokenizer encodes the prompt to the recorded ids', async () => {
    expect((await Tokenizer.fromSource(disk)).encode(GOLDEN_PROMPT)).toEqual(golden.promptIds);
  }, SLOW);

  // greedy ids read from disk: the reference row of the engine conformance suite (test/helpers/engine-conformance.ts)
  describe('over HTTP', () => {
    let server: RangeServer;
    beforeAll(async () => {
      server = await startRangeServer(dir);
    });
    afterAll(async () => server.close());

    it('greedy ids read through the local Range server equal the golden', async () => {
      const source = await resolveModelSource(server.url);
      expect(await referenceGreedy(source, golden.promptIds)).toEqual(want);
      expect(server.totalBytesSent()).toBeGreaterThan(0);
      // safetensors is read with Range requests; MLC shards are read whole so their md5 can be checked.
      const ranged = server.requests.filter((r) => r.status === 206).length;
      expect(format === 'safetensors' ? ranged > 0 : ranged === 0).toBe(true);
    }, SLOW);
  });

  it('layers [0,k) then [k,L) on the hidden state equal [0,L) bitwise, each part loaded on its own', async () => {
    const L = GOLDEN_MODEL.layers;
    const ids = golden.promptIds;
    const whole = new ReferenceEngine(await loadWeights(disk, { layers: [0, L], embedding: true, head: true }), { ctx: 64 });
    const wantHidden = await whole.runLayers([0, L], 0, await whole.embed(ids));
    const wantLogits = await whole.logits(wantHidden);
    for (const k of [1, 2, 3]) {
      const front = new ReferenceEngine(await loadWeights(disk, { layers: [0, k], embedding: true }), { ctx: 64 });
      const back = new ReferenceEngine(await loadWeights(disk, { layers: [k, L], head: true }), { ctx: 64 });
      expect([front.range, front.hasHead, back.range, back.hasHead]).toEqual([[0, k], false, [k, L], true]);
      const mid = await front.runLayers([0, k], 0, await front.embed(ids));
      const hidden = await back.runLayers([k, L], 0, mid);
      expect(hidden).toEqual(wantHidden);
      expect(await back.logits(hidden)).toEqual(wantLogits);
    }
  }, SLOW);
});
