// One engine conformance suite, run once per row of the engine table (src/engines/table.ts), each engine
// made the way a room device makes it: through its row's loadShare. For every row that runs here: the
// tiny goldens of both layouts (BF16 safetensors, MLC q4f16_1), a checkpoint (cut back to the prompt,
// the answer continues as it first did) and a q8_0 KV cache giving the reference's q8_0 tokens.
// The WebGPU row needs a GPU (none in Node: its probe says so, and the gpu project covers its engine);
// which rows run here is asserted, so a row cannot drop out unseen.
// Start of a shared suite: the per-engine copies (test/gpu/*-model.test.ts, test/unit/cpu/*-model.test.ts)
// still stand beside it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { EngineRow } from '../../../src/engines/contract.ts';
import { ENGINES } from '../../../src/engines/table.ts';
import { decodeNext, type LayerEngine } from '../../../src/model/engine-types.ts';
import { Generator } from '../../../src/model/generator.ts';
import type { KvCacheType } from '../../../src/model/kv-quant.ts';
import { folderSource, GOLDEN_FILE, GOLDEN_FORMATS, GOLDEN_MODEL, type GoldenFile } from '../../goldens/golden-setup.ts';
import { tinyModelDir } from '../../helpers/tiny-model.ts';

const golden = JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as GoldenFile;
const CTX = 64;
const SLOW = 180_000;   // a fresh clone builds the tiny checkpoints and compiles the WASM kernels first

/** The rows whose engine runs in this process (their probe finds what they need). */
async function rowsHere(): Promise<EngineRow[]> {
  const out: EngineRow[] = [];
  for (const row of Object.values(ENGINES)) if (!(await row.probe(5, {})).failed) out.push(row);
  return out;
}

/** A whole-model engine of `row`, made as a room device makes its share. */
async function engineOf(row: EngineRow, format: (typeof GOLDEN_FORMATS)[number], kv: KvCacheType = 'f16'): Promise<LayerEngine> {
  const source = folderSource(await tinyModelDir({ ...GOLDEN_MODEL, format }));
  const share = await row.loadShare({})({
    model: '', modelKey: `golden-${format}`, source, ctx: CTX, kv,
    request: { layers: [0, GOLDEN_MODEL.layers], embedding: true, head: true },
  });
  if (!share) throw new Error(`${row.kind}: no engine`);
  return share.engine;
}

const answer = async (engine: LayerEngine, prompt: number[], n = golden.maxNewTokens): Promise<number[]> =>
  (await new Generator(engine, { ctx: CTX }).generate(prompt, { maxNewTokens: n })).ids;

it('runs the rows this process can run: every row but WebGPU (no GPU in Node)', async () => {
  expect((await rowsHere()).map((r) => r.kind)).toEqual(Object.keys(ENGINES).filter((k) => k !== 'webgpu'));
}, SLOW);

describe.each(Object.values(ENGINES).filter((r) => r.kind !== 'webgpu'))('the $kind row', (row) => {
  it.each(GOLDEN_FORMATS)('tiny %s: 32 greedy tokens equal the golden', async (format) => {
    const engine = await engineOf(row, format);
    expect(await answer(engine, golden.promptIds)).toEqual(golden.formats[format].ids);
    await engine.dispose();
  }, SLOW);

  it('a checkpoint: cut back to the prompt, the answer continues from there as it first did', async () => {
    const engine = await engineOf(row, 'safetensors');
    const first = await answer(engine, golden.promptIds, 8);
    await engine.truncate(golden.promptIds.length);
    expect(engine.kvLength()).toBe(golden.promptIds.length);
    expect(await decodeNext(engine, first[0]!, { temperature: 0 })).toBe(first[1]);
    expect(engine.kvLength()).toBe(golden.promptIds.length + 1);
    await engine.dispose();
  }, SLOW);

  it('a q8_0 KV cache gives the reference row\'s q8_0 tokens', async () => {
    const engine = await engineOf(row, 'safetensors', 'q8_0');
    const reference = await engineOf(ENGINES.reference!, 'safetensors', 'q8_0');
    expect(await answer(engine, golden.promptIds, 16)).toEqual(await answer(reference, golden.promptIds, 16));
    await Promise.all([engine.dispose(), reference.dispose()]);
  }, SLOW);
});
