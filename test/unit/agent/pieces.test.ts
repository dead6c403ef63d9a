// Small pieces of the loop: the summary line, the answer stream, hints, page reports from serve text.
import { expect, test } from 'vitest';
import { summaryLine } from '../../../src/agent/summary.ts';
import { AnswerStream } from '../../../src/agent/stream.ts';
import { HintBudget } from '../../../src/agent/hints.ts';
import { pageFromText } from '../../../src/agent/call-runner.ts';
import type { AgentEvent } from '../../../src/agent/events.ts';

test('the summary line is exactly the seed\'s, with the reason appended when not done', () => {
  const stats = { steps: 6, toolCalls: 11, generated: 2143, generateSeconds: 2143 / 41.2, devices: 2, seconds: 58.3 };
  expect(summaryLine(stats, 'done')).toBe('6 steps · 11 tool calls · 2143 tok · 41.2 tok/s · 2 devices · 58.3 s');
  expect(summaryLine(stats, 'stuck')).toBe('6 steps · 11 tool calls · 2143 tok · 41.2 tok/s · 2 devices · 58.3 s · stuck');
  expect(summaryLine({ steps: 1, toolCalls: 1, generated: 5, generateSeconds: 0.5, devices: 1, seconds: 1 }, 'limit'))
    .toBe('1 step · 1 tool call · 5 tok · 10.0 tok/s · 1 device · 1.0 s · limit');
  // A scripted demo has no speed or devices worth a number; a server's devices are not ours.
  expect(summaryLine({ ...stats, runsOn: 'scripted' }, 'done')).toBe('6 steps · 11 tool calls · 2143 tok · scripted model · 58.3 s');
  expect(summaryLine({ ...stats, runsOn: 'server' }, 'stopped')).toBe('6 steps · 11 tool calls · 2143 tok · 41.2 tok/s · on the server · 58.3 s · stopped');
});

test('the answer stream shows text as deltas, holds back a half-written <tool_call>, and fills calls in live', () => {
  const events: AgentEvent[] = [];
  const s = new AnswerStream(1, 7, (e) => events.push(e));
  s.update('Writing it <tool');
  s.update('Writing it <tool_call>\n{"name": "write');
  s.update('Writing it <tool_call>\n{"name": "write_file"}\n</tool_call>\n<tool_call>\n{"name"');
  expect(events).toEqual([
    { type: 'text', step: 1, delta: 'Writing it ' },
    { type: 'call-start', step: 1, call: 7 },
    { type: 'call-args', step: 1, call: 7, raw: '{"name": "write' },
    { type: 'call-args', step: 1, call: 7, raw: '{"name": "write_file"}' },
    { type: 'call-start', step: 1, call: 8 },
    { type: 'call-args', step: 1, call: 8, raw: '{"name"' },
  ]);
  expect(s.startedCalls).toBe(2);
});

test('each hint at most twice per request, "fix one error at a time" once', () => {
  const hints = new HintBudget('json');
  expect(hints.take('copy-old')).toMatch(/^Hint: copy old exactly/);
  expect(hints.take('copy-old')).not.toBeNull();
  expect(hints.take('copy-old')).toBeNull();
  expect(hints.take('one-error')).toBe('Hint: fix one error at a time: the first one, then serve again.');
  expect(hints.take('one-error')).toBeNull();
  expect(new HintBudget('xml').take('call-format')).toContain('<function=read_file>\n<parameter=path>\nindex.html\n</parameter>');
  expect(new HintBudget('json').take('call-format')).toContain('{"name": "read_file", "arguments": {"path": "index.html"}}');
});

test('page reports from serve text when the tool gives none', () => {
  expect(pageFromText('Served / on :5174 — loaded in 240 ms, no errors.')).toEqual({ port: 5174, loaded: true, errors: [] });
  expect(pageFromText('Served / on :5173 — loaded in 240 ms, 2 errors:\nUncaught ReferenceError: x\n404 style.css')).toEqual({ port: 5173, loaded: true, errors: ['Uncaught ReferenceError: x', '404 style.css'] });
  expect(pageFromText('Served / on :5173/ — still loading after 2.0 s, no errors yet (a long task or an endless loop while loading?); check preview_logs.'))
    .toEqual({ port: 5173, loaded: false, errors: [] });
});

test('page error streak: counts a repeat only after a change; note at the 3rd, stuck at the 5th; a new error restarts', async () => {
  const { PageErrorStreak } = await import('../../../src/agent/stuck.ts');
  const p = new PageErrorStreak();
  const e = 'TypeError: x is null';
  expect(p.check(e, 0).kind).toBe('ok');         // 1st
  expect(p.check(e, 0).kind).toBe('ok');         // no change: not counted
  expect(p.check(e, 1).kind).toBe('ok');         // 2nd
  expect(p.check(e, 2).kind).toBe('warn');       // 3rd: note
  expect(p.check('Other error', 3).kind).toBe('ok'); // a different first error restarts the count
  expect(p.check(e, 4).kind).toBe('ok');
  expect(p.check(e, 5).kind).toBe('ok');
  expect(p.check(e, 6).kind).toBe('warn');
  expect(p.check(e, 7).kind).toBe('ok');
  expect(p.check(e, 8)).toEqual({ kind: 'stuck', note: `stuck: the page reported the same first error 5 times after changes: ${e}` });
  expect(p.check(null, 9).kind).toBe('ok');      // a clean load clears it
  expect(p.check(e, 10).kind).toBe('ok');
});
