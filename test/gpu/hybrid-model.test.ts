// Issue 14 on the WebGPU engine: the tiny Qwen3.5 hybrid of the goldens (4 layers: 3 Gated DeltaNet + 1
// gated attention; n_k 2 ≠ n_v 4 linear heads; partial RoPE; the full Qwen3 vocabulary).
//   - 32 greedy tokens equal the reference's golden (tiny-hybrid-greedy.json) on the f32 and f16 paths,
//     from the BF16 safetensors (HF's value-head order) and from a BF16 GGUF written as llama.cpp's
//     converter writes it (value heads reordered: the tiled kernel path);
//   - a prefill cut into chunks of 3 gives the same tokens (the recurrent kernels walk tokens in order);
//   - a 3-way split room (three engines) equals the single engine;
//   - checkpoints: a restored pinned / answer checkpoint continues exactly like a run from scratch with
//     only the suffix computed, on one engine and across the split room; snapshot memory is reported.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebGPUEngine } from '../../src/gpu/create-engine.ts';
import { defaultTuning } from '../../src/gpu/tuning.ts';
import type { WebGPUEngine } from '../../src/gpu/engine.ts';
import { Generator } from '../../src/model/generator.ts';
import { loadWeights } from '../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import { resolveModelSource } from '../../src/model/sources/resolve.ts';
import { snapshotBytes, type ModelSource, type ModelWeights, type WeightRequest } from '../../src/model/types.ts';
import { RoomEngine } from '../../src/room/room-engine.ts';
import { HYBRID_GOLDEN_FILE, HYBRID_GOLDEN_MODELS, hybridGoldenSource, type HybridGoldenFile } from '../goldens/hybrid-golden-setup.ts';
import { tinyGgufModel } from '../helpers/tiny-model.ts';
import { testDevice } from './helpers.ts';

const golden = JSON.parse(readFileSync(HYBRID_GOLDEN_FILE, 'utf8')) as HybridGoldenFile;
const want = golden.models['dense-safetensors'].ids;
const PROMPT = golden.promptIds;
const CTX = 96;
const SLOW = 240_000;

let source: ModelSource;
let weights: ModelWeights;
const load = (req: Partial<WeightRequest> = {}) => loadWeights(source, { layers: [0, 4], embedding: true, head: true, ...req });

beforeAll(async () => {
  source = await resolveModelSource(await hybridGoldenSource('dense-safetensors'));
  weights = await load();
  expect(weights.config.hybrid!.layerTypes).toEqual(['linear_attention', 'linear_attention', 'linear_attention', 'full_attention']);
}, SLOW);

describe.each([false, true])('tiny dense hybrid on WebGPU (shader-f16 %s)', (useF16) => {
  let device: GPUDevice;
  beforeAll(async () => { device = await testDevice(useF16); });
  afterAll(() => device?.destroy());

  it('32 greedy tokens equal the reference golden; one submit per decode token', async () => {
    const engine = await createWebGPUEngine(weights, { device, ctx: CTX, useF16 });
    try {
      expect(engine.recurrent).toBe(true);
      const r = await new Generator(engine, { ctx: CTX }).generate(PROMPT, { maxNewTokens: 32 });
      expect(r.ids).toEqual(want);
      expect(engine.stats().last).toMatchObject({ op: 'decodeToken', submits: 1 });
      expect(engine.stats().useF16).toBe(useF16);
    } finally {
      await engine.dispose();
    }
  }, SLOW);

  // with the prefill attention tiles (shaders/attention_prefill_tiles.wgsl) forced: the CPU class runs the
  // per-head kernel by default, which the golden above covers; 3-token steps after a cached prefix
  it('a prefill in chunks of 3 tokens through the prefill attention tiles gives the same tokens', async () => {
    const base = defaultTuning(device);
    const tuning = { ...base, attention: { ...base.attention, prefill: 'tiles' as const } };
    const engine = await createWebGPUEngine(weights, { device, ctx: CTX, useF16, maxBatch: 3, tuning });
    try {
      const r = await new Generator(engine, { ctx: CTX }).generate(PROMPT, { maxNewTokens: 32 });
      expect(r.ids).toEqual(want);
      expect(engine.stats().kernels).toContain('prefill tiles');
      // the gated-attention layer (3) really runs the tiles at a prefill step (its profile names the kernel)
      const labels = (await engine.profileLayer(3, 0, { tokens: 3, repeat: 1, reps: 1 })).map((p) => p.label);
      expect(labels.filter((l) => l.endsWith('attention prefill tiles'))).toHaveLength(1);
    } finally {
      await engine.dispose();
    }
  }, SLOW);
});

