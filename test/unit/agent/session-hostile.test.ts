// Issue 12, item 19: a saved session that cannot be read (an old build, a crash, a hand edit) must not
// lock the user out of the project: it is set aside (kept under another name), the user is told, and
// a new session starts. Every field is checked on load.
import { expect, test, vi } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MemorySessionStore, openSession, SessionFormatError, type SessionData } from '../../../src/agent/session-store.ts';
import { NodeSessionStore } from '../../../src/agent/node-session-store.ts';
import { validateSession } from '../../../src/agent/session-validate.ts';
import { NOTE_KINDS } from '../../../src/agent/events.ts';
import { openAgentWorkspace } from '../../../src/agent/workspace.ts';
import { MemoryFiles } from '../../../src/agent/files/memory.ts';
import { NodeRegexRunner } from '../../../src/agent/tools/regex-runner.ts';
import { replayBackend } from '../../../src/agent/replay/replay-engine.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import { loadBundledQwen3Tokenizer } from '../../../src/model/bundled-tokenizer.ts';
import type { Backend } from '../../../src/agent/backend.ts';
import { call } from './harness.ts';

vi.setConfig({ testTimeout: 120_000 });

/** A small but complete session: every segment and timeline kind. */
export function goodSession(): SessionData {
  return {
    version: 1, model: 'm', requests: 1, savedAt: 1,
    segments: [
      { kind: 'user', request: 0, text: 'hi', tokens: [1, 2], content: 'hi' },
      { kind: 'assistant', request: 0, step: 1, text: 'x', tokens: [3], content: 'x', final: false },
      { kind: 'results', request: 0, step: 1, text: 'r', tokens: [4], calls: [{ name: 'serve', arguments: {}, ok: true, changed: false, content: 'ok', port: 5173 }] },
      { kind: 'note', request: 0, text: 'n', tokens: [], content: 'n' },
      { kind: 'fold', request: 0, text: 'f', tokens: [5], content: 'f' },
    ],
    timeline: [
      { kind: 'request', request: 0, text: 'hi' },
      { kind: 'text', step: 1, text: 'x' },
      { kind: 'call', step: 1, call: 1, name: 'serve', arguments: {}, raw: '', state: 'done', result: 'ok' },
      { kind: 'note', step: 1, note: 'nudge', text: 'n' },
      { kind: 'summary', request: 0, reason: 'done', line: '1 step' },
    ],
    servedPorts: [{ port: 5173, path: '' }],
  };
}

test('item 19: a complete session passes the checks unchanged', () => {
  expect(validateSession('p', goodSession())).toEqual(goodSession());
});

test('every note kind the agent writes reads back from a saved session (a last-step "limit" note once made a session unreadable)', () => {
  for (const note of NOTE_KINDS) {
    const s = goodSession();
    (s.timeline[3] as { note: string }).note = note;
    expect(validateSession('p', s)).toEqual(s);
  }
});

