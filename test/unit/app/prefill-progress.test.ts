// Per-device prompt reading in a room (issue 28 item 4): a real RoomEngine over CPU reference engines in
// three stages, micro-chunks of 4, its onStageRows fed to PrefillByDevice with the Generator's onPrefill,
// as host-session.ts wires them. Each device's count rises chunk by chunk, in pipeline order (a later
// stage never ahead of an earlier one), and ends at the prompt's length; decode steps are not counted;
// reused tokens count as read on every device.
import { describe, expect, it } from 'vitest';
import type { LayerEngine } from '../../../src/model/engine-types.ts';
import { Generator } from '../../../src/model/generator.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { RoomEngine } from '../../../src/room/room-engine.ts';
import { PrefillByDevice } from '../../../src/app/prefill-progress.ts';
import { syntheticWeights, weightsSubset } from '../model/reference/synthetic-model.ts';

const weights = syntheticWeights({ layers: 3, seed: 7 });
const { hiddenSize, numLayers } = weights.config;
const ctx = 128;
const part = (a: number, b: number, io = false) => new ReferenceEngine(weightsSubset(weights, a, b, { embedding: io, head: io }), { ctx, range: [a, b] });

function wired() {
  const host = part(0, 1, true);
  const stages: LayerEngine[] = [host, part(1, 2), part(2, 3)];
  const ids = new Map<LayerEngine, string>([[stages[0]!, 'host'], [stages[1]!, 'A'], [stages[2]!, 'B']]);
  const room = new RoomEngine(host, stages, { numLayers, hiddenSize, microChunk: 4 });
  const progress = new PrefillByDevice();
  const seen: Record<string, number>[] = [];
  const rooms: number[] = [];   // the chat's figure after each chunk
  room.onStageRows = (stage, rows) => {
    progress.rows([ids.get(stage)!], rows);
    const snap = progress.snapshot(['host', 'A', 'B']);
    if (snap) { seen.push({ ...snap.devices }); rooms.push(snap.done); }
  };
  return { room, progress, seen, rooms, generator: new Generator(room, { ctx, prefillChunk: 8 }) };
}

describe('PrefillByDevice: prompt tokens read per device as chunks pass through a room', () => {
  it('rises chunk by chunk on each device, in pipeline order, to the prompt length; decode steps are not counted', async () => {
    const { progress, seen, rooms, generator } = wired();
    const prompt = Array.from({ length: 18 }, (_, i) => (i * 7 + 3) % 90);
    const totals: number[] = [];
    await generator.generate(prompt, { maxNewTokens: 3, onPrefill: (done, total) => { progress.request(done, total); totals.push(total); } });
    expect(new Set(totals)).toEqual(new Set([18]));
    // 18 tokens in Generator chunks of 8 (8, 8, 2), each in micro-chunks of 4: 5 chunks through 3 stages.
    expect(seen).toHaveLength(15);
    for (const s of seen) {
      expect(s.host!).toBeGreaterThanOrEqual(s.A!);
      expect(s.A!).toBeGreaterThanOrEqual(s.B!);
    }
    expect(seen.at(-1)).toEqual({ host: 18, A: 18, B: 18 });
    expect(new Set(seen.map((s) => s.B)).size).toBeGreaterThan(3);   // it moved in steps, not at the end only
    // The chat's figure is the slowest card's, at every step: never "0 of 18" while the cards have moved.
    expect(rooms).toEqual(seen.map((s) => Math.min(s.host!, s.A!, s.B!)));
    expect(progress.reading).toBe(false);                            // done: decode rows after it are ignored
    expect(progress.snapshot(['host', 'A', 'B'])).toBeNull();
  });

  it('reused tokens count as read everywhere; a new request starts from its own reuse', async () => {
    const { progress, seen, generator } = wired();
    const p1 = Array.from({ length: 10 }, (_, i) => (i * 5 + 1) % 90);
    const a1 = await generator.generate(p1, { maxNewTokens: 2, onPrefill: (d, t) => progress.request(d, t) });
    seen.length = 0;
    const p2 = [...p1, ...a1.ids, 4, 8, 15, 16, 23, 42];
    const r = await generator.generate(p2, { maxNewTokens: 1, onPrefill: (d, t) => progress.request(d, t) });
    const reused = r.stats.promptReused;
    expect(reused).toBeGreaterThan(0);
    expect(Math.min(...seen.map((s) => s.B!))).toBe(reused);     // B starts from the reuse, before its first chunk
    expect(seen[0]!.host).toBeGreaterThan(reused);              // the host's first chunk adds to it
    expect(seen.at(-1)).toEqual({ host: p2.length, A: p2.length, B: p2.length });
  });

  it('outside a prefill rows are ignored; counts never pass the total', () => {
    const p = new PrefillByDevice();
    p.rows(['A'], 5);
    expect(p.snapshot(['A'])).toBeNull();
    p.request(0, 6);
    p.rows(['A', 'B'], 4);
    p.rows(['A'], 4);
    expect(p.snapshot(['A', 'B'])).toEqual({ total: 6, done: 4, devices: { A: 6, B: 4 } });
    p.request(6, 6);
    expect(p.snapshot(['A'])).toBeNull();
  });
});
