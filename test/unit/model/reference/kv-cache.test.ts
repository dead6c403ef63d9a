import { describe, expect, it } from 'vitest';
import { ContextFullError, PositionError } from '../../../../src/model/engine-errors.ts';
import { KvCache } from '../../../../src/model/reference/kv-cache.ts';
import { roundToF16 } from '../../../../src/model/tensor-utils.ts';

describe('KvCache', () => {
  const row = (start: number, width: number): Float32Array => Float32Array.from({ length: width }, (_, i) => start + i / 3);

  it('stores K/V rounded to f16 by default, exactly with roundToF16: false', () => {
    const rounded = new KvCache({ capacity: 8, kvWidth: 4, layers: [0] });
    const exact = new KvCache({ capacity: 8, kvWidth: 4, layers: [0], roundToF16: false });
    const k = row(1, 4);
    const v = row(100, 4);
    rounded.append(0, [0], k, v);
    exact.append(0, [0], k, v);
    expect([...rounded.view(0).keys.subarray(0, 4)]).toEqual([...k].map(roundToF16));
    expect([...rounded.view(0).values.subarray(0, 4)]).toEqual([...v].map(roundToF16));
    expect([...exact.view(0).keys.subarray(0, 4)]).toEqual([...k]);
    expect(roundToF16(k[1]!)).not.toBe(k[1]); // the test data is not f16-exact, so rounding shows
  });

  it('grows past its first allocation and keeps earlier rows', () => {
    const c = new KvCache({ capacity: 300, kvWidth: 2, layers: [3, 4], roundToF16: false });
    for (let p = 0; p < 200; p++) c.append(3, [p], Float32Array.of(p, p + 0.5), Float32Array.of(2 * p, 0));
    expect(c.length(3)).toBe(200);
    expect(c.length(4)).toBe(0);
    expect(c.commonLength()).toBe(0);
    const keys = c.view(3).keys;
    for (let p = 0; p < 200; p++) expect([keys[2 * p], keys[2 * p + 1]]).toEqual([p, p + 0.5]);
  });

  it('rejects positions that do not continue the layer, and tokens past the capacity', () => {
    const c = new KvCache({ capacity: 3, kvWidth: 1, layers: [0] });
    expect(() => c.append(0, [1], Float32Array.of(1), Float32Array.of(1))).toThrow(PositionError);
    c.append(0, [0, 1], Float32Array.of(1, 2), Float32Array.of(1, 2));
    expect(() => c.append(0, [2, 3], Float32Array.of(1, 2), Float32Array.of(1, 2))).toThrow(ContextFullError);
    expect(c.length(0)).toBe(2);
  });

  it('truncate drops later positions in every layer; a layer not held is named', () => {
    const c = new KvCache({ capacity: 8, kvWidth: 1, layers: [0, 1] });
    c.append(0, [0, 1, 2], Float32Array.of(1, 2, 3), Float32Array.of(1, 2, 3));
    c.append(1, [0, 1], Float32Array.of(1, 2), Float32Array.of(1, 2));
    c.truncate(1);
    expect([c.length(0), c.length(1)]).toEqual([1, 1]);
    c.truncate(5);
    expect(c.commonLength()).toBe(1);
    expect(() => c.length(7)).toThrow(/layer 7 is not held \(holds 0, 1\)/);
  });
});