test.each([
  ['tokens: null', (s: any) => { s.segments[0].tokens = null; }, /segments\[0\]\.tokens is null, expected a list/],
  ['a token id that is not one', (s: any) => { s.segments[1].tokens = [3, -1]; }, /segments\[1\]\.tokens\[1\] is -1, expected a token id/],
  ['a fractional token id', (s: any) => { s.segments[4].tokens = [1.5]; }, /segments\[4\]\.tokens\[0\] is 1\.5/],
  ['a text token', (s: any) => { s.segments[4].tokens = ['5']; }, /segments\[4\]\.tokens\[0\] is the text "5"/],
  ['an unknown segment kind', (s: any) => { s.segments[2].kind = 'tool'; }, /segments\[2\]\.kind is the text "tool"/],
  ['text missing', (s: any) => { delete s.segments[0].text; }, /segments\[0\]\.text is undefined, expected text/],
  ['a call without arguments', (s: any) => { s.segments[2].calls[0].arguments = null; }, /segments\[2\]\.calls\[0\]\.arguments is null/],
  ['a tool-result turn with no calls (found by the session fuzz)', (s: any) => { s.segments[2].calls = []; }, /segments\[2\]\.calls is a list, expected at least one call/],
  ['a timeline item of no kind', (s: any) => { s.timeline[3] = 7; }, /timeline\[3\] is 7, expected an object/],
  ['a call card in an unknown state', (s: any) => { s.timeline[2].state = 'exploded'; }, /timeline\[2\]\.state/],
  ['a served port of 0', (s: any) => { s.servedPorts[0].port = 0; }, /servedPorts\[0\]\.port is 0/],
  ['negative requests', (s: any) => { s.requests = -1; }, /^.*requests is -1/],
  ['segments not a list', (s: any) => { s.segments = { 0: 1 }; }, /segments is object, expected a list/],
  ['another version', (s: any) => { s.version = 9; }, /version is 9, expected 1/],
])('item 19: %s is a SessionFormatError naming the field', (_name, mutate, message) => {
  const s = goodSession();
  mutate(s);
  expect(() => validateSession('game', s)).toThrow(SessionFormatError);
  expect(() => validateSession('game', s)).toThrow(/project "game" cannot be read/);
  expect(() => validateSession('game', s)).toThrow(message);
});

test('item 19: not even an object (null, a string) is a SessionFormatError', () => {
  expect(() => validateSession('p', null)).toThrow(SessionFormatError);
  expect(() => validateSession('p', 'session')).toThrow(SessionFormatError);
});

test('item 19: a workspace whose saved session has tokens: null opens, tells why, keeps the bad one, and works', async () => {
  const tokenizer = await loadBundledQwen3Tokenizer();
  const template = new ChatTemplate(readFileSync(new URL('../../fixtures/chat-templates/qwen3.jinja', import.meta.url), 'utf8'));
  const files = new MemoryFiles({ 'index.html': '<!doctype html>' });
  const sessions = new MemorySessionStore();
  const bad = goodSession();
  (bad.segments[0] as { tokens: unknown }).tokens = null;
  sessions.putRaw('game', bad);
  const ws = await openAgentWorkspace({
    projectId: 'game', tokenizer, files, sessions, regexRunner: new NodeRegexRunner(),
    backend: replayBackend({ tokenizer, template, replies: [call('list_dir', {}), 'Here it is.'] }).backend,
  });
  expect(ws.sessionProblem).toMatch(/^SessionFormatError: .*segments\[0\]\.tokens is null.*kept as "game\.unreadable-[0-9TZ-]+" and a new session started/);
  const keptAs = /kept as "([^"]+)"/.exec(ws.sessionProblem!)![1]!;
  expect(JSON.parse(sessions.raw(keptAs)!)).toEqual(bad);      // nothing of it is lost
  expect(ws.agent.conversation.segments).toEqual([]);
  const out = await ws.agent.run('What is in the project?');
  expect(out.reason).toBe('done');
  await ws.save();
  expect((await sessions.load('game'))!.requests).toBe(1);       // the new session is saved in its place
  expect(await files.allFiles()).toEqual(['index.html']);
});

test('item 19: a session file that is not JSON (CLI store) is renamed aside, not deleted', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'pooled-sessions-'));
  try {
    const store = new NodeSessionStore(dir);
    await writeFile(path.join(dir, 'game.session.json'), '{"version": 1, "segments": [');
    const opened = await openSession(store, 'game', { name: 'm', encode: () => [] } as unknown as Backend);
    expect(opened.restored).toBeUndefined();
    expect(opened.problem).toMatch(/^SessionFormatError: .*is not JSON.*kept as ".*game\.unreadable-.*\.session\.json"/);
    const names = await readdir(dir);
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^game\.unreadable-.*\.session\.json$/);
    expect(await readFile(path.join(dir, names[0]!), 'utf8')).toBe('{"version": 1, "segments": [');
    expect(existsSync(path.join(dir, 'game.session.json'))).toBe(false);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
