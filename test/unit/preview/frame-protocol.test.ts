import { expect, test } from 'vitest';
import { isFrameMessage } from '../../../src/preview/frame-protocol.ts';

test('well-formed frame messages pass', () => {
  for (const m of [
    { t: 'logs', lines: [{ level: 'warn', source: 'console', text: 'hi', run: 0 }], dropped: 0 },
    { t: 'logs', lines: [], dropped: 12 },
    { t: 'loaded' },
    { t: 'fetch', id: 3, path: 'data.json' },
    { t: 'navigate', path: 'about.html' },
    { t: 'run-start', run: 1 },
    { t: 'run-done', run: 1, ok: false, error: 'TypeError: x' },
    { t: 'storage', area: 'local', clear: false, changes: [['todos', '["milk"]'], ['old', null]] },
    { t: 'storage', area: 'session', clear: true, changes: [] },
  ]) expect(isFrameMessage(m), JSON.stringify(m)).toBe(true);
});

test('junk and forgeries are refused: unknown kinds, host-only sources, wrong types, oversize text', () => {
  for (const m of [
    null, 'log', 42, [], {}, { t: 'eval', code: 'x' },
    { t: 'log', level: 'log', source: 'console', text: 'the old single-line message', run: 0 },
    ...[
      { level: 'fatal', source: 'console', text: 'x', run: 0 },
      { level: 'log', source: 'system', text: 'pretend to be the host', run: 0 },
      { level: 'log', source: 'console', text: { toString: 'x' }, run: 0 },
      { level: 'log', source: 'console', text: 'x'.repeat(8_001), run: 0 },
      null,
    ].map((line) => ({ t: 'logs', lines: [line], dropped: 0 })),
    { t: 'logs', lines: Array.from({ length: 501 }, () => ({ level: 'log', source: 'console', text: 'x', run: 0 })), dropped: 0 },
    { t: 'logs', lines: [], dropped: -1 },
    { t: 'logs', lines: 'x', dropped: 0 },
    { t: 'fetch', id: -1, path: 'a' },
    { t: 'fetch', id: 1.5, path: 'a' },
    { t: 'run-done', run: 1, ok: 'yes' },
    { t: 'navigate', path: 7 },
    { t: 'storage', area: 'indexedDB', clear: false, changes: [] },
    { t: 'storage', area: 'local', clear: 0, changes: [] },
    { t: 'storage', area: 'local', clear: false, changes: [['k', 1]] },
    { t: 'storage', area: 'local', clear: false, changes: [['k']] },
    { t: 'storage', area: 'local', clear: false, changes: [[{}, 'v']] },
    { t: 'storage', area: 'local', clear: false, changes: { 0: ['k', 'v'], length: 1 } },
    { t: 'storage', area: 'local', clear: false, changes: Array.from({ length: 5_001 }, (_, i) => [`k${i}`, 'v']) },
    // More text than two quotas in one message: refused before the host looks at it.
    { t: 'storage', area: 'local', clear: false, changes: [['a', 'x'.repeat(6 << 20)], ['b', 'x'.repeat(5 << 20)]] },
  ]) expect(isFrameMessage(m), JSON.stringify(m).slice(0, 200)).toBe(false);
});
