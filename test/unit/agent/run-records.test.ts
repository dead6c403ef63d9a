// docs/agent.md, One run, recorded: the conversation and the event stream are the two sources of truth;
// the transcript is derived from the conversation, the timeline from the events. Checked on a real run.
import { expect, test, vi } from 'vitest';
import { Timeline } from '../../../src/agent/timeline.ts';
import { call, harness } from './harness.ts';

// The harness loads the real 151,669-token vocabulary and builds the call grammar (~10 s on a busy CI).
vi.setConfig({ testTimeout: 120_000 });

test('the transcript is the conversation in order, and the timeline is the events folded, nothing more', async () => {
  const h = await harness({
    replies: [
      call('write_file', { path: 'a.js', content: 'let a = 1;\n' }, 'Writing.\n'),
      call('read_file', { path: 'a.js' }),
      '',
      'Done: a.js holds a = 1.',
    ],
  });
  const out = await h.agent.run('Write a.js');
  expect(out.reason).toBe('done');
  const segments = h.agent.conversation.segments;
  expect(segments.map((s) => s.kind)).toEqual(['user', 'assistant', 'results', 'assistant', 'results', 'assistant', 'note', 'assistant']);
  // No compaction ran, so the transcript is the opening plus exactly the segments, text and tokens.
  expect(h.agent.transcript.lines[0]!.role).toBe('system');
  expect(h.agent.transcript.lines.slice(1).map((l) => ({ text: l.text, tokens: l.tokens, request: l.request })))
    .toEqual(segments.map((s) => ({ text: s.text, tokens: s.tokens.length, request: s.request })));
  // A fresh timeline fed the recorded events holds the same items as the agent's.
  const folded = new Timeline();
  for (const e of h.events) folded.apply(e);
  expect(folded.items).toEqual(h.agent.timeline.items);
  expect(folded.items.some((i) => i.kind === 'summary')).toBe(true);
});
