// The memory budget a device offers (?mem= and the forms) and the expert's manual deal (layer counts per
// device → contiguous ranges, checked by the room's validateDeal, errors naming devices by name).
import { describe, expect, test } from 'vitest';
import { parseAppParams, UrlParamError } from '../../../src/app/url-params.ts';
import { gibText, MemoryBudgetError, memoryBudgetFromGiB } from '../../../src/app/memory-budget.ts';
import { countsFromDeal, manualDeal, rangesFromCounts, shareBytes } from '../../../src/app/manual-deal.ts';
import { DealError } from '../../../src/room/errors.ts';

const GiB = 2 ** 30;

describe('memory budget', () => {
  test('?mem=<GiB> becomes memoryBudgetBytes; absent or empty means the default', () => {
    expect(parseAppParams('?mem=1.5').memoryBudgetBytes).toBe(1.5 * GiB);
    expect(parseAppParams('?mem=4').memoryBudgetBytes).toBe(4 * GiB);
    expect(parseAppParams('?mem=.5').memoryBudgetBytes).toBe(0.5 * GiB);
    expect(parseAppParams('').memoryBudgetBytes).toBeUndefined();
    expect(parseAppParams('?mem=').memoryBudgetBytes).toBeUndefined();
  });

  test('bad ?mem= values get a UrlParamError naming the parameter and what is allowed', () => {
    const bad = (q: string) => { try { parseAppParams(q); } catch (e) { return e as UrlParamError; } return null; };
    for (const q of ['?mem=lots', '?mem=2GB', '?mem=-1', '?mem=1e3', '?mem=Infinity']) {
      const e = bad(q);
      expect(e, q).toBeInstanceOf(UrlParamError);
      expect(e!.param).toBe('mem');
    }
    expect(bad('?mem=2GB')!.message).toBe('?mem= must be a number of GiB such as 1.5, got "2GB"');
    expect(bad('?mem=0')!.message).toBe('?mem= must be between 0.125 and 1024 GiB, got 0');
    expect(bad('?mem=5000')!.message).toBe('?mem= must be between 0.125 and 1024 GiB, got 5000');
  });

  test('the form parser: GiB text to bytes and back', () => {
    expect(memoryBudgetFromGiB(' 2 ')).toBe(2 * GiB);
    expect(memoryBudgetFromGiB('')).toBeUndefined();
    expect(() => memoryBudgetFromGiB('0.1')).toThrow(MemoryBudgetError);
    expect(gibText(1.5 * GiB)).toBe('1.5');
    expect(gibText(memoryBudgetFromGiB('0.333')!)).toBe('0.333');
  });
});

describe('manual deal', () => {
  const devices = [{ id: 'host', name: 'Laptop' }, { id: 'a1b2', name: 'Phone' }, { id: 'c3d4', name: 'Tablet' }];

  test('counts in pipeline order become contiguous ranges from layer 0', () => {
    expect(rangesFromCounts(devices, [3, 0, 1])).toEqual([
      { deviceId: 'host', range: [0, 3] }, { deviceId: 'a1b2', range: [3, 3] }, { deviceId: 'c3d4', range: [3, 4] },
    ]);
    expect(manualDeal(devices, [1, 2, 1], 4)).toEqual([
      { deviceId: 'host', range: [0, 1] }, { deviceId: 'a1b2', range: [1, 3] }, { deviceId: 'c3d4', range: [3, 4] },
    ]);
    expect(manualDeal(devices, [1, 0, 3], 4)).toEqual([
      { deviceId: 'host', range: [0, 1] }, { deviceId: 'a1b2', range: [1, 1] }, { deviceId: 'c3d4', range: [1, 4] },
    ]);
    // The host keeps layer 0 (issue 12 item 7): giving it away is refused, naming the device.
    expect(() => manualDeal(devices, [0, 0, 4], 4)).toThrow(/the host keeps layer 0 .* device "Tablet"/);
  });

  test("a share's bytes: its own layers' bytes (uneven layers counted as they are), the host's fixed bytes on the host", () => {
    const cost = { numLayers: 4, bytesPerLayer: 30, layerBytes: [10, 30, 20, 5], hostFixedBytes: 100 };
    expect(shareBytes(rangesFromCounts(devices, [1, 2, 1]), cost)).toEqual([110, 50, 5]);
    expect(shareBytes(rangesFromCounts(devices, [4, 0, 0]), cost)).toEqual([165, 0, 0]);
    // Uniform layers (no layerBytes); a range past the model counts only the layers that exist.
    expect(shareBytes(rangesFromCounts(devices, [1, 1, 5]), { numLayers: 4, bytesPerLayer: 7, hostFixedBytes: 1 })).toEqual([8, 7, 14]);
  });

  test('the deal in effect back to counts (a device it leaves out holds 0)', () => {
    expect(countsFromDeal(devices, [{ deviceId: 'host', range: [0, 2] }, { deviceId: 'c3d4', range: [2, 4] }])).toEqual([2, 0, 2]);
  });

  test('a bad deal is a DealError that names devices by name and says what is wrong', () => {
    const bad = (counts: number[]) => { try { manualDeal(devices, counts, 4); } catch (e) { return e as Error; } return null; };
    const short = bad([1, 1, 1])!;
    expect(short).toBeInstanceOf(DealError);
    expect(short.message).toBe("the counts add up to 3 of the model's 4 layers (deal covers layers [0, 3) of 4)");
    const over = bad([2, 2, 1])!;
    expect(over).toBeInstanceOf(DealError);
    expect(over.message).toMatch(/^the counts add up to 5 of the model's 4 layers \(device "Tablet": \[4, 5\) is not a layer range of a 4-layer model\)$/);
    const frac = bad([1.5, 1.5, 1])!;
    expect(frac).toBeInstanceOf(DealError);
    expect(frac.message).toBe('device "Laptop": the layer count must be a whole number ≥ 0');
    expect(bad([Number.NaN, 2, 2])!.message).toBe('device "Laptop": the layer count must be a whole number ≥ 0');
  });
});
