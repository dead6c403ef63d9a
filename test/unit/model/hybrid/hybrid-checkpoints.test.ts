// Checkpoints of a hybrid model (issue 14, acceptance 3): the engine snapshots its Gated DeltaNet state at
// a checkpoint and restores it with the KV cut; the Generator pins after the system prompt, answers
// continue from it exactly as from scratch, only the suffix is computed, and a point with no snapshot is
// reached by recomputing from the last one. Snapshot memory is reported.
import { beforeAll, describe, expect, it } from 'vitest';
import type { DecodeRequest, LayerEngine, LayerRange } from '../../../../src/model/engine-types.ts';
import { Generator } from '../../../../src/model/generator.ts';
import { loadWeights } from '../../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../../src/model/reference/reference-engine.ts';
import { NodeFolderSource } from '../../../../src/model/sources/node-folder.ts';
import type { ModelWeights } from '../../../../src/model/types.ts';
import { tinyModelDir } from '../../../helpers/tiny-model.ts';

const OPTS = {
  layers: 4, hidden: 48, heads: 4, kvHeads: 2, headDim: 16, intermediate: 40, vocab: 300, seed: 9,
  hybrid: { linearKeyHeads: 2, linearValueHeads: 4, linearHeadDim: 8, convKernel: 4 },
};
let w: ModelWeights;
beforeAll(async () => {
  w = await loadWeights(new NodeFolderSource(await tinyModelDir(OPTS)), { layers: [0, 4], embedding: true, head: true });
}, 60_000);

const system = [11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22];        // "system prompt + tools": 12 tokens
const userA = [101, 102, 103, 104, 105, 106];
const userB = [201, 202, 203, 204, 205, 206, 207, 208];

async function forward(e: ReferenceEngine, start: number, ids: number[]): Promise<Float32Array> {
  return e.logits(await e.runLayers([0, 4], start, await e.embed(ids)));
}

describe('ReferenceEngine snapshots', () => {
  it('restoring a snapshot continues exactly like a fresh engine; other positions are refused with nothing changed', async () => {
    const e = new ReferenceEngine(w, { ctx: 64 });
    await forward(e, 0, system);
    await e.snapshot(12);
    await forward(e, 12, userA);
    expect(e.kvLength()).toBe(18);
    await expect(e.truncate(15)).rejects.toThrow(/SnapshotMissingError|no recurrent-state snapshot at position 15 \(snapshots at 12; the state is at 18\)/);
    expect(e.kvLength()).toBe(18);                                      // nothing changed
    await e.truncate(12);
    expect(e.kvLength()).toBe(12);
    const fresh = new ReferenceEngine(w, { ctx: 64 });
    expect(await forward(e, 12, userB)).toEqual(await forward(fresh, 0, [...system, ...userB]));
    await e.truncate(0);
    expect(await forward(e, 0, [...system, ...userB])).toEqual(await forward(new ReferenceEngine(w, { ctx: 64 }), 0, [...system, ...userB]));
  });

  it('without the snapshot the continuation differs (the state matters), and a snapshot must be taken at the cache length', async () => {
    const e = new ReferenceEngine(w, { ctx: 64 });
    await forward(e, 0, system);
    await expect(e.snapshot(11)).rejects.toThrow(/snapshot at 11: layer 0 holds 12 tokens/);
    await e.snapshot(12);
    await forward(e, 12, userA);
    // Cutting only the KV (what a dense model does) would leave the state of 18 tokens: compare with that.
    const stale = new ReferenceEngine(w, { ctx: 64 });
    await forward(stale, 0, [...system, ...userA]);
    await e.truncate(12);
    expect(await forward(e, 12, userB)).not.toEqual(await forward(stale, 18, userB));
  });

  it('reports snapshot memory: every linear layer\'s conv and delta state in f32; drops snapshots past a restore; bounds their number', async () => {
    const e = new ReferenceEngine(w, { ctx: 64, maxSnapshots: 2 });
    expect(e.recurrent).toBe(true);
    const C = 2 * 2 * 8 + 4 * 8, perLayer = ((4 - 1) * C + 4 * 8 * 8) * 4;
    expect(e.snapshotStats()).toEqual({ snapshots: 0, positions: [], bytesPerSnapshot: 3 * perLayer, bytes: 0 });
    await forward(e, 0, system.slice(0, 4));
    await e.snapshot(4);
    await forward(e, 4, system.slice(4, 8));
    await e.snapshot(8);
    await forward(e, 8, system.slice(8));
    await expect(e.snapshot(12)).rejects.toThrow(/at most 2 recurrent-state snapshots/);
    expect(e.snapshotStats()).toMatchObject({ snapshots: 2, positions: [4, 8], bytes: 2 * 3 * perLayer });
    await e.truncate(4);
    expect(e.snapshotStats().positions).toEqual([4]);
    await e.releaseSnapshot(4);
    expect(e.snapshotStats().snapshots).toBe(0);
  });
});

