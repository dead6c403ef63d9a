// One scripted scenario per end reason: done, stopped, limit, stuck (call / page error), context, error.
import { expect, test, vi } from 'vitest';
import { call, harness, notes, results } from './harness.ts';
import { conversationBudget } from '../../../src/agent/budget.ts';
import { ANSWER_CAP } from '../../../src/agent/limits.ts';

// The first test of a file loads the real 151,669-token vocabulary and builds the call grammar (~10 s on a busy CI).
vi.setConfig({ testTimeout: 120_000 });

const SUMMARY = /^\d+ steps? · \d+ tool calls? · \d+ tok · \d+\.\d tok\/s · \d devices? · \d+\.\d s/;

test('done: write, then an answer without a call; summary line has no reason', async () => {
  const h = await harness({
    replies: [
      call('write_file', { path: 'index.html', content: '<!doctype html>\n<h1>Hi</h1>\n' }, 'Writing the page.\n'),
      'The page is ready.',
    ],
  });
  const out = await h.agent.run('Make a page that says Hi');
  expect(out.reason).toBe('done');
  expect(out.answer).toBe('The page is ready.');
  expect(await h.files.readText('index.html')).toBe('<!doctype html>\n<h1>Hi</h1>\n');
  expect(results(h.events)).toEqual(['created index.html (2 lines)']);
  expect(out.summary).toMatch(/^2 steps · 1 tool call · \d+ tok · \d+\.\d tok\/s · 1 device · \d+\.\d s$/);
  // The text before the call streamed as text, the call filled in live, then ran.
  const kinds = h.events.map((e) => e.type);
  expect(kinds.indexOf('text')).toBeLessThan(kinds.indexOf('call-start'));
  expect(kinds.indexOf('call-args')).toBeLessThan(kinds.indexOf('call'));
  expect(h.agent.timeline.items.map((i) => i.kind)).toEqual(['request', 'text', 'call', 'text', 'summary']);
});

test('done: a serve that loaded clean followed by a step that changed nothing', async () => {
  const h = await harness({
    replies: [call('write_file', { path: 'a.js', content: 'x' }), call('serve', {}), call('read_file', { path: 'a.js' }), 'never asked'],
    serve: [[]],
  });
  const out = await h.agent.run('Make it');
  expect(out.reason).toBe('done');
  expect(out.stats.steps).toBe(3);
  expect(h.replay.repliesLeft).toBe(1);
});

test('a clean serve followed by a change in the same step does not end the request', async () => {
  const both = `${call('serve', {})}\n${call('write_file', { path: 'b.js', content: 'y' })}`;
  const h = await harness({ replies: [both, call('read_file', { path: 'b.js' }), 'Finished.'], serve: [[]] });
  const out = await h.agent.run('Make it');
  expect(out.reason).toBe('done');
  expect(out.stats.steps).toBe(3);
  expect(out.answer).toBe('Finished.');
});

test('stopped: Stop mid-answer keeps the partial answer and runs none of its calls', async () => {
  const h = await harness({ replies: [`Let me write it. ${call('write_file', { path: 'a.js', content: 'x'.repeat(400) })}`], tokenDelayMs: 5 });
  const stop = new AbortController();
  h.agent.subscribe((e) => { if (e.type === 'call-start') stop.abort(); });
  const out = await h.agent.run('Make a.js', { signal: stop.signal });
  expect(out.reason).toBe('stopped');
  expect(out.summary).toMatch(/ · stopped$/);
  expect(await h.files.allFiles()).toEqual([]);
  const last = h.agent.conversation.segments.at(-1)!;
  expect(last.kind).toBe('assistant');
  expect(last.text).toContain('Let me write it.');
  expect(notes(h.events)).toContain('end: stopped: the partial answer is kept and none of its calls ran');
});

test('limit: at step 30 the model sums up without tools; that answer closes the request, reason limit', async () => {
  const replies = [...Array.from({ length: 29 }, (_, i) => call('search', { pattern: `word${i}` })), 'I searched 29 words; the page is still to be written.'];
  const h = await harness({ replies, project: { 'a.txt': 'hello' } });
  const out = await h.agent.run('Look around');
  expect(out.reason).toBe('limit');
  expect(out.stats.steps).toBe(30);
  expect(out.answer).toBe('I searched 29 words; the page is still to be written.');
  expect(out.summary).toMatch(SUMMARY);
  expect(out.summary).toMatch(/^30 steps · 29 tool calls · .* · limit$/);
  expect(notes(h.events)).toContain('end: stopped after 30 steps: send "continue", or split the task');
  expect(notes(h.events)).toContain('limit: step 30 of 30: the model is asked to sum up without tools');
  // The closing step's prompt asked for the summary, after the 29th step's results.
  const last = h.tokenizer.decode(h.backend.requests[29]!.prompt);
  expect(last).toMatch(/<\/tool_response><\|im_end\|>\n<\|im_start\|>user\nThis is the last step of this request: no tool will run any more\./);
  expect(h.agent.timeline.items.at(-1)).toMatchObject({ kind: 'summary', reason: 'limit' });
}, 60_000);

