// GGUF on the CPU (WASM) engine: every file type we read besides the goldens' (F32, F16, BF16, Q4_0,
// Q4_1, Q5_0, Q5_1, Q5_K_M, Q6_K) gives the reference engine's 32 greedy tokens, and a mixed room (a
// reference host, two CPU engines) gives the golden. The GGUF goldens and a room split over three CPU
// engines are the engine conformance suite's (test/helpers/engine-conformance.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../../src/cpu/create-engine.ts';
import { Generator } from '../../../src/model/generator.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { resolveModelSource } from '../../../src/model/sources/resolve.ts';
import { RoomEngine } from '../../../src/room/room-engine.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile } from '../../goldens/gguf-golden-setup.ts';
import { tinyGgufModel } from '../../helpers/tiny-model.ts';

const golden = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
const CTX = 64;
const SLOW = 240_000;   // a fresh clone writes the tiny GGUF (full Qwen3 vocabulary) first

describe.each(['F32', 'F16', 'BF16', 'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q5_K_M', 'Q6_K'] as const)('a tiny %s GGUF on the CPU engine', (fileType) => {
  it('32 greedy tokens equal the reference engine\'s', async () => {
    const m = await tinyGgufModel({ layers: 2, seed: 5, fileType });
    const weights = await loadWeights(await resolveModelSource(m.path), { layers: [0, 2], embedding: true, head: true });
    // the layers really hold the file type's blocks (Q5_K_M: Q5_K), read as stored
    const linears = [...weights.layers.values()].flatMap((l) => (l.mixer.kind === 'attention' && l.ffn.kind === 'dense' ? [l.mixer.qkv, l.mixer.o, l.ffn.gateUp, l.ffn.down] : []));
    const types = new Set(linears.flatMap((f) => (f.kind === 'ggml' ? f.segments.map((s) => s.type as string) : f.kind === 'dense' ? [f.weight.dtype] : [])));
    expect(types).toContain(fileType.replace('_M', ''));
    const want = await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(golden.promptIds, { maxNewTokens: 32 });
    const engine = await createCpuEngine(weights, { ctx: CTX });
    const r = await new Generator(engine, { ctx: CTX }).generate(golden.promptIds, { maxNewTokens: 32 });
    expect(r.ids).toEqual(want.ids);
    expect(new Set(want.ids).size).toBeGreaterThan(4);
    await engine.dispose();
  }, SLOW);
});

describe('a mixed room: a reference host and two CPU engines (tiny GGUF moe-Q8_0)', () => {
  it('reference [0, 1) + embedding + head, CPU [1, 3), CPU [3, 4): the golden tokens', async () => {
    const m = await tinyGgufModel(GGUF_GOLDEN_MODELS['moe-Q8_0']);
    const source = await resolveModelSource(m.path);
    const hostWeights = await loadWeights(source, { layers: [0, 1], embedding: true, head: true });
    const host = new ReferenceEngine(hostWeights, { ctx: CTX });
    const guests = [await createCpuEngine(await loadWeights(source, { layers: [1, 3] }), { ctx: CTX }), await createCpuEngine(await loadWeights(source, { layers: [3, 4] }), { ctx: CTX })];
    const room = new RoomEngine(host, [host, ...guests], { numLayers: 4, hiddenSize: hostWeights.config.hiddenSize });
    const r = await new Generator(room, { ctx: CTX }).generate(golden.promptIds, { maxNewTokens: golden.maxNewTokens });
    expect(r.ids).toEqual(golden.models['moe-Q8_0'].ids);
    for (const e of guests) await e.dispose();
  }, SLOW);
});
