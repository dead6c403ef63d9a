// Qwen3.5 hybrids on the CPU (WASM) engine, what only it has: a prefill in chunks of 3 gives the
// golden; on 2 threads (the recurrent state in a shared memory) the golden and the pinned checkpoint
// hold; a truncate to a point without a snapshot is refused with nothing changed. Every hybrid golden
// and the pinned checkpoint on one thread are the engine conformance suite's
// (test/helpers/engine-conformance.ts). The mixers' conv, delta rule and norms are WASM kernels
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
import type { ModelWeights } from '../../../src/model/types.ts';
import { HYBRID_GOLDEN_FILE, hybridGoldenSource, type HybridGoldenFile, type HybridGoldenName } from '../../goldens/hybrid-golden-setup.ts';

const golden = JSON.parse(readFileSync(HYBRID_GOLDEN_FILE, 'utf8')) as HybridGoldenFile;
const PROMPT = golden.promptIds;
const CTX = 96;
const SLOW = 240_000;   // a fresh clone writes the tiny hybrids (full Qwen3 vocabulary) first

const load = async (name: HybridGoldenName): Promise<ModelWeights> =>
  loadWeights(await resolveModelSource(await hybridGoldenSource(name)), { layers: [0, 4], embedding: true, head: true });

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
