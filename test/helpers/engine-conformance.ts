// The engine conformance suite: the same cases for every row of the engine table (src/engines/table.ts),
// each engine made the way a room device makes it, through its row's loadShare (streamed where the row
// streams). test/unit/engines/conformance.test.ts runs it for the rows that run in Node (reference,
// wasm); test/gpu/conformance.test.ts for the WebGPU row (Dawn on lavapipe). The cases:
//   - goldens of every family and format: dense Qwen3 (BF16 safetensors, MLC q4f16_1), GGUF Q8_0 and
//     Q4_K_M (dense and MoE), a qwen3_moe safetensors model (the reference row's tokens), the Qwen3.5
//     hybrids (dense and MoE; safetensors, GGUF Q8_0 and Q4_K_M);
//   - the pinned checkpoint: after a system prompt, a new conversation computes only what follows it
//     (truncate back to the pin, continue) and equals a fresh engine's run;
//   - a split room (three engines of the row over layer ranges) gives one device's golden tokens;
//   - a q8_0 KV cache gives the reference row's q8_0 tokens;
//   - a streamed load: the golden, with at most LOAD_IN_FLIGHT_BYTES of weights in flight in JS;
//   - refusals: a file cut short and a file that is not a model are refused by name.
// Engine-specific tests (kernel oracles, autotune, threads, the worker) stay with their engine.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EngineOptions, EngineRow, LoadedShare } from '../../src/engines/contract.ts';
import type { LayerEngine, LayerRange } from '../../src/model/engine-types.ts';
import { HeaderError, TruncatedFileError } from '../../src/model/errors.ts';
import { Generator } from '../../src/model/generator.ts';
import type { KvCacheType } from '../../src/model/kv-quant.ts';
import { LOAD_IN_FLIGHT_BYTES } from '../../src/model/load-stream.ts';
import { openWeights } from '../../src/model/load-weights.ts';
import { NodeFolderSource } from '../../src/model/sources/node-folder.ts';
import { resolveModelSource } from '../../src/model/sources/resolve.ts';
import type { ModelSource } from '../../src/model/types.ts';
import { RoomEngine } from '../../src/room/room-engine.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile, type GgufGoldenName } from '../goldens/gguf-golden-setup.ts';
import { folderSource, GOLDEN_FILE, GOLDEN_FORMATS, GOLDEN_MODEL, type GoldenFile } from '../goldens/golden-setup.ts';
import { HYBRID_GOLDEN_FILE, HYBRID_GOLDEN_MODELS, hybridGoldenSource, type HybridGoldenFile, type HybridGoldenName } from '../goldens/hybrid-golden-setup.ts';
import { tinyGgufModel, tinyModelDir, type TinyModelDirOptions } from './tiny-model.ts';

const dense = JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as GoldenFile;
const gguf = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
const hybrid = JSON.parse(readFileSync(HYBRID_GOLDEN_FILE, 'utf8')) as HybridGoldenFile;
const GGUF_NAMES = Object.keys(GGUF_GOLDEN_MODELS) as GgufGoldenName[];
const HYBRID_NAMES = Object.keys(HYBRID_GOLDEN_MODELS) as HybridGoldenName[];
const CTX = 96;
/** A qwen3_moe safetensors model with a dense layer between two MoE ones (no golden file: the reference row's tokens). */
const MOE: TinyModelDirOptions = { layers: 3, seed: 11, moe: { experts: 8, topK: 2, intermediate: 64, mlpOnlyLayers: [1] } };
const WHOLE = (layers: number) => ({ layers: [0, layers] as LayerRange, embedding: true, head: true });

/** One row's engine over `request`'s share of `source`, made as a room device makes its share. */
export async function loadedShare(row: EngineRow, source: ModelSource, request: { layers: LayerRange; embedding?: boolean; head?: boolean }, kv: KvCacheType = 'f16', options: EngineOptions = {}): Promise<LoadedShare> {
  const share = await row.loadShare(options)({ model: '', modelKey: 'conformance', source, ctx: CTX, kv, request });
  if (!share) throw new Error(`${row.kind}: the row made no engine`);
  return share;
}

