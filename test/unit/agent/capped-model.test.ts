// A model whose answers are capped short (the built-in random-weights model): an answer that reaches
// the cap ends the request with reason `limit` and the note that says why, instead of being dropped
// and asked again step after step. Without the note, the usual cut-off rule still applies.
import { expect, test, vi } from 'vitest';
import { harness, notes } from './harness.ts';

vi.setConfig({ testTimeout: 120_000 });

const GIBBERISH = 'lorem ipsum dolor sit amet '.repeat(40);
const NOTE = 'the built-in tiny test model has random weights: its answers stop at 32 tokens';

test('an answer at the cap ends the request at once, with the note, and the answer kept', async () => {
  const h = await harness({ answerCap: 32, answerCapNote: NOTE, replies: [GIBBERISH, GIBBERISH, GIBBERISH] });
  const out = await h.agent.run('Build a todo list');
  expect(out.reason).toBe('limit');
  expect(out.note).toBe(NOTE);
  expect(out.stats.steps).toBe(1);
  expect(out.stats.generated).toBe(32);
  expect(h.backend.requests).toHaveLength(1);
  expect(notes(h.events)).toEqual([`end: ${NOTE}`]);
  const summary = h.agent.timeline.items.at(-1)!;
  expect(summary).toMatchObject({ kind: 'summary', reason: 'limit' });
  expect(summary.kind === 'summary' && summary.line).toMatch(/^1 step · 0 tool calls · 32 tok · .* · limit$/);
  expect(GIBBERISH.startsWith(out.answer)).toBe(true);
  expect(out.answer.length).toBeGreaterThan(0);
});

test('without the note a capped answer is dropped and asked again, as before', async () => {
  const h = await harness({ answerCap: 32, maxSteps: 3, replies: [GIBBERISH, GIBBERISH, GIBBERISH] });
  const out = await h.agent.run('Build a todo list');
  expect(out.reason).toBe('limit');
  expect(h.backend.requests).toHaveLength(3);                      // the last step is the closing answer
  expect(notes(h.events).filter((n) => n.startsWith('cut-off:'))).toHaveLength(2);
});