test('limit: a call in the closing answer never runs (the grammar forbids opening one)', async () => {
  const replies = [call('list_dir', {}), call('write_file', { path: 'late.js', content: 'x' }, 'One more thing: ')];
  const h = await harness({ replies, maxSteps: 2 });
  const out = await h.agent.run('Look around');
  expect(out.reason).toBe('limit');
  expect(await h.files.allFiles()).toEqual([]);
  // The replay model, its <tool_call> token banned, leaves that symbol out and goes on with its script (it
  // used to degenerate into thousands of "!" here, which a startsWith check let pass): the call's JSON
  // comes out as prose, which is the closing answer as written, and nothing of it runs.
  const closing = 'One more thing: \n{"name":"write_file","arguments":{"path":"late.js","content":"x"}}\n</tool_call>';
  expect(h.backend.results[1]!.text).toBe(closing);
  expect(h.backend.results[1]!.finish).toBe('stop-token');
  expect(out.answer).toBe(closing);
});

test('stuck: the same call failed 3 steps in a row; a note one step before names it', async () => {
  const bad = call('edit_file', { path: 'a.js', old: 'nothere', new: 'y' });
  const h = await harness({ replies: [bad, bad, bad, 'unused'], project: { 'a.js': 'let a = 1;\n' } });
  const out = await h.agent.run('Fix a.js');
  expect(out.reason).toBe('stuck');
  expect(out.stats.steps).toBe(3);
  const n = notes(h.events);
  expect(n[0]).toMatch(/^stuck-warning: Note: you repeated edit_file a.js 2 steps in a row and it made no progress \(old was not found in a.js/);
  expect(n[1]).toMatch(/^end: stuck: edit_file a.js made no progress 3 steps in a row \(old was not found/);
  expect(n[1]).toMatch(/Rephrase, fix the file by hand, or try a bigger model\.$/);
  expect(out.summary).toMatch(/ · stuck$/);
});

test('stuck on several devices says the split model may be the cause', async () => {
  const bad = call('read_file', { path: 'missing.js' });
  const h = await harness({ replies: [bad, bad, bad], devices: 2 });
  const out = await h.agent.run('Read it');
  expect(out.reason).toBe('stuck');
  expect(out.note).toMatch(/split over 2 devices and may be producing bad output: try the request with the model on one device, or re-deal the layers/);
  expect(out.summary).toMatch(/ · 2 devices · /);
});

test('stuck: the page reported the same first error 5 times after changes; note at the 3rd', async () => {
  const replies: string[] = [];
  for (let i = 0; i < 5; i++) replies.push(call('write_file', { path: 'a.js', content: `try ${i}` }), call('serve', {}));
  const err = 'Uncaught ReferenceError: foo is not defined (a.js:1)';
  const h = await harness({ replies, serve: [[err], [err], [err], [err], [err]] });
  const out = await h.agent.run('Make it work');
  expect(out.reason).toBe('stuck');
  expect(out.stats.steps).toBe(10);
  const n = notes(h.events);
  expect(n.filter((x) => x.startsWith('stuck-warning'))).toEqual([
    `stuck-warning: Note: the page has reported the same first error 3 times after your changes: ${err}. Read the code around it and try a different fix.`,
  ]);
  expect(n.at(-1)).toMatch(/^end: stuck: the page reported the same first error 5 times after changes: Uncaught ReferenceError/);
});

test('stuck: the same broken page served again and again with nothing changed, though its load time differs each time', async () => {
  const err = 'Uncaught TypeError: board is null (game.js:3)';
  // The first serve is news; each later one gives the same result with nothing changed (no progress).
  const h = await harness({ replies: [...Array(4).fill(call('serve', {})), 'unused'], serve: [[err], [err], [err], [err]] });
  const out = await h.agent.run('Make it work');
  const served = results(h.events);
  expect(new Set(served.map((t) => /loaded in (\d+) ms/.exec(t)![1])).size).toBe(4); // the texts differ
  expect(out.reason).toBe('stuck');
  expect(out.stats.steps).toBe(4);
  const n = notes(h.events);
  expect(n[0]).toMatch(/^stuck-warning: Note: you repeated serve 2 steps in a row and it made no progress \(the same result again\)/);
  expect(n[1]).toMatch(/^end: stuck: serve made no progress 3 steps in a row \(the same result again\)/);
});

test('a page error checked again without a change in between does not count', async () => {
  const err = 'TypeError: x is null';
  const replies = [call('serve', {}), call('serve', { path: '.' }), call('serve', { path: '' }), call('serve', { path: './' }), call('serve', { path: '/'.slice(1) + '.' }), 'I give up.'];
  const h = await harness({ replies, serve: [[err], [err], [err], [err], [err]] });
  const out = await h.agent.run('Check it');
  expect(out.reason).toBe('done');
  expect(notes(h.events).filter((n) => n.startsWith('stuck-warning'))).toEqual([]);
});

test('context: the request alone does not fit, even after compaction', async () => {
  const h = await harness({ replies: ['unused'], contextSize: 1400 });
  const out = await h.agent.run('Build this: ' + 'a very long request with many words '.repeat(60));
  expect(out.reason).toBe('context');
  // The note says which part is too long and what would fit, in the conversation's own token counts.
  const opening = h.agent.conversation.openingTokens.length;
  const message = h.agent.conversation.segments.find((s) => s.kind === 'user')!.tokens.length;
  const budget = conversationBudget(1400, ANSWER_CAP);
  const f = (x: number) => x.toLocaleString('en-US');
  expect(notes(h.events).at(-1)).toBe(`end: context full: the conversation is ${f(h.agent.conversation.promptLength())} tokens, ${f(budget)} fit (1,400 of context less room for the answer); `
    + `your message alone is ${f(message)} tokens and ${f(budget - opening)} fit beside the system prompt and tools: shorten it by about ${f(message - budget + opening)} tokens, split it into smaller requests, or use a bigger context`);
  expect(out.summary).toMatch(/ · context$/);
  expect(h.backend.requests.length).toBe(0);
});

test('error: the model itself failed (replay script exhausted)', async () => {
  const h = await harness({ replies: [call('list_dir', {})] });
  const out = await h.agent.run('Look');
  expect(out.reason).toBe('error');
  expect(out.note).toMatch(/^the model failed: replay script exhausted/);
  expect(out.summary).toMatch(/ · error$/);
});

test('an empty answer gets one nudge; a second ends the request', async () => {
  const h = await harness({ replies: ['', '   ', 'unused'] });
  const out = await h.agent.run('Do it');
  expect(notes(h.events)[0]).toBe('nudge: Your answer was empty: call a tool or say you are done.');
  expect(out.reason).toBe('error');
  expect(out.stats.steps).toBe(2);
  const nudge = h.agent.conversation.segments.find((s) => s.kind === 'note');
  expect(nudge?.text).toBe('<|im_start|>user\nYour answer was empty: call a tool or say you are done.<|im_end|>\n');
});

test('a serve still loading after its wait with no errors yet is not clean: the next unchanged step does not end the request', async () => {
  const h = await harness({
    replies: [call('write_file', { path: 'a.js', content: 'x' }), call('serve', {}), call('read_file', { path: 'a.js' }), 'It loads slowly; done.'],
    serve: [{ errors: [], loaded: false }],
  });
  const out = await h.agent.run('Make it');
  expect(out.reason).toBe('done');
  expect(out.stats.steps).toBe(4);
  expect(out.answer).toBe('It loads slowly; done.');
  expect(h.replay.repliesLeft).toBe(0);
});

test('error: a model the call format keeps overruling is producing garbage; the step stops and the note says to try again or reload', async () => {
  // Inside the call the script wants bytes the grammar never allows: every token is forced by the format.
  const h = await harness({ replies: [`Let me write it.\n<tool_call>${' zq#'.repeat(300)}`, 'unused'] });
  const out = await h.agent.run('Write a.js');
  expect(out.reason).toBe('error');
  expect(out.note).toMatch(/^the model failed: too many tokens were forced by the call format \(the call format overruled the model's own choice .*\): the room's engine is producing garbage\. Try again, or reload the model$/);
  expect(out.summary).toMatch(/ · error$/);
  expect(out.stats.generated).toBeLessThan(80);                   // stopped at the threshold, not at the answer cap
  expect(h.backend.results[0]!.finish).toBe('stop-token');              // the grammar ended the answer itself
  expect(await h.files.allFiles()).toEqual([]);
  expect(h.agent.timeline.items.find((i) => i.kind === 'call')).toMatchObject({ state: 'not-run', result: 'not run: the model failed' });
  // A model that writes its call well is never overruled: the same request with a right call runs.
  const ok = await harness({ replies: [call('write_file', { path: 'a.js', content: 'let a = 1;\n'.repeat(40) }), 'Done.'] });
  expect((await ok.agent.run('Write a.js')).reason).toBe('done');
});
