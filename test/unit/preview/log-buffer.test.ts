import { expect, test } from 'vitest';
import { formatLogLine, LogBuffer } from '../../../src/preview/log-buffer.ts';

const push = (b: LogBuffer, text: string, level: 'log' | 'error' = 'log') => b.push({ port: 5173, level, source: 'console', text });

test('a cursor returns only lines pushed after it', () => {
  const b = new LogBuffer();
  push(b, 'one');
  const first = b.read(0);
  expect(first.lines.map((l) => l.text)).toEqual(['one']);
  expect(b.read(first.next).lines).toEqual([]);
  push(b, 'two', 'error');
  const second = b.read(first.next);
  expect(second.lines.map((l) => formatLogLine(l))).toEqual(['[error] two']);
  expect(second.next).toBe(first.next + 1);
});

test('at most 40 lines, the newest, newest last; the rest counted as skipped', () => {
  const b = new LogBuffer();
  for (let i = 0; i < 100; i++) push(b, `line ${i}`);
  const r = b.read(0);
  expect(r.lines).toHaveLength(40);
  expect(r.lines[0]!.text).toBe('line 60');
  expect(r.lines.at(-1)!.text).toBe('line 99');
  expect(r.skipped).toBe(60);
});

test('at most 3,000 characters; a single huge line is cut so the newest always shows', () => {
  const b = new LogBuffer();
  for (let i = 0; i < 10; i++) push(b, String(i).repeat(900));
  const r = b.read(0);
  expect(r.lines.map((l) => l.text[0])).toEqual(['7', '8', '9']);
  expect(r.lines.map((l) => formatLogLine(l)).join('\n').length).toBeLessThanOrEqual(3000);
  push(b, 'x'.repeat(10_000));
  const huge = b.read(r.next);
  expect(huge.lines).toHaveLength(1);
  expect(formatLogLine(huge.lines[0]!).length).toBeLessThanOrEqual(3000);
  expect(huge.lines[0]!.text.endsWith('…')).toBe(true);
});

test('keeps a bounded history; seq keeps growing', () => {
  const b = new LogBuffer(5);
  for (let i = 0; i < 12; i++) push(b, `l${i}`);
  expect(b.since(0).map((l) => l.text)).toEqual(['l7', 'l8', 'l9', 'l10', 'l11']);
  expect(b.cursor).toBe(13);
});

test('item 3: a flooding port overwrites only its own oldest lines (a ring per port); other ports keep theirs', () => {
  const b = new LogBuffer(100);
  b.push({ port: 5174, level: 'log', source: 'console', text: 'quiet page' });
  for (let i = 0; i < 100_000; i++) push(b, `flood ${i}`);
  expect(b.size).toBe(101);
  expect(b.since(0, 5174).map((l) => l.text)).toEqual(['quiet page']);
  expect(b.since(0, 5173).at(0)!.text).toBe('flood 99900');
  const all = b.since(0);
  expect(all[0]!.text).toBe('quiet page');                  // merged by seq across ports
  expect(all.at(-1)!.text).toBe('flood 99999');
  expect(b.since(b.cursor - 3).map((l) => l.text)).toEqual(['flood 99997', 'flood 99998', 'flood 99999']);
});