describe('tiny dense hybrid on WebGPU: layouts, splits and checkpoints', () => {
  let device: GPUDevice;
  const engines: WebGPUEngine[] = [];
  const engine = async (w: ModelWeights, extra: Parameters<typeof createWebGPUEngine>[1] = {}) => {
    const e = await createWebGPUEngine(w, { device, ctx: CTX, ...extra });
    engines.push(e);
    return e;
  };
  beforeAll(async () => { device = await testDevice(true); });
  afterAll(async () => {
    for (const e of engines) await e.dispose();
    device?.destroy();
  });

  it('a BF16 GGUF as llama.cpp writes it (value heads tiled) gives the safetensors golden', async () => {
    const m = await tinyGgufModel({ ...HYBRID_GOLDEN_MODELS['dense-safetensors'].options, fileType: 'BF16' });
    const w = await loadWeights(await resolveModelSource(m.path), { layers: [0, 4], embedding: true, head: true });
    const mixer = [...w.layers.values()].map((l) => (l.mixer.kind === 'gated_delta_net' ? l.mixer.valueHeads : undefined));
    expect(mixer.slice(0, 3)).toEqual(['tiled', 'tiled', 'tiled']);
    const r = await new Generator(await engine(w), { ctx: CTX }).generate(PROMPT, { maxNewTokens: 32 });
    expect(r.ids).toEqual(want);
  }, SLOW);

  const split = async () => {
    const host = await engine(await load({ layers: [0, 1] }));
    const mid = await engine(await load({ layers: [1, 3], embedding: false, head: false }));
    const last = await engine(await load({ layers: [3, 4], embedding: false, head: false }));
    return { host, mid, last, room: new RoomEngine(host, [host, mid, last], { numLayers: 4, hiddenSize: weights.config.hiddenSize }) };
  };

  it('a 3-way split room ([0,1) + embedding + head, [1,3), [3,4)) equals the single engine', async () => {
    const { room, mid, last } = await split();
    expect([room.recurrent, mid.recurrent, last.recurrent]).toEqual([true, true, false]);   // [3,4) is the attention layer
    const r = await new Generator(room, { ctx: CTX }).generate(PROMPT, { maxNewTokens: 32 });
    expect(r.ids).toEqual(want);
    expect(last.kvLength()).toBe(PROMPT.length + 31);
  }, SLOW);

  const system = PROMPT.slice(0, 6);
  const userA = [...PROMPT.slice(6), 1234, 5678];
  const userB = [40, 1079, 311, 1281, 264, 1273, 13];
  const greedy = (maxNewTokens: number, pinAt?: number) => ({ maxNewTokens, ...(pinAt === undefined ? {} : { pinAt }) });
  const fromScratch = async (prompt: number[], n: number) => {
    const gpu = (await new Generator(await engine(weights), { ctx: CTX }).generate(prompt, greedy(n))).ids;
    const ref = (await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(prompt, greedy(n))).ids;
    expect(gpu).toEqual(ref);
    return gpu;
  };

  // the pinned checkpoint on one engine: the engine conformance suite's (test/helpers/engine-conformance.ts)
  it('a point with no snapshot is reached from the last one before it; a truncate there is refused with nothing changed', async () => {
    const e = await engine(weights);
    const g = new Generator(e, { ctx: CTX });
    const a = [...system, ...userA];
    await g.generate(a, greedy(4, system.length));
    const at = e.kvLength();
    await expect(e.truncate(system.length + 2)).rejects.toThrow(/no recurrent-state snapshot at position 8 \(snapshots at 6, 12; the state is at 15\)/);
    expect(e.kvLength()).toBe(at);
    const b = [...a.slice(0, system.length + 2), 777, 888, 999];
    const r = await g.generate(b, greedy(8, system.length));
    expect(r.stats).toMatchObject({ promptReused: system.length, promptComputed: 5 });
    expect(r.ids).toEqual(await fromScratch(b, 8));
    await expect(e.snapshot(3)).rejects.toThrow(/snapshot at 3: layer 0 holds/);
  }, SLOW);

  it('checkpoints across the 3-way split room: each engine snapshots its own linear layers, the restored answer equals a run from scratch', async () => {
    const { room, host, mid, last } = await split();
    const g = new Generator(room, { ctx: CTX });
    await g.generate([...system, ...userA], greedy(6, system.length));
    expect(host.stats().bytesPerSnapshot).toBe(snapshotBytes(weights.config, [0, 1]));
    expect(mid.stats().bytesPerSnapshot).toBe(snapshotBytes(weights.config, [1, 3]));
    expect(last.stats()).toMatchObject({ bytesPerSnapshot: 0, snapshots: 0 });
    expect(host.stats().snapshots).toBeGreaterThan(0);
    const before = mid.stats().layerTokens;
    const r = await g.generate([...system, ...userB], greedy(8, system.length));
    expect(r.stats).toMatchObject({ promptReused: system.length, promptComputed: userB.length });
    expect(mid.stats().layerTokens - before).toBe(userB.length + 7);
    expect(r.ids).toEqual(await fromScratch([...system, ...userB], 8));
  }, SLOW);
});
