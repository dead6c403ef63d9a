// Issue 29 acceptance 2 (Node half), Qwen3.5 hybrids on the CPU (WASM) engine: every tiny hybrid golden
// (dense and MoE; safetensors, GGUF Q8_0 and Q4_K_M; test/goldens/tiny-hybrid-greedy.json) gives the
// golden's 32 greedy tokens; a prefill in chunks of 3 gives the same; and checkpoints (acceptance 3's
// single-device half): the pinned snapshot after a system prompt lets a new conversation compute only
// what follows and equal a run from scratch (also on 2 threads), and a truncate to a point without a
// snapshot is refused with nothing changed. The mixers' conv, delta rule and norms are WASM kernels
// (src/cpu/asm/gated-delta.ts) on state in the kernels' memory; test/unit/cpu/gated-delta-kernels.test.ts
// holds them to the reference.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../../src/cpu/create-engine.ts';
import type { CpuEngine } from '../../../src/cpu/engine.ts';
import { Generator } from '../../../src/model/generator.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { resolveModelSource } from '../../../src/model/sources/resolve.ts';
import { snapshotBytes, type ModelWeights } from '../../../src/model/types.ts';
import { HYBRID_GOLDEN_FILE, HYBRID_GOLDEN_MODELS, hybridGoldenSource, type HybridGoldenFile, type HybridGoldenName } from '../../goldens/hybrid-golden-setup.ts';

const golden = JSON.parse(readFileSync(HYBRID_GOLDEN_FILE, 'utf8')) as HybridGoldenFile;
const NAMES = Object.keys(HYBRID_GOLDEN_MODELS) as HybridGoldenName[];
const PROMPT = golden.promptIds;
const CTX = 96;
const SLOW = 240_000;   // a fresh clone writes the tiny hybrids (full Qwen3 vocabulary) first

const load = async (name: HybridGoldenName): Promise<ModelWeights> =>
  loadWeights(await resolveModelSource(await hybridGoldenSource(name)), { layers: [0, 4], embedding: true, head: true });

describe.each(NAMES)('tiny hybrid %s on the CPU engine', (name) => {
  it('32 greedy tokens equal the golden', async () => {
    const weights = await load(name);
    expect(new Set(weights.config.hybrid!.layerTypes)).toEqual(new Set(['linear_attention', 'full_attention']));
    const engine = await createCpuEngine(weights, { ctx: CTX });
    expect(engine.recurrent).toBe(true);
    const r = await new Generator(engine, { ctx: CTX }).generate(PROMPT, { maxNewTokens: golden.maxNewTokens });
    expect(r.ids).toEqual(golden.models[name].ids);
    await engine.dispose();
  }, SLOW);
});

describe('tiny dense hybrid on the CPU engine: chunks and checkpoints', () => {
  let weights: ModelWeights;
  beforeAll(async () => { weights = await load('dense-safetensors'); }, SLOW);
  const engine = (): Promise<CpuEngine> => createCpuEngine(weights, { ctx: CTX });
  const system = PROMPT.slice(0, 6);
  const userA = [...PROMPT.slice(6), 1234, 5678];
  const userB = [40, 1079, 311, 1281, 264, 1273, 13];
  const greedy = (maxNewTokens: number, pinAt?: number) => ({ maxNewTokens, ...(pinAt === undefined ? {} : { pinAt }) });
  const fromScratch = async (prompt: number[], n: number): Promise<number[]> => {
    const ours = (await new Generator(await engine(), { ctx: CTX }).generate(prompt, greedy(n))).ids;
    const ref = (await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(prompt, greedy(n))).ids;
    expect(ours).toEqual(ref);
    return ours;
  };

  it('on 2 threads (a shared memory holds the recurrent state) it gives the golden, and its pinned checkpoint restores', async () => {
    const e = await createCpuEngine(weights, { ctx: CTX, threads: 2 });
    try {
      expect(e.stats().threads).toBe(2);
      const g = new Generator(e, { ctx: CTX });
      expect((await g.generate(PROMPT, greedy(32, system.length))).ids).toEqual(golden.models['dense-safetensors'].ids);
      const again = await g.generate([...system, ...userB], greedy(8, system.length));
      expect(again.stats).toMatchObject({ promptReused: system.length, promptComputed: userB.length });
      expect(again.ids).toEqual(await fromScratch([...system, ...userB], 8));
    } finally {
      await e.dispose();
    }
  }, SLOW);

  it('a prefill in chunks of 3 tokens gives the golden', async () => {
    const r = await new Generator(await engine(), { ctx: CTX, prefillChunk: 3 }).generate(PROMPT, greedy(32));
    expect(r.ids).toEqual(golden.models['dense-safetensors'].ids);
  }, SLOW);

  it('the pinned checkpoint: a new conversation after the system prompt computes only what follows and equals a run from scratch', async () => {
    const e = await engine();
    const g = new Generator(e, { ctx: CTX, ckpt: 2 });
    const first = await g.generate([...system, ...userA], greedy(8, system.length));
    expect(g.checkpoints).toEqual({ pinned: system.length, answers: [system.length + userA.length] });
    expect(e.stats()).toMatchObject({ snapshots: 2, snapshotPositions: [system.length, system.length + userA.length] });
    expect(e.stats().bytesPerSnapshot).toBe(snapshotBytes(weights.config, [0, 4]));
    const before = e.stats().layerTokens;
    const second = await g.generate([...system, ...userB], greedy(8, system.length));
    expect(second.stats).toMatchObject({ promptReused: system.length, promptComputed: userB.length });
    expect(e.stats().layerTokens - before).toBe(userB.length + 7);
    expect(second.ids).toEqual(await fromScratch([...system, ...userB], 8));
    expect(first.ids).toEqual(await fromScratch([...system, ...userA], 8));
  }, SLOW);

  it('a point with no snapshot is refused with nothing changed, then reached from the last snapshot before it', async () => {
    const e = await engine();
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
});
