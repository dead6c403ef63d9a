// Every call card ends in a final state (done / failed / rejected / not run), whatever ended its answer
// or its request, and is saved that way in the session.
import { expect, test, vi } from 'vitest';
import { call, harness } from './harness.ts';
import { snapshotSession } from '../../../src/agent/session-store.ts';
import { Timeline, type TimelineItem } from '../../../src/agent/timeline.ts';

vi.setConfig({ testTimeout: 120_000 });

const cards = (items: TimelineItem[]) => items.flatMap((i) => (i.kind === 'call' ? [{ name: i.name, state: i.state, result: i.result }] : []));

test('an unreadable call closes its card as not run', async () => {
  const h = await harness({ noMask: true, replies: ['<tool_call>\nwrite the file please\n</tool_call>', 'I could not call it.'] });
  const out = await h.agent.run('Write a.js');
  expect(out.reason).toBe('done');
  expect(cards(h.agent.timeline.items)).toEqual([{ name: '', state: 'not-run', result: 'not run: the call could not be read' }]);
});

test('more streamed blocks than parsed calls: the extra card closes as not run, the real call keeps its own card', async () => {
  const reply = `${call('write_file', { path: 'a.js', content: 'x' })}\n<tool_call>\nand something unreadable\n</tool_call>`;
  const h = await harness({ noMask: true, replies: [reply, 'Done.'] });
  await h.agent.run('Write a.js');
  expect(cards(h.agent.timeline.items)).toEqual([
    { name: 'write_file', state: 'done', result: 'created a.js (1 line)' },
    { name: '', state: 'not-run', result: 'not run: the call could not be read' },
  ]);
});

test('Stop between two calls: the first is done, the second closes as not run, and the session saves it so', async () => {
  const reply = `${call('write_file', { path: 'a.js', content: 'x' })}\n${call('write_file', { path: 'b.js', content: 'y' })}`;
  const h = await harness({ replies: [reply, 'unused'] });
  const stop = new AbortController();
  h.agent.subscribe((e) => { if (e.type === 'result' && e.name === 'write_file') stop.abort(); });
  const out = await h.agent.run('Write both', { signal: stop.signal });
  expect(out.reason).toBe('stopped');
  expect(await h.files.allFiles()).toEqual(['a.js']);
  const expected = [
    { name: 'write_file', state: 'done', result: 'created a.js (1 line)' },
    { name: '', state: 'not-run', result: 'not run: stopped' },
  ];
  expect(cards(h.agent.timeline.items)).toEqual(expected);
  expect(cards(snapshotSession(h.agent, 'replay').timeline)).toEqual(expected);
});

test('a timeline saved mid-request comes back with its open cards closed as not run', () => {
  const saved: TimelineItem[] = [
    { kind: 'request', request: 0, text: 'go' },
    { kind: 'call', step: 1, call: 1, name: 'write_file', arguments: {}, raw: '', state: 'running' },
    { kind: 'call', step: 1, call: 2, name: '', arguments: {}, raw: '{"na', state: 'writing' },
  ];
  expect(cards(new Timeline(saved).items).map((c) => c.state)).toEqual(['not-run', 'not-run']);
});
