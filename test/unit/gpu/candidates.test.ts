// The check of a pick made on the device (src/gpu/candidates.ts checkDevicePick): the token is always the
// reference sampler's over the read-back candidates; the device's own pick stands when it is that token
// and is redone otherwise. Candidates come in as topk_blocks writes them (per block, unsorted across).
import { describe, expect, it } from 'vitest';
import { candidatesOf, checkDevicePick, deviceTopK, pickUniform } from '../../../src/gpu/candidates.ts';
import { SamplingError } from '../../../src/model/engine-errors.ts';
import { Prng, sampleLogits, tokenSeed } from '../../../src/model/sampler.ts';

/** topk_blocks' read-back: (f32 bits, id) pairs, 0xffffffff = an empty slot. */
function pairs(entries: [number, number][]): ArrayBuffer {
  const buf = new ArrayBuffer(entries.length * 8);
  const f = new Float32Array(buf), u = new Uint32Array(buf);
  entries.forEach(([value, id], i) => { f[2 * i] = value; u[2 * i + 1] = id; });
  return buf;
}

describe('checkDevicePick', () => {
  const V = 64;
  const logits = Float32Array.from({ length: V }, (_, i) => Math.sin(i * 1.7) * 3);
  // two blocks of 32 ids, top-4 each, and an empty slot
  const blockTop = (from: number, to: number, k: number) => Array.from({ length: to - from }, (_, i) => from + i)
    .sort((a, b) => logits[b]! - logits[a]! || a - b).slice(0, k).map((id) => [logits[id]!, id] as [number, number]);
  const read = candidatesOf(pairs([...blockTop(0, 32, 4), ...blockTop(32, 64, 4), [0, 0xffffffff]]));
  const opts = (seed: number) => ({ temperature: 0.7, topK: 4, topP: 0.8, seed });

  it('the reference sampler\'s token, from the candidates as read back', () => {
    const picks = new Set<number>();
    for (let position = 0; position < 200; position++) {
      const o = opts(tokenSeed(42, position));
      const ref = sampleLogits(logits, o);
      expect(checkDevicePick(read, 4, o, ref)).toEqual({ token: ref, redo: false });
      picks.add(ref);
    }
    expect(picks.size).toBeGreaterThan(1);                 // it samples, not only the argmax
  });

  it('a device pick that is not the reference\'s is redone: the token is still the reference\'s', () => {
    let redone = 0;
    for (let position = 0; position < 200; position++) {
      const o = opts(tokenSeed(9, position));
      const ref = sampleLogits(logits, o);
      const other = read.find((c) => c.id !== ref)!.id;   // what an f32 boundary case could give
      expect(checkDevicePick(read, 4, o, other)).toEqual({ token: ref, redo: true });
      redone++;
    }
    expect(redone).toBe(200);
  });

  it('only the first k candidates count; u is the reference PRNG\'s for the token\'s seed', () => {
    const o = { temperature: 5, topK: 2, seed: 77 };
    expect(pickUniform(o)).toBe(new Prng(77).nextFloat());
    const token = checkDevicePick(read, 2, o, -1).token;
    expect(read.slice(0, 2).map((c) => c.id)).toContain(token);
    expect(token).toBe(sampleLogits(logits, o));
    expect(deviceTopK(o)).toBe(2);
  });

  it('no candidates: a SamplingError', () => {
    expect(() => checkDevicePick(candidatesOf(pairs([[0, 0xffffffff]])), 4, opts(1), 0)).toThrow(SamplingError);
  });
});
