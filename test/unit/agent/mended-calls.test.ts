// Through the loop: a reply sampled without a grammar (as from a server that takes none) whose call
// had to be mended runs, and its call event and timeline card say what was mended; a clean call's
// card says nothing of the kind.
import { expect, test, vi } from 'vitest';
import { call, harness } from './harness.ts';

vi.setConfig({ testTimeout: 120_000 });

test('a mended call runs, and its event and card list the mends and repairs; a clean one lists none', async () => {
  const mended = "<tool_call>\n{'name': 'functions.write_file', 'arguments': {'file_path': './a.txt', 'content': 'one\ntwo'}}\n</tool_call>";
  const h = await harness({ noMask: true, replies: [mended, call('read_file', { path: 'a.txt' }), 'Done.'] });
  const out = await h.agent.run('Write a.txt');
  expect(out.reason).toBe('done');
  expect(await h.files.readText('a.txt')).toBe('one\ntwo');
  const calls = h.events.flatMap((e) => (e.type === 'call' ? [e] : []));
  expect(calls.map((c) => c.repairs)).toEqual([
    ['raw line breaks in a string kept as written', 'Python-style dict read as JSON', 'name "functions.write_file" as write_file',
      'path from file_path', 'path "./a.txt" without ./'],
    undefined,
  ]);
  const cards = h.agent.timeline.items.flatMap((i) => (i.kind === 'call' ? [i] : []));
  expect(cards.map((c) => [c.name, c.state, c.repairs?.length ?? 0])).toEqual([['write_file', 'done', 5], ['read_file', 'done', 0]]);
  expect('repairs' in cards[1]!).toBe(false);
});
