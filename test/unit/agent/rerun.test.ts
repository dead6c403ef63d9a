// The room lost a device mid-answer (issue 38): when the backend can recover (the room dealt its layers again),
// the loop runs the stopped answer again by itself and the timeline says so in one line; when it cannot, the
// end note says exactly why; the user's own Stop is never re-run.
import { expect, test, vi } from 'vitest';
import type { BackendRequest, BackendResult } from '../../../src/agent/backend.ts';
import type { RecoverOutcome } from '../../../src/model/generate-types.ts';
import { MAX_RERUNS } from '../../../src/agent/limits.ts';
import { call, harness, notes } from './harness.ts';

// The first test of a file loads the real 151,669-token vocabulary and builds the call grammar (~10 s on a busy CI).
vi.setConfig({ testTimeout: 120_000 });

/** The harness's backend, whose first `losses` answers the room stops as a device leaves, and a recover that answers `outcome`. */
async function lossy(losses: number, outcome: RecoverOutcome, replies: string[]) {
  const h = await harness({ replies });
  const inner = h.backend.generate.bind(h.backend);
  let lost = 0;
  const recovers: number[] = [];
  Object.assign(h.backend, {
    generate: async (req: BackendRequest): Promise<BackendResult> => {
      if (lost >= losses) return inner(req);
      lost++;
      req.onText?.('Half an ans');
      return { ids: [1, 2], text: 'Half an ans', finish: 'stopped', note: 'device "Phone" left the room (its tab closed)', stats: {
        promptTokens: req.prompt.length, promptComputed: req.prompt.length, promptReused: 0, generated: 2, prefillSeconds: 0.01,
        decodeSeconds: 0.01, prefillTokensPerSecond: 100, decodeTokensPerSecond: 200, seconds: 0.02, seed: 0,
      } };
    },
    recover: async () => { recovers.push(lost); return outcome; },
  });
  return { h, recovers };
}

test('a device leaves mid-answer: the room re-deals, the answer runs again, the request finishes', async () => {
  const { h, recovers } = await lossy(1, { ok: true, text: 'the room dealt its layers again over 1 device' }, [call('list_dir', {}), 'All here.']);
  const out = await h.agent.run('What is here?');
  expect(out.reason).toBe('done');
  expect(recovers).toEqual([1]);
  expect(notes(h.events)).toContain('rerun: device "Phone" left the room (its tab closed): the room dealt its layers again over 1 device; the answer runs again from the last pinned point');
  // The conversation holds no trace of the lost half answer: the re-run starts from the same prompt.
  expect(h.agent.conversation.segments.some((s) => s.text.includes('Half an ans'))).toBe(false);
});

test(`at most ${MAX_RERUNS} re-runs a request; then it ends stopped, naming the device`, async () => {
  const { h, recovers } = await lossy(MAX_RERUNS + 1, { ok: true, text: 'the room dealt its layers again over 1 device' }, ['unused']);
  const out = await h.agent.run('Go');
  expect(out.reason).toBe('stopped');
  expect(recovers.length).toBe(MAX_RERUNS);
  expect(notes(h.events).filter((n) => n.startsWith('rerun:')).length).toBe(MAX_RERUNS);
  expect(notes(h.events).at(-1)).toMatch(/^end: stopped: device "Phone" left the room \(its tab closed\) mid-run\./);
});

test('a room that cannot run again: the end note says why, instead of the generic advice', async () => {
  const { h } = await lossy(1, { ok: false, text: 'the room could not deal its layers again (no memory): add a device or pick a smaller model, then send the request again' }, ['unused']);
  const out = await h.agent.run('Go');
  expect(out.reason).toBe('stopped');
  expect(notes(h.events).at(-1)).toBe('end: stopped: device "Phone" left the room (its tab closed). the room could not deal its layers again (no memory): add a device or pick a smaller model, then send the request again');
});
