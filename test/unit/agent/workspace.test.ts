// openAgentWorkspace: tools + extra tools + codec + a session saved as the request goes and restored.
import { expect, test, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { openAgentWorkspace } from '../../../src/agent/workspace.ts';
import { MemorySessionStore } from '../../../src/agent/session-store.ts';
import { MemoryFiles } from '../../../src/agent/files/memory.ts';
import { NodeRegexRunner } from '../../../src/agent/tools/regex-runner.ts';
import { replayBackend } from '../../../src/agent/replay/replay-engine.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import { loadBundledQwen3Tokenizer } from '../../../src/model/bundled-tokenizer.ts';
import { SERVE } from '../../../src/agent/tools/schemas.ts';
import type { Tool } from '../../../src/agent/tool-types.ts';
import { call } from './harness.ts';

// The first test of a file loads the real 151,669-token vocabulary and builds the call grammar (~10 s on a busy CI).
vi.setConfig({ testTimeout: 120_000 });

test('a workspace saves its session while it runs and a reopened one continues it', async () => {
  const tokenizer = await loadBundledQwen3Tokenizer();
  const template = new ChatTemplate(readFileSync(new URL('../../fixtures/chat-templates/qwen3.jinja', import.meta.url), 'utf8'));
  const files = new MemoryFiles();
  const sessions = new MemorySessionStore();
  const serve: Tool = { schema: SERVE, readOnly: true, run: async () => ({ ok: true, text: 'Served / on :5173 — loaded in 20 ms, no errors.' }) };
  const open = (replies: string[]) => openAgentWorkspace({
    projectId: 'game', tokenizer, files, sessions, extraTools: [serve], regexRunner: new NodeRegexRunner(),
    backend: replayBackend({ tokenizer, template, replies }).backend,
  });
  const first = await open([call('write_file', { path: 'index.html', content: '<!doctype html>' }), call('serve', {}), 'Served.']);
  const out = await first.agent.run('Make and serve a page');
  expect(out.reason).toBe('done');
  await first.save();
  const saved = (await sessions.load('game'))!;
  expect(saved.servedPorts).toEqual([{ port: 5173, path: '' }]);
  expect(saved.timeline.at(-1)).toMatchObject({ kind: 'summary', reason: 'done' });

  const second = await open(['Yes, it is served.']);
  expect(second.reencoded).toBe(false);
  expect(second.agent.timeline.items).toEqual(first.agent.timeline.items);
  expect(second.agent.conversation.segments).toEqual(first.agent.conversation.segments);
  await second.agent.run('Is it served?');
  await second.newTask();
  expect((await sessions.load('game'))!.segments).toEqual([]);
  expect(await files.allFiles()).toEqual(['index.html']);
});