/** Counts the tokens that run through the layers, to show what a request recomputes. */
class Counting implements LayerEngine {
  layerTokens = 0;
  constructor(private readonly e: ReferenceEngine) {}
  get range(): LayerRange { return this.e.range; }
  get hasEmbedding() { return this.e.hasEmbedding; }
  get hasHead() { return this.e.hasHead; }
  get recurrent() { return this.e.recurrent; }
  kvLength() { return this.e.kvLength(); }
  truncate(n: number) { return this.e.truncate(n); }
  snapshot(p: number) { return this.e.snapshot(p); }
  releaseSnapshot(p: number) { return this.e.releaseSnapshot(p); }
  embed(ids: number[]) { return this.e.embed(ids); }
  runLayers(r: LayerRange, s: number, h: Float32Array) { this.layerTokens += h.length / this.e.config.hiddenSize; return this.e.runLayers(r, s, h); }
  decode(r: DecodeRequest) { this.layerTokens += r.tokens?.length ?? 0; return this.e.decode(r); }
  dispose() { return this.e.dispose(); }
}

describe('Generator on a hybrid model', () => {
  const fresh = async (prompt: number[]) => new Generator(new ReferenceEngine(w, { ctx: 96 }), { ctx: 96 }).generate(prompt, { maxNewTokens: 8 });

  it('an answer after the pinned system prompt is computed from the pin and equals one from scratch', async () => {
    const engine = new Counting(new ReferenceEngine(w, { ctx: 96 }));
    const g = new Generator(engine, { ctx: 96 });
    const first = await g.generate([...system, ...userA], { maxNewTokens: 8, pinAt: system.length });
    expect(first.stats.promptComputed).toBe(18);
    expect(g.checkpoints).toEqual({ pinned: 12, answers: [18] });
    // A rewritten conversation (after compaction, or another user turn): everything after the pin.
    engine.layerTokens = 0;
    const second = await g.generate([...system, ...userB], { maxNewTokens: 8, pinAt: system.length });
    expect(second.stats).toMatchObject({ promptReused: 12, promptComputed: userB.length });
    expect(engine.layerTokens).toBe(userB.length + second.ids.length - 1);   // the suffix, then one token per decode step
    expect(second.ids).toEqual((await fresh([...system, ...userB])).ids);
    expect(first.ids).toEqual((await fresh([...system, ...userA])).ids);
  });

  it('a prompt leaving the cache between checkpoints goes back to the last snapshot before it and recomputes from there', async () => {
    const g = new Generator(new ReferenceEngine(w, { ctx: 96 }), { ctx: 96 });
    const a = [...system, ...userA];
    await g.generate(a, { maxNewTokens: 4, pinAt: 12 });
    const b = [...a.slice(0, 15), 250, 251, 252];                       // common prefix 15: no snapshot there
    const r = await g.generate(b, { maxNewTokens: 8, pinAt: 12 });
    expect(r.stats).toMatchObject({ promptReused: 12, promptComputed: 6 });
    expect(r.ids).toEqual((await fresh(b)).ids);
    // The same prompt again restores its answer checkpoint and computes nothing.
    const again = await g.generate(b, { maxNewTokens: 8, pinAt: 12 });
    expect(again.stats).toMatchObject({ promptReused: b.length, promptComputed: 0 });
    expect(again.ids).toEqual(r.ids);
  });

  it('evicted answer checkpoints release their snapshots; the pin keeps its own', async () => {
    const engine = new ReferenceEngine(w, { ctx: 96 });
    const g = new Generator(engine, { ctx: 96, ckpt: 1 });
    await g.generate([...system, ...userA], { maxNewTokens: 2, pinAt: 12 });
    expect(engine.snapshotStats().positions).toEqual([12, 18]);
    await g.generate([...system, ...userB], { maxNewTokens: 2, pinAt: 12 });
    expect(engine.snapshotStats().positions).toEqual([12, 20]);
    expect(g.checkpoints).toEqual({ pinned: 12, answers: [20] });
    const off = new ReferenceEngine(w, { ctx: 96 });
    await new Generator(off, { ctx: 96, ckpt: 0 }).generate([...system, ...userA], { maxNewTokens: 2, pinAt: 12 });
    expect(off.snapshotStats().snapshots).toBe(0);
  });
});
