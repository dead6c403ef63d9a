// Sessions: the conversation with the exact sampled tokens, the timeline (last 200) and served ports
// persist per project; reopening continues without re-encoding unless the model changed.
import { expect, test, vi } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MemorySessionStore, restoreSession, snapshotSession, SessionFormatError } from '../../../src/agent/session-store.ts';
import { NodeSessionStore } from '../../../src/agent/node-session-store.ts';
import { Timeline, TIMELINE_LIMIT } from '../../../src/agent/timeline.ts';
import type { Backend } from '../../../src/agent/backend.ts';
import { call, harness } from './harness.ts';

// The first test of a file loads the real 151,669-token vocabulary and builds the call grammar (~10 s on a busy CI).
vi.setConfig({ testTimeout: 120_000 });

test('a reopened session carries on with the exact tokens (no re-encoding) and keeps timeline and served ports', async () => {
  const first = await harness({ serve: [[]], replies: [call('write_file', { path: 'a.js', content: 'x' }), call('serve', {}), 'Served.'] });
  await first.agent.run('Make a.js and serve it');
  const store = new MemorySessionStore();
  const saved = snapshotSession(first.agent, first.backend.name);
  // Make one answer's tokens a non-canonical spelling of the same text ("Served." one byte-token per char):
  const answer = saved.segments.findLast((s) => s.kind === 'assistant')!;
  const gen = first.tokenizer.encode('<|im_start|>assistant\n<think>\n\n</think>\n\n');
  const spelled = [...'Served.'].flatMap((c) => first.tokenizer.encode(c));
  answer.tokens = [...gen, ...spelled, ...first.tokenizer.encode('<|im_end|>\n')];
  await store.save('p1', saved);

  const loaded = (await store.load('p1'))!;
  const second = await harness({ replies: ['Still here.'] });
  const restored = restoreSession('p1', loaded, second.backend);
  expect(restored.reencoded).toBe(false);
  const again = await harness({ replies: ['Still here.'], restore: restored });
  expect(again.agent.timeline.items.map((i) => i.kind)).toEqual(first.agent.timeline.items.map((i) => i.kind));
  expect(again.agent.servedPorts).toEqual([{ port: 5173, path: '' }]);
  expect(again.agent.requests).toBe(1);
  await again.agent.run('Anything else?');
  const prompt = again.backend.requests[0]!.prompt;
  const expectedStart = [...again.agent.conversation.openingTokens, ...loaded.segments.flatMap((s) => s.tokens)];
  expect(prompt.slice(0, expectedStart.length)).toEqual(expectedStart);
  expect(prompt.some((_, i) => spelled.every((t, j) => prompt[i + j] === t))).toBe(true);

  // Another model: every turn is encoded again from its text.
  const other = Object.create(second.backend, { name: { value: 'another-model' } }) as Backend;
  const reenc = restoreSession('p1', loaded, other);
  expect(reenc.reencoded).toBe(true);
  const last = reenc.segments.findLast((s) => s.kind === 'assistant')!;
  expect(last.tokens).toEqual(first.tokenizer.encode(last.text));
  expect(last.tokens).not.toEqual(answer.tokens);
});

test('a session file in a folder round-trips; a bad one is a named error', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'pooled-sessions-'));
  try {
    const store = new NodeSessionStore(dir);
    expect(await store.load('proj/a')).toBeNull();
    const data = { version: 1, model: 'm', requests: 0, segments: [], timeline: [], servedPorts: [], savedAt: 1 };
    await store.save('proj/a', data);
    expect(await store.load('proj/a')).toEqual(data);
    await store.clear('proj/a');
    expect(await store.load('proj/a')).toBeNull();
    expect(() => restoreSession('p', { ...data, version: 9 }, { name: 'm' } as Backend)).toThrow(SessionFormatError);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the timeline keeps the last 200 items and folds streaming events into items', () => {
  const t = new Timeline();
  t.apply({ type: 'request', request: 0, text: 'go' });
  t.apply({ type: 'text', step: 1, delta: 'Hel' });
  t.apply({ type: 'text', step: 1, delta: 'lo' });
  t.apply({ type: 'call-start', step: 1, call: 1 });
  t.apply({ type: 'call-args', step: 1, call: 1, raw: '{"name": "list' });
  t.apply({ type: 'call', step: 1, call: 1, name: 'list_dir', arguments: {} });
  t.apply({ type: 'result', step: 1, call: 1, name: 'list_dir', ok: true, text: 'The project is empty.', changed: false });
  expect(t.items).toEqual([
    { kind: 'request', request: 0, text: 'go' },
    { kind: 'text', step: 1, text: 'Hello' },
    { kind: 'call', step: 1, call: 1, name: 'list_dir', arguments: {}, raw: '{"name": "list', state: 'done', result: 'The project is empty.' },
  ]);
  for (let i = 0; i < 300; i++) t.apply({ type: 'note', step: 1, kind: 'nudge', text: `n${i}` });
  expect(t.items.length).toBe(TIMELINE_LIMIT);
  expect(t.items.at(-1)).toEqual({ kind: 'note', step: 1, note: 'nudge', text: 'n299' });
  expect(t.items[0]).toEqual({ kind: 'note', step: 1, note: 'nudge', text: 'n100' });
});
