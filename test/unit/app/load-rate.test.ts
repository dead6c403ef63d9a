// A device's load rate and time left, the one source for the guest's page and the host's card.
import { expect, test } from 'vitest';
import { LoadRate, loadProgressText } from '../../../src/ui/load-rate.ts';

const MiB = 2 ** 20;

test('bytes always; rate and time left once there is enough to tell; a new load starts again', () => {
  const r = new LoadRate();
  r.push(0, 0);
  expect(loadProgressText(0, 100 * MiB, r, 0)).toBe('0 B / 100 MiB');
  r.push(2 * MiB, 400);
  expect(loadProgressText(2 * MiB, 100 * MiB, r, 400)).toBe('2.0 MiB / 100 MiB');      // 0.4 s: too early to tell
  r.push(10 * MiB, 2000);
  expect(r.bytesPerSecond(2000)).toBeCloseTo(5 * MiB);
  expect(loadProgressText(10 * MiB, 100 * MiB, r, 2000)).toBe('10.0 MiB / 100 MiB · 5.0 MiB/s · 18 s left');
  r.push(100 * MiB, 20_000);
  expect(loadProgressText(100 * MiB, 100 * MiB, r, 20_000)).toBe('100 MiB / 100 MiB');   // done: no rate
  r.push(1 * MiB, 21_000);                                                                       // a new deal's load
  expect(r.bytesPerSecond(21_000)).toBeUndefined();
});

test('the window follows the link: a slow start does not hold the rate down minutes later', () => {
  const r = new LoadRate();
  for (let t = 0; t <= 60_000; t += 1000) r.push((t < 30_000 ? t * 10 : 300_000 + (t - 30_000) * 1000), t);
  expect(r.bytesPerSecond(60_000)).toBeCloseTo(1_000_000, -3);
  expect(r.secondsLeft(1_000_000_000, 60_000)).toBeCloseTo((1_000_000_000 - 30_300_000) / 1_000_000, 0);
});

test('long waits read in minutes and hours', () => {
  const r = new LoadRate();
  r.push(0, 0);
  r.push(MiB, 1000);
  expect(loadProgressText(MiB, 5 * 2 ** 30, r, 1000)).toBe('1.0 MiB / 5.0 GiB · 1.0 MiB/s · 1 h 25 min left');
});
