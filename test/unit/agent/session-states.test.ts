// Every state the app writes, its reader reads: a session saved in each call-card state, each way a request
// ends and each note kind comes back whole. The first case is the one that lost a user's conversation: Esc
// while an "ask first" call waits, then a reload ("timeline[2].state is the text \"not-run\"").
import { expect, test, vi } from 'vitest';
import { MemorySessionStore, openSession, snapshotSession, type SessionData } from '../../../src/agent/session-store.ts';
import { validateSession } from '../../../src/agent/session-validate.ts';
import { CALL_STATES, Timeline, type TimelineItem } from '../../../src/agent/timeline.ts';
import { END_REASONS } from '../../../src/agent/summary.ts';
import { NOTE_KINDS } from '../../../src/agent/events.ts';
import type { Backend } from '../../../src/agent/backend.ts';
import { call, harness } from './harness.ts';

// The first test loads the real 151,669-token vocabulary and builds the call grammar (~10 s on a busy CI).
vi.setConfig({ testTimeout: 120_000 });

test('a request stopped while an ask-first call waits is saved and read back with the conversation', async () => {
  // Two calls in one answer: Esc on the first one's approval rejects it and leaves the second not run.
  const h = await harness({ askFirst: true, replies: [call('write_file', { path: 'a.js', content: 'x' }) + call('write_file', { path: 'b.js', content: 'y' }), 'Never reached.'] });
  const stop = new AbortController();
  h.agent.subscribe((e) => { if (e.type === 'approval') stop.abort(); });   // Esc while the card waits for the user
  await h.agent.run('Make a.js', { signal: stop.signal });
  const saved = snapshotSession(h.agent, h.backend.name);
  expect(saved.timeline.some((t) => t.kind === 'call' && t.state === 'not-run')).toBe(true);

  const store = new MemorySessionStore();
  await store.save('p', JSON.parse(JSON.stringify(saved)) as SessionData);   // through a real serialisation
  const opened = await openSession(store, 'p', h.backend);
  expect(opened.problem).toBeUndefined();
  expect(opened.restored!.segments).toEqual(saved.segments);
  expect(opened.restored!.timeline).toEqual(saved.timeline);
});

test('every call-card state, end reason and note kind the timeline can hold is read back', () => {
  const t = new Timeline();
  t.apply({ type: 'request', request: 0, text: 'go' });
  const items: TimelineItem[] = [...t.items];
  CALL_STATES.forEach((state, i) => items.push({ kind: 'call', step: 1, call: i + 1, name: 'write_file', arguments: { path: 'a' }, raw: '', state, repairs: ['closed a quote'] }));
  NOTE_KINDS.forEach((note) => items.push({ kind: 'note', step: 1, note, text: note }));
  END_REASONS.forEach((reason) => items.push({ kind: 'summary', request: 0, reason, line: '1 step', tip: 'a tip' }));
  const data: SessionData = { version: 1, model: 'm', requests: 1, segments: [], timeline: items, servedPorts: [], savedAt: 1 };
  expect(validateSession('p', JSON.parse(JSON.stringify(data)))).toEqual(data);
});

test('a session with unreadable timeline cards keeps its conversation: the cards are left out, the original set aside', async () => {
  const h = await harness({ replies: [call('list_dir', {}), 'Done.'] });
  await h.agent.run('What is here?');
  const saved = JSON.parse(JSON.stringify(snapshotSession(h.agent, h.backend.name))) as SessionData;
  const bad = { ...saved, timeline: [...saved.timeline, { kind: 'call', step: 9, call: 9, name: 'x', arguments: {}, raw: '', state: 'from-a-newer-build' }] };
  const store = new MemorySessionStore();
  store.putRaw('p', bad);
  const opened = await openSession(store, 'p', h.backend as Backend);
  expect(opened.restored!.segments).toEqual(saved.segments);
  expect(opened.restored!.timeline).toEqual(saved.timeline);
  expect(opened.problem).toMatch(/^1 timeline card could not be read \(timeline\[\d+\]\.state is the text "from-a-newer-build".*conversation is restored and the saved session was kept as "p\.unreadable-/);
  const aside = opened.problem!.match(/kept as "([^"]+)"/)![1]!;
  expect(JSON.parse(store.raw(aside)!)).toEqual(bad);                      // nothing lost
  expect((await store.load('p'))!.timeline).toEqual(saved.timeline);     // a reload now finds the readable session
});
