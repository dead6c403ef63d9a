// `npm run agent` (src/agent/cli.ts, run in-process): a replay script on a folder, events, summary, --json.
import { afterAll, expect, test, vi } from 'vitest';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAgentArgs, runAgentCli, AgentCliError } from '../../../src/agent/cli.ts';
import { call, xmlCall } from './harness.ts';
import { startOpenAIServer } from '../../helpers/openai-server.ts';

// The first test of a file loads the real 151,669-token vocabulary and builds the call grammar (~10 s on a busy CI).
vi.setConfig({ testTimeout: 120_000 });

const dirs: string[] = [];
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }); });

async function script(replies: string[]): Promise<{ dir: string; file: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'pooled-cli-'));
  dirs.push(dir);
  const file = path.join(dir, 'script.jsonl');
  await writeFile(file, replies.map((text) => JSON.stringify({ text })).join('\n') + '\n');
  return { dir, file };
}

test('runs a replay on a folder, prints the events and the summary; --json ends with the outcome', async () => {
  const { dir, file } = await script([call('write_file', { path: 'index.html', content: '<!doctype html>\n<h1>Hi</h1>' }), 'Done: it says Hi.']);
  const lines: string[] = [];
  const code = await runAgentCli(['--project', path.join(dir, 'proj'), '--replay', file, '--json', '--request', 'Make a page'], { out: (l) => lines.push(l) });
  expect(code).toBe(0);
  expect(await readFile(path.join(dir, 'proj', 'index.html'), 'utf8')).toBe('<!doctype html>\n<h1>Hi</h1>');
  expect(lines[0]).toBe('> Make a page');
  expect(lines).toContain('← created index.html (2 lines)');
  expect(lines).toContain('  Done: it says Hi.');
  const last = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
  expect(last).toMatchObject({ reason: 'done', steps: 2, toolCalls: 1 });
  expect(last.summary).toBe(lines.at(-2));
  expect(lines.at(-2)).toMatch(/^2 steps · 1 tool call · \d+ tok · [\d.]+ tok\/s · 1 device · [\d.]+ s$/);
});

test('--format xml with --ctx; a script that runs out ends with error', async () => {
  const { dir, file } = await script([xmlCall('list_dir', {})]);
  const lines: string[] = [];
  await runAgentCli(['--project', dir, '--replay', file, '--format', 'xml', '--ctx', '4096', '--json'], { out: (l) => lines.push(l) });
  expect(lines[1]).toMatch(/^· step 1 \(prompt \d+ of 4096 tokens\)$/);
  expect(JSON.parse(lines.at(-1)!)).toMatchObject({ reason: 'error', steps: 2, toolCalls: 1 });
});

test('bad arguments are named errors with the usage', () => {
  expect(() => parseAgentArgs(['--replay', 'x'])).toThrow(AgentCliError);
  expect(() => parseAgentArgs(['--project', 'p'])).toThrow(/give the model: --replay FILE.jsonl or --openai URL --model NAME/);
  expect(() => parseAgentArgs(['--project', 'p', '--openai', 'http://127.0.0.1:8080'])).toThrow(/--openai needs --model NAME/);
  expect(() => parseAgentArgs(['--project', 'p', '--replay', 'r', '--format', 'yaml'])).toThrow(/--format must be xml or json/);
  expect(() => parseAgentArgs(['--project', 'p', '--replay', 'r', '--ctx', 'big'])).toThrow(/--ctx must be a whole number/);
  expect(parseAgentArgs(['--project', 'p', '--replay', 'r', 'Make', 'it'])).toMatchObject({ request: 'Make it', format: 'json', json: false });
});

