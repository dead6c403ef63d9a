// The decode matvec candidates by device and format (src/gpu/tuning.ts matvecCandidates): the super-block
// layouts (shaders/matvec_superblock.wgsl) are offered to GPUs for the ggml formats only and 8-row groups
// for dense weights only, after the rows layouts (so the untimed default is what it was), with subgroup sums
// only where a row group fits a subgroup.
import { describe, expect, it } from 'vitest';
import { layoutKey, matvecCandidates, type DeviceTraits } from '../../../src/gpu/tuning.ts';

const gpu = (subgroups: boolean, subgroupMinSize: number): DeviceTraits => ({ adapterClass: 'discrete', subgroups, subgroupMinSize, maxInvocations: 256 });

describe('decode matvec candidates', () => {
  it('a GPU with subgroups of 32: super-block layouts for ggml only, after every rows layout, all distinct', () => {
    const t = gpu(true, 32);
    const ggml = matvecCandidates(t, 'ggml');
    const plain = matvecCandidates(t);
    expect(ggml.slice(0, plain.length)).toEqual(plain);
    const sb = ggml.slice(plain.length);
    expect(sb.length).toBeGreaterThanOrEqual(3);
    expect(sb.every((l) => l.superblock && l.LANES % 4 === 0 && (!l.subgroups || l.LANES <= 32))).toBe(true);
    expect(sb.some((l) => l.subgroups) && sb.some((l) => !l.subgroups)).toBe(true);
    expect(new Set(ggml.map(layoutKey)).size).toBe(ggml.length);
    expect(matvecCandidates(t, 'q4')).toEqual(plain);
  });

  it('dense weights: 8 rows a group of a subgroup (16 or 32 lanes) after every rows layout; none without subgroups of 16', () => {
    for (const size of [16, 32, 64]) {
      const t = gpu(true, size);
      const plain = matvecCandidates(t);
      const dense = matvecCandidates(t, 'dense');
      expect(dense.slice(0, plain.length)).toEqual(plain);
      expect(dense.slice(plain.length)).toEqual([64, 128].map((WG) => ({ WG, LANES: Math.min(size, 32), ROWS: 8, subgroups: true })));
      expect(new Set(dense.map(layoutKey)).size).toBe(dense.length);
    }
    for (const t of [gpu(false, 0), gpu(true, 8)]) expect(matvecCandidates(t, 'dense')).toEqual(matvecCandidates(t));
  });

  it('no subgroups (or subgroups of 8): only the workgroup-memory super-block layout', () => {
    for (const t of [gpu(false, 0), gpu(true, 8)]) {
      const sb = matvecCandidates(t, 'ggml').filter((l) => l.superblock);
      expect(sb).toEqual([{ WG: 128, LANES: 16, ROWS: 2, subgroups: false, superblock: true }]);
    }
  });

  it('CPU rasterizers get none (their start-up timing stays as short as it was)', () => {
    const cpu: DeviceTraits = { adapterClass: 'cpu', subgroups: true, subgroupMinSize: 8, maxInvocations: 256 };
    expect(matvecCandidates(cpu, 'ggml')).toEqual(matvecCandidates(cpu));
  });

  it('a super-block layout has its own key', () => {
    expect(layoutKey({ WG: 128, LANES: 16, ROWS: 2, subgroups: true, superblock: true })).toBe('sb-wg128l16r2sg');
    expect(layoutKey({ WG: 128, LANES: 16, ROWS: 2, subgroups: true })).toBe('wg128l16r2sg');
  });
});
