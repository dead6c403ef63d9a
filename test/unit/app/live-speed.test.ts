// The host card's live speed: nothing until two tokens are in, then tokens after the first over the
// time since the first (the prefill before the first token is not counted), at most every 250 ms.
import { expect, test } from 'vitest';
import { LiveSpeed } from '../../../src/app/host-session.ts';

test('live tok/s is measured from the first token on and shown at most every 250 ms', () => {
  let now = 0;
  const shown: number[] = [];
  const live = new LiveSpeed((tps) => shown.push(tps), () => now);
  now = 5_000; live.token();                 // the first token, after a long prefill
  expect(shown).toEqual([]);
  for (let i = 1; i <= 10; i++) { now = 5_000 + i * 100; live.token(); }   // 10 tok/s
  expect(shown).toEqual([10, 10, 10, 10]);  // at 100 ms, then every ≥250 ms: 400, 700, 1000 ms
});
