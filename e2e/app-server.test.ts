// The start screen's "server" choice in real Chromium: an OpenAI-compatible server (a real HTTP server in
// this test process, speaking the wire format from a script, CORS open like llama.cpp's) runs the model;
// the app renders the prompt with the model's template, streams the answer, runs the tools and ends with
// the summary line. The choice is saved in the browser and offered again.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { tinyModelDir } from '../test/helpers/tiny-model.ts';
import { startOpenAIServer, type ScriptedServer } from '../test/helpers/openai-server.ts';
import { startServer, type RunningServer } from '../server/app.ts';
import { artifactDir, launchChromium, newDeviceContext } from './helpers/browser.ts';
import type { Browser } from 'playwright-core';

let app: RunningServer;
let browser: Browser;
let model: ScriptedServer;
const call = (name: string, args: Record<string, unknown>) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

beforeAll(async () => {
  app = await startServer({ port: 0, extraStatic: { '/models/tiny': await tinyModelDir() } });
  browser = await launchChromium();
  model = await startOpenAIServer({
    kind: 'llama.cpp', nCtx: 8192,
    replies: [
      { text: `Writing it.\n${call('write_file', { path: 'hello.txt', content: 'hello from the server\n' })}`, delayMs: 5 },
      { text: 'Wrote hello.txt.', delayMs: 5 },
    ],
  });
});
afterAll(async () => {
  await model?.close();
  await browser?.close();
  await app?.close();
});

test('a server chosen on the start screen runs the agent: streamed answer, tool run, summary with the server\'s count; the choice is kept', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  await page.goto(`${app.url}/`);
  await page.getByTestId('server-url').fill(model.url);
  await page.getByTestId('server-model').fill('qwen3-test');
  await page.getByTestId('server-tokenizer').fill('/models/tiny');
  mkdirSync(artifactDir(), { recursive: true });
  await page.screenshot({ path: path.join(artifactDir(), 'start-server-choice.png'), fullPage: true });
  await page.getByTestId('use-server').click();
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  expect(new URL(page.url()).searchParams.get('server')).toBe(model.url);
  await page.getByTestId('request-input').fill('Write hello.txt');
  await page.getByTestId('send').click();
  const summary = page.getByTestId('tl-summary');
  await summary.first().waitFor({ timeout: 60_000 });
  await page.screenshot({ path: path.join(artifactDir(), 'app-server-workspace.png') });
  expect(await page.getByTestId('tl-note').allTextContents()).toEqual([]);
  expect(await summary.first().getAttribute('data-reason')).toBe('done');
  expect(await summary.first().textContent()).toMatch(/^2 steps · 1 tool call · \d+ tok \(server: \d+\) · .* · on the server · /);
  const files = await page.getByTestId('file-tree').locator('button[data-path]').evaluateAll((b) => b.map((x) => x.getAttribute('data-path')));
  expect(files).toEqual(['hello.txt']);
  expect(String(model.requests[0]!.prompt)).toMatch(/^<\|im_start\|>system\nYou are a coding agent/);
  await page.screenshot({ path: path.join(artifactDir(), 'app-server-workspace.png') });
  // Back on the start screen, the choice is offered again.
  await page.goto(`${app.url}/`);
  await expect.poll(() => page.getByTestId('server-url').inputValue(), { timeout: 20_000 }).toBe(model.url);
  expect(await page.getByTestId('server-model').inputValue()).toBe('qwen3-test');
  expect(await page.getByTestId('server-tokenizer').inputValue()).toBe('/models/tiny');
  await context.close();
});

test('a chat-only server (OpenAI\'s "chat model" 404 on /v1/completions) runs the agent from the browser: messages, OpenAI tools, streamed tool_calls', async () => {
  const chatOnly = await startOpenAIServer({
    kind: 'generic', routes: { completions: 'chat-model' },
    replies: [
      { text: 'Writing it.', toolCalls: [{ name: 'write_file', arguments: JSON.stringify({ path: 'chat.txt', content: 'hello from chat\n' }) }], delayMs: 5 },
      { text: 'Wrote chat.txt.', delayMs: 5 },
    ],
  });
  const context = await newDeviceContext(browser);
  try {
    const page = await context.newPage();
    await page.goto(`${app.url}/?server=${encodeURIComponent(chatOnly.url)}&server-model=qwen3-test&tokenizer=${encodeURIComponent('/models/tiny')}`);
    await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
    await page.getByTestId('request-input').fill('Write chat.txt');
    await page.getByTestId('send').click();
    const summary = page.getByTestId('tl-summary');
    await summary.first().waitFor({ timeout: 60_000 });
    expect(await summary.first().getAttribute('data-reason')).toBe('done');
    const files = await page.getByTestId('file-tree').locator('button[data-path]').evaluateAll((b) => b.map((x) => x.getAttribute('data-path')));
    expect(files).toEqual(['chat.txt']);
    expect(chatOnly.paths).toEqual(['/v1/completions', '/v1/chat/completions', '/v1/chat/completions']);
    const second = chatOnly.requests[1]!.messages as { role: string; tool_calls?: unknown[] }[];
    expect(second.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    await page.screenshot({ path: path.join(artifactDir(), 'app-server-chat-only.png') });
  } finally {
    await context.close();
    await chatOnly.close();
  }
});
