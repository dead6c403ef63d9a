// `npm run fuzz`, in CI at a small size: the room frame fuzz, the session fuzz, the loader and GGUF fuzz on a
// short seed set. Each must run clean (no crash, no hang) and reach both sides of its target: inputs
// that are accepted and inputs refused with named errors (so the fuzz exercises something).
import { describe, expect, test } from 'vitest';
import { run as room } from '../../fuzz/room.fuzz.ts';
import { run as session } from '../../fuzz/session.fuzz.ts';
import { run as loader } from '../../fuzz/loader.fuzz.ts';
import { run as gguf } from '../../fuzz/gguf.fuzz.ts';
import { crashed, newReport, summary, type FuzzReport } from '../../fuzz/report.ts';

const SEEDS = [1, 2, 3];

describe.each([
  ['room', room, 1_500],
  ['room-hybrid', (seed: number, count: number) => room(seed, count, { hybrid: true }), 1_000],
  ['session', session, 1_500],
  ['loader', loader, 600],
  // `npm run fuzz` bounds a case at 1 s (a blocked event loop counts) and 64 MiB; here 5 s, as a busy CI box
  // can stall any case (the slowest of 100,000 on a loaded machine took 941 ms).
  ['gguf', (seed: number, count: number) => gguf(seed, count, { ms: 5_000, bytes: 64 * 2 ** 20 }), 400],
] as const)('fuzz: %s', (name, target, count) => {
  test.each(SEEDS)(`${name}, seed %i: no crash, no hang; accepted and refused inputs both seen`, async (seed) => {
    const r: FuzzReport = await target(seed, count);
    expect(r.crashes, summary(r)).toEqual([]);
    expect(r.hangs, summary(r)).toEqual([]);
    expect(r.cases).toBe(count);
    expect(r.accepted).toBeGreaterThan(0);
    expect(r.refused).toBeGreaterThan(0);
  }, 120_000);
});

test('fuzz: the same seed gives the same cases (a failure can be replayed)', async () => {
  const a = await session(7, 300);
  const b = await session(7, 300);
  expect([a.accepted, a.refusedBy]).toEqual([b.accepted, b.refusedBy]);
});

test('fuzz: a crash is reported with its case and error', () => {
  const r = newReport('x', 1);
  crashed(r, 12, new TypeError('boom'));
  expect(r.crashes).toEqual([{ case: 12, error: expect.stringMatching(/^TypeError: boom/) }]);
  expect(summary(r)).toMatch(/1 crashes, 0 hangs$/);
});
