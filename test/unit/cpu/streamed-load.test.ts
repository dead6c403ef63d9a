// Issue 25's bound on the CPU engine: weights from openWeights (every matrix a stream ref) are read
// straight into their places in the WASM memory, so a guest holds its share once plus the load's in-flight
// bound while it loads, never a JS copy beside the WASM one. The tokens are the goldens (GGUF dense and
// MoE), the pieces in flight stay within LOAD_IN_FLIGHT_BYTES, and what JS still holds of the weights
// afterwards is only the small tensors (norms), not the matrices. Every golden streamed through the row,
// and a file cut short mid-load, are the engine conformance suite's (test/helpers/engine-conformance.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../../src/cpu/create-engine.ts';
import { Generator } from '../../../src/model/generator.ts';
import { LOAD_IN_FLIGHT_BYTES } from '../../../src/model/load-stream.ts';
import { loadWeights, openWeights } from '../../../src/model/load-weights.ts';
import { resolveModelSource } from '../../../src/model/sources/resolve.ts';
import type { ModelWeights } from '../../../src/model/types.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile } from '../../goldens/gguf-golden-setup.ts';
import { tinyGgufModel } from '../../helpers/tiny-model.ts';

const ggufGolden = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
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