test('--transcript writes every turn as the model saw it: one JSON line per turn, exact text, token counts', async () => {
  const { dir, file } = await script([call('write_file', { path: 'a.txt', content: 'hello there' }), 'Wrote a.txt.']);
  const out = path.join(dir, 'run.jsonl');
  await runAgentCli(['--project', path.join(dir, 'proj'), '--replay', file, '--transcript', out, '--request', 'Write a.txt'], { out: () => undefined });
  const lines = (await readFile(out, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines.map((l) => l.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
  expect(lines[0]!.text).toMatch(/^<\|im_start\|>system\nYou are a coding agent\.[\s\S]*"name": "write_file"/);
  expect(lines[1]).toMatchObject({ text: '<|im_start|>user\nWrite a.txt<|im_end|>\n', request: 0 });
  expect(lines[2]!.text).toMatch(/^<\|im_start\|>assistant\n<think>\n\n<\/think>\n\n<tool_call>\n\{"name": "write_file"[\s\S]*<\/tool_call><\|im_end\|>\n$/);
  expect(lines[3]).toMatchObject({ role: 'tool', step: 1, text: '<|im_start|>user\n<tool_response>\ncreated a.txt (1 line)\n</tool_response><|im_end|>\n' });
  expect(lines[4]!.text).toBe('<|im_start|>assistant\n<think>\n\n</think>\n\nWrote a.txt.<|im_end|>\n');
  // Token counts are the tokenizer's, and the second answer's prompt is everything before it.
  const tokens = lines.map((l) => l.tokens as number);
  expect(tokens.every((n) => Number.isInteger(n) && n > 0)).toBe(true);
  const gen = 7; // <|im_start|> assistant \n <think> \n\n </think> \n\n: the generation prompt ending every prompt
  expect(lines[4]!.promptTokens).toBe(tokens[0]! + tokens[1]! + tokens[2]! + tokens[3]! + gen);
});

test('--openai URL --model NAME runs the same agent on an OpenAI-compatible server', async () => {
  const server = await startOpenAIServer({
    kind: 'llama.cpp', nCtx: 8192,
    replies: [{ text: call('write_file', { path: 'hi.txt', content: 'hi from the server' }) }, { text: 'Wrote hi.txt.' }],
  });
  try {
    const { dir } = await script([]);
    const lines: string[] = [];
    const code = await runAgentCli(['--project', path.join(dir, 'proj'), '--openai', `${server.url}/v1`, '--model', 'qwen3-test', '--json', '--request', 'Write hi.txt'], { out: (l) => lines.push(l) });
    expect(code).toBe(0);
    expect(lines[0]).toBe(`· qwen3-test on ${server.url} (llama.cpp, context 8192 tokens)`);
    expect(await readFile(path.join(dir, 'proj', 'hi.txt'), 'utf8')).toBe('hi from the server');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ reason: 'done', steps: 2, toolCalls: 1 });
    expect(lines.some((l) => l.includes('/v1/chat/completions'))).toBe(false);
    const bad: string[] = [];
    expect(await runAgentCli(['--project', dir, '--openai', server.url, '--model', 'nope'], { out: (l) => bad.push(l) })).toBe(1);
    expect(bad).toEqual([expect.stringMatching(/^ServerError: the server at http:\/\/127\.0\.0\.1:\d+ has no model "nope"; it serves: qwen3-test$/)]);
  } finally {
    await server.close();
  }
});

test('--openai on a chat-only server: the same request runs on /v1/chat/completions, and the CLI says so', async () => {
  const server = await startOpenAIServer({
    kind: 'generic', routes: { completions: '405' },
    replies: [{ toolCalls: [{ name: 'write_file', arguments: JSON.stringify({ path: 'hi.txt', content: 'hi from chat' }) }] }, { text: 'Wrote hi.txt.' }],
  });
  try {
    const { dir } = await script([]);
    const lines: string[] = [];
    const code = await runAgentCli(['--project', path.join(dir, 'proj'), '--openai', server.url, '--model', 'qwen3-test', '--json', '--request', 'Write hi.txt'], { out: (l) => lines.push(l) });
    expect(code).toBe(0);
    expect(await readFile(path.join(dir, 'proj', 'hi.txt'), 'utf8')).toBe('hi from chat');
    expect(lines).toContain('· the server has no /v1/completions (405 Method Not Allowed: Method Not Allowed); the conversation went to /v1/chat/completions as messages, the tools as OpenAI tools');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ reason: 'done', steps: 2, toolCalls: 1 });
  } finally {
    await server.close();
  }
});

test('the --json result line carries the end note the text line above it shows (26.8)', async () => {
  const { dir, file } = await script([call('list_dir', {})]);   // the script runs out: the request ends with an error note
  const lines: string[] = [];
  await runAgentCli(['--project', dir, '--replay', file, '--json'], { out: (l) => lines.push(l) });
  const last = JSON.parse(lines.at(-1)!) as { reason: string; note: unknown };
  expect(last.reason).toBe('error');
  expect(last.note).toEqual(expect.stringMatching(/^the model failed: /));
  expect(lines).toContain(`! ${last.note as string}`);
});
