// Context budget and compaction with exact token counts from the real Qwen3 tokenizer, and the
// stable-prefix check: the opening (system prompt + tools) is the same tokens at every step, and after a
// compaction only the tokens after the pinned checkpoint are computed (the Generator's counts, over the replay model).
import { expect, test, vi } from 'vitest';
import { answerCapFor, compactionTarget, conversationBudget } from '../../../src/agent/budget.ts';
import { foldLine } from '../../../src/agent/compaction.ts';
import type { Tokenizer } from '../../../src/model/tokenizer.ts';
import type { RecordingBackend } from '../../../src/agent/recording-backend.ts';
import { call, harness, notes, results } from './harness.ts';

// The first test of a file loads the real 151,669-token vocabulary and builds the call grammar (~10 s on a busy CI).
vi.setConfig({ testTimeout: 120_000 });

test('the budget table (docs/agent.md): 8,192 -> about 6,080; 16,384 -> 12,220; 32,768 -> 24,510', () => {
  expect(conversationBudget(8192)).toBe(6080);
  expect(conversationBudget(16384)).toBe(12224);
  expect(conversationBudget(32768)).toBe(24512);
  expect(Math.abs(conversationBudget(16384) - 12220)).toBeLessThan(10);
  expect(Math.abs(conversationBudget(32768) - 24510)).toBeLessThan(10);
  expect(compactionTarget(8192)).toBe(3648); // 60% of 6,080
  expect(answerCapFor(1000, 8192)).toBe(7192); // less when the context is nearly full
  expect(answerCapFor(7000, 8192)).toBe(1192);
  expect(answerCapFor(100, 32768)).toBe(8192);
});

test('fold line lists what an earlier request changed', () => {
  const c = (name: string, args: Record<string, unknown>, changed = true, port?: number) => ({ name, arguments: args, ok: true, changed, content: '', ...(port ? { port } : {}) });
  expect(foldLine([
    c('write_file', { path: 'index.html' }), c('write_file', { path: 'game.js' }), c('write_file', { path: 'game.js', append: true }),
    c('edit_file', { path: 'game.js' }), c('read_file', { path: 'a' }, false), c('serve', {}, false, 5173),
  ])).toBe('[earlier: wrote index.html, game.js; edited game.js; served :5173]');
  expect(foldLine([c('read_file', { path: 'a' }, false)])).toBe('[earlier: no files changed]');
});

