// Issue 25's bound on the CPU engine: weights from openWeights (every matrix a stream ref) are read
// straight into their places in the WASM memory, so a guest holds its share once plus the load's in-flight
// bound while it loads, never a JS copy beside the WASM one. The tokens are the goldens (GGUF dense and
// MoE, BF16 safetensors, GGUF hybrids), the pieces in flight stay within LOAD_IN_FLIGHT_BYTES, and what JS still holds
// of the weights afterwards is only the small tensors (norms), not the matrices.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../../src/cpu/create-engine.ts';
import { TruncatedFileError } from '../../../src/model/errors.ts';
import { Generator } from '../../../src/model/generator.ts';
import { LOAD_IN_FLIGHT_BYTES } from '../../../src/model/load-stream.ts';
import { loadWeights, openWeights } from '../../../src/model/load-weights.ts';
import { resolveModelSource } from '../../../src/model/sources/resolve.ts';
import type { ModelSource, ModelWeights } from '../../../src/model/types.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile } from '../../goldens/gguf-golden-setup.ts';
import { folderSource, GOLDEN_FILE, GOLDEN_MODEL, type GoldenFile } from '../../goldens/golden-setup.ts';
import { HYBRID_GOLDEN_FILE, hybridGoldenSource, type HybridGoldenFile } from '../../goldens/hybrid-golden-setup.ts';
import { tinyGgufModel, tinyModelDir } from '../../helpers/tiny-model.ts';

const ggufGolden = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
const golden = JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as GoldenFile;
const hybridGolden = JSON.parse(readFileSync(HYBRID_GOLDEN_FILE, 'utf8')) as HybridGoldenFile;
const CTX = 64;
const SLOW = 240_000;   // a fresh clone writes the tiny models (full Qwen3 vocabulary) and compiles the kernels first

/** Every byte the weights object still holds in JS (each Uint8Array once). */
function jsBytes(w: ModelWeights): number {
  const seen = new Set<ArrayBufferLike>();
  let n = 0;
  const visit = (x: unknown): void => {
    if (x instanceof Uint8Array) { if (!seen.has(x.buffer)) { seen.add(x.buffer); n += x.buffer.byteLength; } return; }
    if (x === null || typeof x !== 'object') return;
    for (const v of Array.isArray(x) ? x : Object.values(x)) visit(v);
  };
  visit([...w.layers.values()]);
  visit([w.embedding, w.lmHead, w.finalNorm]);
  return n;
}

describe.each(['dense-Q8_0', 'moe-Q4_K_M'] as const)('tiny GGUF %s streamed into the CPU engine', (name) => {
  it('the golden tokens; pieces in flight within the bound; JS keeps only the small tensors', async () => {
    const m = await tinyGgufModel(GGUF_GOLDEN_MODELS[name]);
    const source = await resolveModelSource(m.path);
    const request = { layers: [0, GGUF_GOLDEN_MODELS[name].layers] as [number, number], embedding: true, head: true };
    const weights = await openWeights(source, request);
    const pending = weights.pending!;
    expect(pending.tensors.size).toBeGreaterThan(10);
    const engine = await createCpuEngine(weights, { ctx: CTX });
    const r = await new Generator(engine, { ctx: CTX }).generate(ggufGolden.promptIds, { maxNewTokens: ggufGolden.maxNewTokens });
    expect(r.ids).toEqual(ggufGolden.models[name].ids);
    expect(pending.peakInFlightBytes).toBeGreaterThan(0);
    expect(pending.peakInFlightBytes).toBeLessThanOrEqual(LOAD_IN_FLIGHT_BYTES);
    // the same share loaded whole holds every matrix in JS; streamed, JS holds under 1% of that
    const whole = jsBytes(await loadWeights(source, request));
    const held = engine.stats().weightBytes ?? 0;
    expect(whole).toBeGreaterThan(held * 0.9);
    expect(jsBytes(weights)).toBeLessThan(whole * 0.01);
    await engine.dispose();
  }, SLOW);
});

describe('tiny BF16 safetensors streamed into the CPU engine', () => {
  it('32 greedy tokens equal the golden', async () => {
    const source = folderSource(await tinyModelDir({ ...GOLDEN_MODEL, format: 'safetensors' }));
    const weights = await openWeights(source, { layers: [0, GOLDEN_MODEL.layers], embedding: true, head: true });
    expect(weights.pending).toBeDefined();
    const engine = await createCpuEngine(weights, { ctx: CTX });
    const r = await new Generator(engine, { ctx: CTX }).generate(golden.promptIds, { maxNewTokens: golden.maxNewTokens });
    expect(r.ids).toEqual(golden.formats.safetensors.ids);
    await engine.dispose();
  }, SLOW);
});

describe('a file cut short while it streams into the CPU engine', () => {
  it('rejects with the read\'s TruncatedFileError (the 2-thread pool closed, nothing left waiting)', async () => {
    const m = await tinyGgufModel(GGUF_GOLDEN_MODELS['dense-Q8_0']);
    const real = await resolveModelSource(m.path);
    const file = real.modelFile!;
    const size = await real.size!(file);
    const cut = Math.floor(size * 0.6);
    // the header says the full size, but reads past 60% of the file fail as a download cut mid-load does
    const source: ModelSource = Object.assign(Object.create(Object.getPrototypeOf(real) as object) as ModelSource, real, {
      readRange: async (p: string, a: number, b: number) => {
        if (p === file && b > cut) throw new TruncatedFileError(`needs bytes [${a}, ${b}) but the file is only ${cut} bytes long`, { file, fileSize: cut });
        return real.readRange(p, a, b);
      },
    });
    const weights = await openWeights(source, { layers: [0, 4], embedding: true, head: true });
    await expect(createCpuEngine(weights, { ctx: CTX, threads: 2 })).rejects.toBeInstanceOf(TruncatedFileError);
  }, SLOW);
});

describe.each(['dense-Q8_0', 'moe-Q4_K_M'] as const)('tiny hybrid GGUF %s streamed into the CPU engine', (name) => {
  it('32 greedy tokens equal the golden (the conv taps, gates and norms the mixers read stream too)', async () => {
    const source = await resolveModelSource(await hybridGoldenSource(name));
    const weights = await openWeights(source, { layers: [0, 4], embedding: true, head: true });
    expect(weights.pending).toBeDefined();
    const engine = await createCpuEngine(weights, { ctx: 96 });
    const r = await new Generator(engine, { ctx: 96 }).generate(hybridGolden.promptIds, { maxNewTokens: hybridGolden.maxNewTokens });
    expect(r.ids).toEqual(hybridGolden.models[name].ids);
    await engine.dispose();
  }, SLOW);
});
