// The prefill candidates by device (src/gpu/tuning.ts matmulCandidates): CPU rasterizers get the rows
// structure, with the x-sharing subgroup variant first only where the device has subgroups of a known
// size (a workgroup is then one subgroup), and the per-lane variant always (the fallback); GPUs get tiles.
import { describe, expect, it } from 'vitest';
import { matmulCandidates, type DeviceTraits, type MatmulLayout } from '../../../src/gpu/tuning.ts';

const cpu = (subgroups: boolean, subgroupMinSize: number): DeviceTraits => ({ adapterClass: 'cpu', subgroups, subgroupMinSize, maxInvocations: 256 });
const rows = (ls: MatmulLayout[]) => ls.filter((l) => l.kind === 'rows');

describe('prefill matmul candidates', () => {
  it('lavapipe-like (subgroups of 8): x shared by subgroups first, one-subgroup workgroups, the per-lane fallback too', () => {
    const c = matmulCandidates(cpu(true, 8));
    expect(c[0]).toEqual({ kind: 'rows', WG: 8, R: 4, TT: 4, subgroups: true });
    expect(rows(c).every((l) => l.WG === 8 && l.R * l.TT <= 64)).toBe(true);
    expect(rows(c).some((l) => l.subgroups) && rows(c).some((l) => !l.subgroups)).toBe(true);
    expect(c.some((l) => l.kind === 'tiles')).toBe(true);
  });

  it('SwiftShader-like (subgroups of 4): workgroups of 4 lanes (the subgroup variant loads a part in two)', () => {
    const c = matmulCandidates(cpu(true, 4));
    expect(rows(c).filter((l) => l.subgroups).map((l) => l.WG)).toEqual([4, 4, 4]);
  });

  it('no subgroups, or an unknown subgroup size: no subgroup variant at all', () => {
    for (const t of [cpu(false, 8), cpu(true, 0)]) {
      const c = rows(matmulCandidates(t));
      expect(c.length).toBeGreaterThan(0);
      expect(c.some((l) => l.subgroups)).toBe(false);
    }
  });

  it('GPUs: tiles in workgroup memory only, within the invocation limit', () => {
    const c = matmulCandidates({ adapterClass: 'discrete', subgroups: true, subgroupMinSize: 32, maxInvocations: 256 });
    expect(c.length).toBeGreaterThan(0);
    expect(c.every((l) => l.kind === 'tiles')).toBe(true);
    expect(matmulCandidates({ adapterClass: 'integrated', subgroups: false, subgroupMinSize: 0, maxInvocations: 64 }).every((l) => l.kind === 'tiles' && (l.BM / l.TM) * (l.BN / l.TN) <= 64)).toBe(true);
  });
});