const shareOf = async (...a: Parameters<typeof loadedShare>): Promise<LayerEngine> => (await loadedShare(...a)).engine;

const greedy = async (engine: LayerEngine, prompt: number[], maxNewTokens: number): Promise<number[]> =>
  (await new Generator(engine, { ctx: CTX }).generate(prompt, { maxNewTokens })).ids;

/** Runs `fn` on the engine, then disposes it whatever happened. */
async function using<T>(engine: LayerEngine, fn: (e: LayerEngine) => Promise<T>): Promise<T> {
  try { return await fn(engine); } finally { await engine.dispose(); }
}

const ggufSource = async (name: GgufGoldenName): Promise<ModelSource> => resolveModelSource((await tinyGgufModel(GGUF_GOLDEN_MODELS[name])).path);
const hybridSource = async (name: HybridGoldenName): Promise<ModelSource> => resolveModelSource(await hybridGoldenSource(name));

/**
 * The suite for each of `rows`; `reference` is the oracle row (the reference engine's) where a case has
 * no golden file. `slow`: each case's timeout (a fresh clone writes the tiny models and compiles kernels first).
 */
export function engineConformance(rows: readonly EngineRow[], reference: EngineRow, slow: number): void {
  describe.each(rows)('the $kind row', (row) => {
    it.each(GOLDEN_FORMATS)('dense Qwen3 %s: 32 greedy tokens equal the golden', async (format) => {
      const source = folderSource(await tinyModelDir({ ...GOLDEN_MODEL, format }));
      const ids = await using(await shareOf(row, source, WHOLE(GOLDEN_MODEL.layers)), (e) => greedy(e, dense.promptIds, dense.maxNewTokens));
      expect(ids).toEqual(dense.formats[format].ids);
    }, slow);

    it.each(GGUF_NAMES)('GGUF %s: 32 greedy tokens equal the golden', async (name) => {
      const ids = await using(await shareOf(row, await ggufSource(name), WHOLE(4)), (e) => greedy(e, gguf.promptIds, gguf.maxNewTokens));
      expect(ids).toEqual(gguf.models[name].ids);
    }, slow);

    it('qwen3_moe safetensors (a dense layer between MoE ones): 32 greedy tokens equal the reference row\'s', async () => {
      const source = new NodeFolderSource(await tinyModelDir(MOE));
      const want = await using(await shareOf(reference, source, WHOLE(3)), (e) => greedy(e, gguf.promptIds, 32));
      expect(new Set(want).size).toBeGreaterThan(4);
      expect(await using(await shareOf(row, source, WHOLE(3)), (e) => greedy(e, gguf.promptIds, 32))).toEqual(want);
    }, slow);

    it.each(HYBRID_NAMES)('Qwen3.5 hybrid %s: 32 greedy tokens equal the golden', async (name) => {
      const ids = await using(await shareOf(row, await hybridSource(name), WHOLE(4)), async (e) => {
        expect(e.recurrent).toBe(true);
        return greedy(e, hybrid.promptIds, hybrid.maxNewTokens);
      });
      expect(ids).toEqual(hybrid.models[name].ids);
    }, slow);

    it('the pinned checkpoint: a new conversation after the system prompt computes only what follows and equals a fresh run', async () => {
      const source = await hybridSource('dense-safetensors');
      const system = hybrid.promptIds.slice(0, 6);
      const userA = [...hybrid.promptIds.slice(6), 1234, 5678], userB = [40, 1079, 311, 1281, 264, 1273, 13];
      const fresh = await using(await shareOf(row, source, WHOLE(4)), (e) => greedy(e, [...system, ...userB], 8));
      await using(await shareOf(row, source, WHOLE(4)), async (e) => {
        const g = new Generator(e, { ctx: CTX });
        await g.generate([...system, ...userA], { maxNewTokens: 8, pinAt: system.length });
        // compaction drops the first conversation: back to the pin, then the new one
        const again = await g.generate([...system, ...userB], { maxNewTokens: 8, pinAt: system.length });
        expect(again.stats).toMatchObject({ promptReused: system.length, promptComputed: userB.length });
        expect(again.ids).toEqual(fresh);
      });
    }, slow);

    it('a split room (three engines over [0, 1) + embedding + head, [1, 3), [3, 4)) gives one device\'s golden tokens', async () => {
      const source = await ggufSource('dense-Q4_K_M');
      const host = await loadedShare(row, source, { layers: [0, 1], embedding: true, head: true });
      const engines = [host.engine, await shareOf(row, source, { layers: [1, 3] }), await shareOf(row, source, { layers: [3, 4] })];
      try {
        const room = new RoomEngine(host.engine, engines, { numLayers: 4, hiddenSize: host.hiddenSize });
        expect(await greedy(room, gguf.promptIds, gguf.maxNewTokens)).toEqual(gguf.models['dense-Q4_K_M'].ids);
        expect(engines.map((e) => e.kvLength())).toEqual(engines.map(() => gguf.promptIds.length + gguf.maxNewTokens - 1));
      } finally {
        for (const e of engines) await e.dispose();
      }
    }, slow);

    it('a q8_0 KV cache gives the reference row\'s q8_0 tokens (dense and hybrid)', async () => {
      for (const source of [folderSource(await tinyModelDir({ ...GOLDEN_MODEL, format: 'safetensors' })), await hybridSource('dense-safetensors')]) {
        const want = await using(await shareOf(reference, source, WHOLE(4), 'q8_0'), (e) => greedy(e, hybrid.promptIds, 16));
        expect(await using(await shareOf(row, source, WHOLE(4), 'q8_0'), (e) => greedy(e, hybrid.promptIds, 16))).toEqual(want);
      }
    }, slow);

    it('a streamed load (GGUF dense-Q8_0): the golden, with at most LOAD_IN_FLIGHT_BYTES of weights in flight', async () => {
      const weights = await openWeights(await ggufSource('dense-Q8_0'), WHOLE(4));
      const pending = weights.pending!;
      expect(pending.tensors.size).toBeGreaterThan(10);
      const engine = await row.createEngine({})(weights, { ctx: CTX, range: [0, 4] });
      expect(await using(engine, (e) => greedy(e, gguf.promptIds, gguf.maxNewTokens))).toEqual(gguf.models['dense-Q8_0'].ids);
      expect(pending.peakInFlightBytes).toBeGreaterThan(0);
      expect(pending.peakInFlightBytes).toBeLessThanOrEqual(LOAD_IN_FLIGHT_BYTES);
    }, slow);

    it('refusals by name: a file cut short mid-load (TruncatedFileError), a file that is not a model (HeaderError)', async () => {
      const real = await ggufSource('dense-Q8_0');
      const file = real.modelFile!;
      const cut = Math.floor((await real.size!(file)) * 0.6);
      // the header says the full size, but reads past 60% of the file fail as a download cut mid-load does
      const truncated: ModelSource = Object.assign(Object.create(Object.getPrototypeOf(real) as object) as ModelSource, real, {
        readRange: async (p: string, a: number, b: number) => {
          if (p === file && b > cut) throw new TruncatedFileError(`needs bytes [${a}, ${b}) but the file is only ${cut} bytes long`, { file, fileSize: cut });
          return real.readRange(p, a, b);
        },
      });
      await expect(shareOf(row, truncated, WHOLE(4))).rejects.toBeInstanceOf(TruncatedFileError);
      const dir = mkdtempSync(join(tmpdir(), 'pooled-conformance-'));
      writeFileSync(join(dir, 'not-a-model.gguf'), new TextEncoder().encode('this is a text file, not a GGUF model\n'.repeat(64)));
      await expect((async () => shareOf(row, await resolveModelSource(join(dir, 'not-a-model.gguf')), WHOLE(4)))()).rejects.toBeInstanceOf(HeaderError);
    }, slow);
  });
}
