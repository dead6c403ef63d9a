// The start-up tuning (src/gpu/autotune.ts): it times the adapter class's candidates, keeps the fastest
// whose result matches the CPU, caches the choice per adapter, and never keeps a wrong layout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { autotune } from '../../src/gpu/autotune.ts';
import { PipelineCache } from '../../src/gpu/pipelines.ts';
import { deviceTraits, layoutKey, matmulCandidates, matvecCandidates, tileKey } from '../../src/gpu/tuning.ts';
import { testDevice } from './helpers.ts';

describe('start-up matvec tuning on lavapipe', () => {
  let device: GPUDevice;
  beforeAll(async () => { device = await testDevice(true); });
  afterAll(() => device?.destroy());

  it('lavapipe is a CPU rasterizer with subgroups of 8: candidates are one-subgroup workgroups', () => {
    const t = deviceTraits(device);
    expect(t).toMatchObject({ adapterClass: 'cpu', subgroups: true, subgroupMinSize: 8 });
    const c = matvecCandidates(t);
    expect(c.length).toBeGreaterThanOrEqual(3);
    expect(c.every((l) => l.WG === 8)).toBe(true);
    expect(c.some((l) => l.subgroups) && c.some((l) => !l.subgroups)).toBe(true);
    const m = matmulCandidates(t).filter((l) => l.kind === 'rows');
    expect(m.some((l) => l.subgroups) && m.some((l) => !l.subgroups)).toBe(true);   // x shared by subgroups, and per lane
  });

  it('times every candidate matvec layout and prefill tile for each format, all correct here, keeps the fastest, then answers from the cache', async () => {
    const cache = new PipelineCache(device, true);
    const r = await autotune(cache, ['q4', 'dense']);
    expect(r.fromCache).toBe(false);
    const traits = deviceTraits(device);
    for (const format of ['q4', 'dense'] as const) {
      for (const [kind, keys, chosen] of [
        ['matvec', matvecCandidates(traits).map(layoutKey), layoutKey(r.tuning.matvec[format])],
        ['matmul', matmulCandidates(traits).map(tileKey), tileKey(r.tuning.matmul[format])],
      ] as const) {
        const mine = r.measured.filter((m) => m.format === format && m.kind === kind);
        expect(mine.map((m) => m.layout)).toEqual(keys);
        expect(mine.every((m) => Number.isFinite(m.microseconds) && m.microseconds > 0)).toBe(true);
        expect(chosen).toBe(mine.reduce((a, b) => (b.microseconds < a.microseconds ? b : a)).layout);
      }
    }
    const again = await autotune(cache, ['q4', 'dense']);
    expect(again).toMatchObject({ fromCache: true, measured: [] });
    expect(again.tuning).toEqual(r.tuning);
  });

  it('drops a layout whose result is wrong (a subgroup reduction over a workgroup of two subgroups)', async () => {
    const wrong = { WG: 16, LANES: 16, ROWS: 2, subgroups: true };    // subgroupAdd sums 8 of the 16 lanes
    const right = { WG: 16, LANES: 16, ROWS: 2, subgroups: false };
    const r = await autotune(new PipelineCache(device, true), ['q4'], { candidates: [wrong, right], matmul: false });
    expect(r.measured.map((m) => Number.isFinite(m.microseconds))).toEqual([false, true]);
    expect(r.tuning.matvec.q4).toEqual(right);
    const none = await autotune(new PipelineCache(device, true), ['dense'], { candidates: [wrong], matmul: false });
    expect(none.tuning.matvec.dense.subgroups).toBe(false);           // the always-correct fallback
  });

  it('times super-block layouts (shaders/matvec_superblock.wgsl) on the Q4_K weight beside a rows layout, each checked', async () => {
    const sb = { WG: 8, LANES: 8, ROWS: 2, subgroups: true, superblock: true };
    const sbShared = { WG: 32, LANES: 16, ROWS: 4, subgroups: false, superblock: true };
    const rows = { WG: 8, LANES: 8, ROWS: 2, subgroups: true };
    const r = await autotune(new PipelineCache(device, true), ['ggml'], { candidates: [sb, sbShared, rows], matmul: false });
    expect(r.measured.map((m) => m.layout)).toEqual(['sb-wg8l8r2sg', 'sb-wg32l16r4sh', 'wg8l8r2sg']);
    expect(r.measured.every((m) => Number.isFinite(m.microseconds))).toBe(true);   // all three agree with the CPU
    expect(layoutKey(r.tuning.matvec.ggml)).toBe(r.measured.reduce((a, b) => (b.microseconds < a.microseconds ? b : a)).layout);
  });

  it('times the dense 8-rows-a-group shape (a GPU candidate, here two groups of a subgroup of 8) on the BF16 weight beside a rows layout, each checked', async () => {
    const wide = { WG: 16, LANES: 8, ROWS: 8, subgroups: true };
    const rows = { WG: 8, LANES: 8, ROWS: 2, subgroups: true };
    const r = await autotune(new PipelineCache(device, true), ['dense'], { candidates: [wide, rows], matmul: false });
    expect(r.measured.map((m) => m.layout)).toEqual(['wg16l8r8sg', 'wg8l8r2sg']);
    expect(r.measured.every((m) => Number.isFinite(m.microseconds))).toBe(true);   // both agree with the CPU
    expect(layoutKey(r.tuning.matvec.dense)).toBe(r.measured.reduce((a, b) => (b.microseconds < a.microseconds ? b : a)).layout);
  });
});