const lines = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag} line ${i}: the quick brown fox number ${(i * 7) % 13} jumps`).join('\n') + '\n';
const resultTurn = (content: string) => `<|im_start|>user\n<tool_response>\n${content}\n</tool_response><|im_end|>\n`;

/**
 * Every prompt starts with the same opening tokens; steps without compaction compute only new tokens.
 * The runs checked keep one answer checkpoint (ckpt: 1), so after a compaction the pinned checkpoint is
 * what is left to reuse: that it survives every compaction is what these counts show.
 */
function checkStablePrefix(backend: RecordingBackend, pinAt: number, compactedSteps: number[]) {
  const opening = backend.requests[0]!.prompt.slice(0, pinAt);
  backend.requests.forEach((req, i) => {
    expect(req.pinAt).toBe(pinAt);
    expect(req.prompt.slice(0, pinAt)).toEqual(opening);
    const usage = backend.results[i]!.stats;
    if (i === 0) return;
    if (compactedSteps.includes(i)) {
      expect(usage.promptReused).toBe(pinAt);
      expect(usage.promptComputed).toBe(req.prompt.length - pinAt);
    } else {
      const live = backend.requests[i - 1]!.prompt.length + backend.results[i - 1]!.ids.length;
      expect(usage.promptReused).toBe(live);
      expect(usage.promptComputed).toBe(req.prompt.length - live);
    }
  });
}

/** The prompt the loop would have sent without compaction: previous prompt + answer + close + results + generation prompt. */
function uncompacted(tok: Tokenizer, backend: RecordingBackend, i: number, resultText: string): number {
  const prev = backend.requests[i - 1]!.prompt.length + backend.results[i - 1]!.ids.length;
  const close = tok.encode('<|im_end|>\n').length;
  const gen = tok.encode('<|im_start|>assistant\n<think>\n\n</think>\n\n').length;
  return prev + close + tok.encode(resultTurn(resultText)).length + gen;
}

test('stage 1: old tool results become stubs; exact before/after tokens; only tokens after the checkpoint recomputed', async () => {
  const project = { 'a.txt': lines('a', 30), 'b.txt': lines('b', 30), 'c.txt': lines('c', 30), 'd.txt': lines('d', 30) };
  const h = await harness({
    project, contextSize: 4096, ckpt: 1,
    replies: [call('read_file', { path: 'a.txt' }), call('read_file', { path: 'b.txt' }), call('read_file', { path: 'c.txt' }), call('read_file', { path: 'd.txt' }), 'Read them all.'],
  });
  const out = await h.agent.run('Read the four files');
  expect(out.reason).toBe('done');
  const tok = h.tokenizer;
  const res = results(h.events);
  const budget = conversationBudget(4096); // 3008
  const before = uncompacted(tok, h.backend, 4, res[3]!);
  expect(before).toBeGreaterThan(budget);
  const stub = (p: string) => `(output of read_file ${p} dropped; run it again if needed)`;
  const saved = ['a.txt', 'b.txt'].reduce((n, p, i) => n + tok.encode(resultTurn(res[i]!)).length - tok.encode(resultTurn(stub(p))).length, 0);
  const after = h.backend.requests[4]!.prompt.length;
  expect(after).toBe(before - saved);
  expect(notes(h.events)).toEqual([`compaction: older steps shortened to fit the context (${before} → ${after} tokens)`]);
  const text = tok.decode(h.backend.requests[4]!.prompt);
  expect(text).toContain(resultTurn(stub('a.txt')));
  expect(text).toContain(resultTurn(stub('b.txt')));
  expect(text).toContain(resultTurn(res[2]!)); // the last 2 steps are kept whole
  expect(text).toContain(resultTurn(res[3]!));
  checkStablePrefix(h.backend, h.agent.conversation.pinAt, [4]);
}, 60_000);

const page = '<!doctype html>\n<html><body>\n' + lines('<p>para', 45) + '</body></html>\n';
const game = lines('// game', 45);
const firstRequest = [
  call('write_file', { path: 'index.html', content: page }), call('write_file', { path: 'game.js', content: game }),
  call('edit_file', { path: 'game.js', old: '// game line 0:', new: '// Game line 0:' }), call('serve', {}), 'Made a small game.',
];

/** Steps whose prompt is not the previous prompt + its answer + new turns (a compaction happened). */
function compactedSteps(backend: RecordingBackend): number[] {
  return backend.requests.flatMap((r, i) => {
    if (i === 0) return [];
    const prev = [...backend.requests[i - 1]!.prompt, ...backend.results[i - 1]!.ids];
    return r.prompt.slice(0, prev.length).every((t, j) => t === prev[j]) ? [] : [i];
  });
}

test('stage 2: an earlier request folds into one line plus its answer (exact tokens kept)', async () => {
  const h = await harness({
    // Clearing old written content off, so stage 1 alone does not fit and the fold is needed.
    contextSize: 4096, serve: [[]], ckpt: 1, clearWrittenContent: false,
    project: { 'x.txt': lines('x', 12), 'y.txt': lines('y', 12), 'z.txt': lines('z', 12) },
    replies: [...firstRequest, call('read_file', { path: 'x.txt' }), call('read_file', { path: 'y.txt' }), call('read_file', { path: 'z.txt' }), call('list_dir', {}), 'All read.'],
  });
  const tok = h.tokenizer;
  expect((await h.agent.run('Make a game')).reason).toBe('done');
  const answer0 = h.agent.conversation.segments.at(-1)!.tokens;
  expect((await h.agent.run('Read x, y and z, then list the folder')).reason).toBe('done');

  const compactions = notes(h.events).filter((n) => n.startsWith('compaction'));
  const steps = compactedSteps(h.backend);
  expect(steps.length).toBe(1);
  expect(compactions.length).toBe(1);
  const i = steps[0]!;
  const res = results(h.events);
  const before = uncompacted(tok, h.backend, i, res[i - 1]!);
  const after = h.backend.requests[i]!.prompt.length;
  expect(compactions[0]).toBe(`compaction: older steps shortened to fit the context (${before} → ${after} tokens)`);
  expect(before).toBeGreaterThan(conversationBudget(4096));
  expect(after).toBeLessThanOrEqual(compactionTarget(4096));
  const text = tok.decode(h.backend.requests[i]!.prompt);
  expect(text).toContain('<|im_start|>user\n[earlier: wrote index.html, game.js; edited game.js; served :5173]<|im_end|>\n'); // one line
  expect(text).not.toContain('Make a game');
  expect(text).not.toContain('// game line 3:'); // the written content went with the folded steps
  const prompt = h.backend.requests[i]!.prompt;
  expect(prompt.some((_, k) => answer0.every((t, j) => prompt[k + j] === t))).toBe(true);
  checkStablePrefix(h.backend, h.agent.conversation.pinAt, steps);
}, 90_000);

test('stage 3: when folding is not enough the oldest earlier requests are dropped', async () => {
  const long = (tag: string) => `${tag}: ` + 'the preview shows the page and every button works as the request asked for. '.repeat(30);
  const h = await harness({
    contextSize: 4096, ckpt: 1,
    project: { 'a.txt': lines('a', 15), 'b.txt': lines('b', 15), 'c.txt': lines('c', 15), 'd.txt': lines('d', 15), 'e.txt': lines('e', 15) },
    replies: [long('first'), long('second'),
      ...['a', 'b', 'c', 'd', 'e'].map((f) => call('read_file', { path: `${f}.txt` })), 'Done.'],
  });
  const tok = h.tokenizer;
  await h.agent.run('Tell me about it');
  await h.agent.run('Tell me more');
  expect((await h.agent.run('Read the five files')).reason).toBe('done');
  const steps = compactedSteps(h.backend);
  expect(steps.length).toBe(1);
  const i = steps[0]!;
  const text = tok.decode(h.backend.requests[i]!.prompt);
  expect(text).not.toContain('Tell me about it');
  expect(h.backend.requests[i]!.prompt.length).toBeLessThanOrEqual(compactionTarget(4096));
  const before = uncompacted(tok, h.backend, i, results(h.events)[i - 3]!);
  expect(notes(h.events)).toEqual([`compaction: older steps shortened to fit the context (${before} → ${h.backend.requests[i]!.prompt.length} tokens)`]);
  checkStablePrefix(h.backend, h.agent.conversation.pinAt, steps);
}, 90_000);

test('stage 4: when even that is not enough the request ends with context', async () => {
  const h = await harness({
    contextSize: 2048,
    project: { 'a.txt': lines('a', 30), 'b.txt': lines('b', 30), 'c.txt': lines('c', 30) },
    replies: [call('read_file', { path: 'a.txt' }), call('read_file', { path: 'b.txt' }), call('read_file', { path: 'c.txt' }), 'unused'],
  });
  const out = await h.agent.run('Read the files');
  expect(out.reason).toBe('context');
  const n = notes(h.events);
  expect(n.at(-2)).toMatch(/^compaction: older steps shortened to fit the context \(\d+ → \d+ tokens\)$/);
  // Here the request's own steps are what does not fit (the message is short): the note says so.
  expect(n.at(-1)).toMatch(/^end: context full: the conversation is [\d,]+ tokens, [\d,]+ fit \(2,048 of context less room for the answer\); this request's steps take [\d,]+ after shortening: start a new task \(the files are kept\) and ask for the rest, or use a bigger context$/);
}, 60_000);

test('stage 1 clears what old steps wrote: write_file content and edit_file old/new become stubs, name and path kept', async () => {
  const part = (tag: string) => lines(`// ${tag}`, 60);
  const replies = [
    call('write_file', { path: 'a.js', content: part('a') }), call('write_file', { path: 'b.js', content: part('b') }),
    call('edit_file', { path: 'a.js', old: part('a').slice(0, 300), new: part('A').slice(0, 300) }),
    call('write_file', { path: 'c.js', content: part('c') }), call('write_file', { path: 'd.js', content: part('d') }),
    'Wrote four files.',
  ];
  const run = async (clearWrittenContent: boolean) => {
    const h = await harness({ contextSize: 4096, replies, clearWrittenContent, ckpt: 1 });
    return { h, out: await h.agent.run('Write four scripts') };
  };
  const on = await run(true);
  expect(on.out.reason).toBe('done');
  const steps = compactedSteps(on.h.backend);
  expect(steps.length).toBeGreaterThan(0);
  const text = on.h.tokenizer.decode(on.h.backend.requests.at(-1)!.prompt);
  // The old writes keep their call (name, path) with the content cleared; the last 2 steps are whole.
  expect(text).toMatch(/\{"name": "write_file", "arguments": \{"path": "a\.js", "content": "\[cleared to save context: [\d,]+ characters, in the file now\]"\}\}/);
  expect(text).toMatch(/\{"name": "edit_file", "arguments": \{"path": "a\.js", "old": "\[cleared to save context: 300 characters, in the file now\]", "new": "\[cleared/);
  expect(text).not.toContain('// a line 3:');
  expect(text).not.toContain('// b line 3:');
  expect(text).toContain('// c line 3:');
  expect(text).toContain('// d line 3:');
  expect(await on.h.files.readText('a.js')).toContain('// A line 0:'); // the files themselves keep everything
  checkStablePrefix(on.h.backend, on.h.agent.conversation.pinAt, steps);
  // Without clearing the written content, the same request runs out of context.
  const off = await run(false);
  expect(off.out.reason).toBe('context');
}, 90_000);

test('/compact typed as a request shortens the conversation now and shows before → after tokens', async () => {
  const h = await harness({ project: { 'x.txt': lines('x', 30) }, replies: [...firstRequest, call('read_file', { path: 'x.txt' }), 'Read x.', 'Still here.'], serve: [[]] });
  const empty = await h.agent.run('/compact');
  expect(empty.note).toMatch(/^nothing to shorten: the conversation is \d+ tokens$/);
  await h.agent.run('Make a game');
  await h.agent.run('Read x');
  const before = h.agent.conversation.promptLength();
  const out = await h.agent.run('  /compact ');
  const after = h.agent.conversation.promptLength();
  expect(after).toBeLessThan(before / 2);
  expect(out.note).toBe(`compacted now: older steps shortened (${before} → ${after} tokens)`);
  expect(notes(h.events).at(-1)).toBe(`compaction: ${out.note}`);
  expect(h.backend.requests.length).toBe(7); // the model was not asked for /compact
  expect(h.agent.conversation.segments.filter((s) => s.kind === 'fold').map((s) => s.text)).toEqual([
    '<|im_start|>user\n[earlier: wrote index.html, game.js; edited game.js; served :5173]<|im_end|>\n',
    '<|im_start|>user\n[earlier: no files changed]<|im_end|>\n',
  ]);
  // The next request carries on from the compacted conversation.
  expect((await h.agent.run('Anything else?')).answer).toBe('Still here.');
  expect(h.backend.requests.at(-1)!.prompt.length).toBeLessThan(before);
}, 90_000);
