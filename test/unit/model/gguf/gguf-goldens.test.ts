// Tiny GGUF checkpoints (dense and MoE, Q8_0 and llama.cpp's Q4_K_M mix, full Qwen3 vocabulary): the
// reference's greedy ids equal the checked-in goldens (read from disk and over HTTP Range), the room's
// split [0,k)+[k,L) equals [0,L) bitwise, and a BF16 GGUF of the safetensors golden model gives the
// safetensors golden. Goldens are written on purpose only: `npx tsx test/goldens/make-gguf-goldens.ts`.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWeights } from '../../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../../src/model/reference/reference-engine.ts';
import { resolveModelSource } from '../../../../src/model/sources/resolve.ts';
import { Tokenizer } from '../../../../src/model/tokenizer.ts';
import type { ModelSource } from '../../../../src/model/types.ts';
import { degeneracyReport, GOLDEN_FILE, GOLDEN_MODEL, GOLDEN_NEW_TOKENS, GOLDEN_PROMPT, referenceGreedy, type GoldenFile } from '../../../goldens/golden-setup.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile, type GgufGoldenName } from '../../../goldens/gguf-golden-setup.ts';
import { startRangeServer, type RangeServer } from '../../../helpers/range-server.ts';
import { tinyGgufModel } from '../../../helpers/tiny-model.ts';

const golden = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
const SLOW = 240_000;
const NAMES = Object.keys(GGUF_GOLDEN_MODELS) as GgufGoldenName[];

it('the GGUF golden file records the setup the tests use', () => {
  expect(golden.prompt).toBe(GOLDEN_PROMPT);
  expect(golden.maxNewTokens).toBe(GOLDEN_NEW_TOKENS);
  expect(Object.keys(golden.models).sort()).toEqual([...NAMES].sort());
  for (const n of NAMES) expect(golden.models[n].options).toEqual(GGUF_GOLDEN_MODELS[n]);
});

describe.each(NAMES)('tiny GGUF %s', (name) => {
  const want = golden.models[name].ids;
  let m: Awaited<ReturnType<typeof tinyGgufModel>>;
  let disk: ModelSource;
  beforeAll(async () => {
    m = await tinyGgufModel(GGUF_GOLDEN_MODELS[name]);
    disk = await resolveModelSource(m.path);
  }, SLOW);

  it('the golden ids are varied, and the prompt encodes to the recorded ids', async () => {
    const r = degeneracyReport(want);
    expect(want).toHaveLength(GOLDEN_NEW_TOKENS);
    expect(r.distinct).toBeGreaterThanOrEqual(16);
    expect(r.longestRun).toBeLessThanOrEqual(5);
    expect((await Tokenizer.fromSource(disk)).encode(GOLDEN_PROMPT)).toEqual(golden.promptIds);
  }, SLOW);

  // greedy ids read from disk: the reference row of the engine conformance suite (test/helpers/engine-conformance.ts)
  describe('over HTTP', () => {
    let server: RangeServer;
    beforeAll(async () => { server = await startRangeServer(m.dir); });
    afterAll(async () => server.close());
    it('greedy ids read by Range equal the golden', async () => {
      expect(await referenceGreedy(await resolveModelSource(`${server.url}/${m.file}`), golden.promptIds)).toEqual(want);
      expect(server.requests.filter((r) => r.status === 206).length).toBeGreaterThan(0);
    }, SLOW);
  });

  it('layers [0,k) then [k,L) equal [0,L) bitwise, each part loaded on its own', async () => {
    const L = GGUF_GOLDEN_MODELS[name].layers;
    const ids = golden.promptIds;
    const whole = new ReferenceEngine(await loadWeights(disk, { layers: [0, L], embedding: true, head: true }), { ctx: 64 });
    const wantHidden = await whole.runLayers([0, L], 0, await whole.embed(ids));
    for (const k of [1, 3]) {
      const a = new ReferenceEngine(await loadWeights(disk, { layers: [0, k], embedding: true }), { ctx: 64 });
      const b = new ReferenceEngine(await loadWeights(disk, { layers: [k, L] }), { ctx: 64 });
      const h = await b.runLayers([k, L], 0, await a.runLayers([0, k], 0, await a.embed(ids)));
      expect(h).toEqual(wantHidden);
    }
  }, SLOW);
});

it('a BF16 GGUF of the safetensors golden model gives the safetensors golden ids', async () => {
  const st = JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as GoldenFile;
  const m = await tinyGgufModel({ ...GOLDEN_MODEL, headDim: 16, intermediate: 128, fileType: 'BF16' });
  expect(await referenceGreedy(await resolveModelSource(m.path), st.promptIds)).toEqual(st.formats.safetensors.ids);
}, SLOW);
