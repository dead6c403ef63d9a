// The agent workspace in real Chromium on the replay model (?agent=replay&script=…): a request that
// writes files (one edit approved, one rejected through the UI), serves them and ends with the summary
// line; Stop and Esc end running requests with reason `stopped`; a reload restores the timeline and the
// files; New task clears the conversation and keeps the files.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { RunningServer } from '../server/app.ts';
import { tinyModelDir } from '../test/helpers/tiny-model.ts';
import { artifactDir, newDeviceContext, startBuiltApp, type BuiltApp } from './helpers/browser.ts';

let server: RunningServer;
let browser: Browser;

let app: BuiltApp | undefined;

const call = (name: string, args: Record<string, unknown>, before = '') =>
  `${before}<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
const jsonl = (replies: string[]) => replies.map((text) => JSON.stringify({ text })).join('\n') + '\n';

const PAGE = '<!doctype html>\n<html>\n<head><title>Hi</title></head>\n<body>\n<h1>Hello from the agent</h1>\n<script src="app.js"></script>\n</body>\n</html>\n';
const SCRIPT = "console.log('app ready');\n";
const LONG = 'This answer goes on and on while you decide to stop it. '.repeat(60);

beforeAll(async () => {
  const scripts = mkdtempSync(path.join(tmpdir(), 'pooled-e2e-scripts-'));
  writeFileSync(path.join(scripts, 'build.jsonl'), jsonl([
    call('write_file', { path: 'index.html', content: PAGE }, 'First the page.\n'),
    call('write_file', { path: 'secret.txt', content: 'should never be written\n' }, 'And a file you will reject.\n'),
    call('write_file', { path: 'app.js', content: SCRIPT }, 'Now the script.\n'),
    call('serve', {}, 'Serving it to check for errors.\n'),
    'Done: the page is served on :5173.',
  ]));
  writeFileSync(path.join(scripts, 'toggle.jsonl'), jsonl([
    call('write_file', { path: 'asked.txt', content: 'written after approval\n' }, 'Writing it.\n'),
    'Written.',
  ]));
  writeFileSync(path.join(scripts, 'toggle-2.jsonl'), jsonl([call('write_file', { path: 'free.txt', content: 'written without asking\n' }), 'Written too.']));
  writeFileSync(path.join(scripts, 'about.jsonl'), jsonl([
    call('write_file', { path: 'docs/about.html', content: '<!doctype html>\n<title>About</title>\n<h1>About this project</h1>\n' }),
    call('serve', { path: 'docs/about.html' }),
    'Served the about page.',
  ]));
  writeFileSync(path.join(scripts, 'stop.jsonl'), jsonl([
    call('write_file', { path: 'notes.txt', content: 'kept across New task\n' }, 'Writing notes.\n'),
    'Notes written.',
    LONG,
    LONG,
  ]));
  writeFileSync(path.join(scripts, 'pending.jsonl'), jsonl([
    call('write_file', { path: 'one.txt', content: '1\n' }, 'Two files.\n') + call('write_file', { path: 'two.txt', content: '2\n' }),
    'Never reached.',
  ]));
  app = await startBuiltApp({ '/models/tiny': await tinyModelDir(), '/e2e-scripts': scripts });
  ({ server, browser } = app);
});

afterAll(async () => { await app?.close(); });

async function openReplay(page: Page, query: string): Promise<void> {
  await page.goto(`${server.url}/?agent=replay&${query}`);
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByTestId('request-input').fill(text);
  await page.getByTestId('send').click();
}

const summaries = (page: Page) => page.getByTestId('tl-summary');

test('a request writes files (one edit approved, one rejected), serves them and ends with the summary line', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  await openReplay(page, 'script=/e2e-scripts/build.jsonl&delay=1&ask=1');
  expect(await page.getByTestId('ask-first').isChecked()).toBe(true);
  await send(page, 'Make a hello page');

  // 1st edit: the card shows the diff of the new file; approve it.
  await page.getByTestId('approve').waitFor({ timeout: 30_000 });
  expect(await page.getByTestId('diff').textContent()).toContain('+ <h1>Hello from the agent</h1>');
  mkdirSync(artifactDir(), { recursive: true });
  await page.screenshot({ path: path.join(artifactDir(), 'app-approval.png') });
  await page.getByTestId('approve').click();
  // 2nd edit: reject it.
  await expect.poll(async () => (await page.getByTestId('diff').textContent()) ?? '', { timeout: 30_000 }).toContain('+ should never be written');
  await page.getByTestId('reject').click();
  // 3rd edit: approve.
  await expect.poll(async () => (await page.getByTestId('diff').textContent()) ?? '', { timeout: 30_000 }).toContain("+ console.log('app ready');");
  await page.getByTestId('approve').click();

  await summaries(page).first().waitFor({ timeout: 60_000 });
  const line = (await summaries(page).first().textContent())!.trim();
  expect(line).toMatch(/^\d+ steps · 4 tool calls · \d+ tok · scripted model · \d+\.\d s$/);
  expect(await summaries(page).first().getAttribute('data-reason')).toBe('done');

  const states = await page.getByTestId('call-card').evaluateAll((cards) => cards.map((c) => `${c.getAttribute('data-name')}:${c.getAttribute('data-state')}`));
  expect(states).toEqual(['write_file:done', 'write_file:rejected', 'write_file:done', 'serve:done']);
  const files = await page.getByTestId('file-tree').locator('button[data-path]').evaluateAll((b) => b.map((x) => x.getAttribute('data-path')));
  expect(files).toEqual(['app.js', 'index.html']);
  // The answer streamed into the timeline, and the page is served in the preview with its console.
  expect(await page.getByTestId('tl-text').last().textContent()).toContain('Done: the page is served on :5173.');
  await expect.poll(async () => page.getByTestId('preview-address').textContent(), { timeout: 15_000 }).toBe(':5173/');
  await expect.poll(async () => (await page.getByTestId('preview-console').textContent()) ?? '', { timeout: 15_000 }).toContain('app ready');
  // The file viewer shows the file (in the code editor, its own shadow root: read through the editor's content).
  await page.getByTestId('file-tree').locator('button[data-path="index.html"]').click();
  await expect.poll(async () => (await page.getByTestId('file-editor').textContent().catch(() => null)) ?? '', { timeout: 30_000 }).toContain('Hello from the agent');
  expect(await page.getByTestId('context-meter').textContent()).toMatch(/^[\d,]+ \/ 6,080 tok$/);

  mkdirSync(artifactDir(), { recursive: true });
  await page.screenshot({ path: path.join(artifactDir(), 'app-workspace.png') });
  await context.close();
});

test('the ask-first toggle, clicked in the UI, makes edits wait for approval, is kept across a reload, and turns off again; Transcript downloads the conversation', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  await openReplay(page, 'script=/e2e-scripts/toggle.jsonl&delay=1');
  const toggle = page.getByTestId('ask-first');
  expect(await toggle.isChecked()).toBe(false);
  await toggle.click();
  expect(await toggle.isChecked()).toBe(true);
  await send(page, 'Write asked.txt');
  await page.getByTestId('approve').waitFor({ timeout: 30_000 });
  expect(await page.getByTestId('diff').textContent()).toContain('+ written after approval');
  await page.getByTestId('approve').click();
  await expect.poll(async () => summaries(page).count(), { timeout: 60_000 }).toBe(1);

  // Kept across a reload (the same project, the next script); clicked off, the next edit runs without asking.
  await openReplay(page, 'script=/e2e-scripts/toggle-2.jsonl&delay=1');
  expect(await page.getByTestId('ask-first').isChecked()).toBe(true);
  await page.getByTestId('ask-first').click();
  expect(await page.getByTestId('ask-first').isChecked()).toBe(false);
  await send(page, 'Write free.txt');
  await expect.poll(async () => summaries(page).count(), { timeout: 60_000 }).toBe(2);
  expect(await page.getByTestId('approve').count()).toBe(0);
  const states = await page.getByTestId('call-card').evaluateAll((cards) => cards.map((c) => `${c.getAttribute('data-name')}:${c.getAttribute('data-state')}`));
  expect(states).toEqual(['write_file:done', 'write_file:done']);
  const files = await page.getByTestId('file-tree').locator('button[data-path]').evaluateAll((b) => b.map((x) => x.getAttribute('data-path')));
  expect(files).toEqual(['asked.txt', 'free.txt']);

  // The transcript: one JSON line per turn as the model saw it.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('transcript').click()]);
  const text = readFileSync((await download.path())!, 'utf8');
  const roles = text.trimEnd().split('\n').map((l) => (JSON.parse(l) as { role: string }).role);
  expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
  expect(download.suggestedFilename()).toMatch(/^pooled-transcript-.*\.jsonl$/);
  await context.close();
});

test('a served page that is not a folder\'s index.html (docs/about.html) comes back after a reload', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  await openReplay(page, 'script=/e2e-scripts/about.jsonl&delay=1');
  await send(page, 'Make an about page');
  await expect.poll(async () => summaries(page).count(), { timeout: 60_000 }).toBe(1);
  // The page runs in a sandboxed frame inside the preview's shell frame (src/preview/frame-shell.ts).
  const heading = () => page.frameLocator('iframe').first().frameLocator('iframe').locator('h1').textContent({ timeout: 5_000 }).catch(() => null);
  await expect.poll(heading, { timeout: 15_000 }).toBe('About this project');
  await page.reload();
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  await expect.poll(async () => page.getByTestId('preview-address').textContent(), { timeout: 15_000 }).toBe(':5173/');
  await expect.poll(heading, { timeout: 15_000 }).toBe('About this project');
  await context.close();
});

test('Esc while an ask-first call waits, then a reload: the conversation comes back, no error (the session-loss repro)', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  await openReplay(page, 'script=/e2e-scripts/pending.jsonl&delay=1&ask=1');
  await send(page, 'Write two files');
  await page.getByTestId('approve').waitFor({ timeout: 30_000 });
  await page.keyboard.press('Escape');
  await expect.poll(async () => summaries(page).count(), { timeout: 30_000 }).toBe(1);
  const before = await page.getByTestId('timeline').textContent();
  const states = () => page.locator('.state').allTextContents();
  expect(await states()).toEqual(['rejected', 'not run']);   // the second card's state is the one the reader once refused
  await page.reload();
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  await expect.poll(async () => summaries(page).count(), { timeout: 30_000 }).toBe(1);
  expect(await page.getByTestId('timeline').textContent()).toBe(before);
  expect(await states()).toEqual(['rejected', 'not run']);
  expect(await page.getByTestId('restored').count()).toBe(1);
  expect(await page.getByTestId('workspace-error').count()).toBe(0);

  // A card a newer build wrote: the conversation still comes back, the message names what was left out and
  // closes with its button, and New task would not bring it back.
  await page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((ok, no) => { const r = indexedDB.open('pooled-sessions', 1); r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error); });
    const tx = db.transaction('sessions', 'readwrite');
    const store = tx.objectStore('sessions');
    const session = await new Promise<{ timeline: unknown[] }>((ok) => { const r = store.get('replay'); r.onsuccess = () => ok(r.result); });
    session.timeline.push({ kind: 'call', step: 9, call: 9, name: 'x', arguments: {}, raw: '', state: 'from-a-newer-build' });
    store.put(session, 'replay');
    await new Promise((ok) => { tx.oncomplete = ok; });
    db.close();
  });
  await page.reload();
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  await expect.poll(async () => summaries(page).count(), { timeout: 30_000 }).toBe(1);
  expect(await page.getByTestId('timeline').textContent()).toBe(before);
  expect(await states()).toEqual(['rejected', 'not run']);
  expect(await page.getByTestId('workspace-error').textContent()).toMatch(/1 timeline card could not be read .* left out; the conversation is restored/);
  await page.screenshot({ path: path.join(artifactDir(), 'session-salvaged.png') });
  await page.getByTestId('dismiss-error').click();
  expect(await page.getByTestId('workspace-error').count()).toBe(0);
  await context.close();
});

test('Stop and Esc end running requests as stopped; a reload restores the session; New task clears it and keeps the files', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  await openReplay(page, 'script=/e2e-scripts/stop.jsonl&delay=25');
  await send(page, 'Write some notes');
  await expect.poll(async () => summaries(page).count(), { timeout: 60_000 }).toBe(1);
  expect(await summaries(page).nth(0).getAttribute('data-reason')).toBe('done');

  // Stop button while the answer streams.
  await send(page, 'Tell me a long story');
  await expect.poll(async () => ((await page.getByTestId('tl-text').last().textContent()) ?? '').length, { timeout: 30_000 }).toBeGreaterThan(40);
  expect(await page.getByTestId('stop').isEnabled()).toBe(true);
  await page.getByTestId('stop').click();
  await expect.poll(async () => summaries(page).count(), { timeout: 30_000 }).toBe(2);
  expect(await summaries(page).nth(1).getAttribute('data-reason')).toBe('stopped');
  expect(await summaries(page).nth(1).textContent()).toMatch(/ · stopped$/);

  // Esc while the next one streams.
  await send(page, 'Another long story');
  await expect.poll(async () => ((await page.getByTestId('tl-text').last().textContent()) ?? '').length, { timeout: 30_000 }).toBeGreaterThan(40);
  await page.keyboard.press('Escape');
  await expect.poll(async () => summaries(page).count(), { timeout: 30_000 }).toBe(3);
  expect(await summaries(page).nth(2).getAttribute('data-reason')).toBe('stopped');
  const partial = (await page.getByTestId('tl-text').last().textContent()) ?? '';
  expect(partial.length).toBeLessThan(LONG.length);       // the partial answer is kept, cut where it stopped

  // Reload: the timeline and the files come back.
  const before = await page.getByTestId('timeline').textContent();
  await page.reload();
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  await expect.poll(async () => summaries(page).count(), { timeout: 30_000 }).toBe(3);
  expect(await page.getByTestId('timeline').textContent()).toBe(before);
  expect(await page.getByTestId('restored').count()).toBe(1);
  const files = () => page.getByTestId('file-tree').locator('button[data-path]').evaluateAll((b) => b.map((x) => x.getAttribute('data-path')));
  await expect.poll(files, { timeout: 15_000 }).toEqual(['notes.txt']);

  // New task asks first: Keep changes nothing.
  const meterBefore = await page.getByTestId('context-meter').textContent();
  await page.getByTestId('new-task').click();
  await page.getByTestId('cancel-new-task').click();
  expect(await page.getByTestId('timeline').textContent()).toBe(before);
  // Clear, then Undo: the conversation is back as it was, also after a reload.
  await page.getByTestId('new-task').click();
  await page.getByTestId('confirm-new-task').click();
  await expect.poll(async () => page.getByTestId('timeline').count()).toBe(0);
  await page.screenshot({ path: path.join(artifactDir(), 'agent-cleared-undo.png') });
  await page.getByTestId('undo-new-task').click();
  await expect.poll(async () => page.getByTestId('timeline').textContent()).toBe(before);
  expect(await page.getByTestId('context-meter').textContent()).toBe(meterBefore);
  await page.reload();
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  await expect.poll(async () => summaries(page).count(), { timeout: 30_000 }).toBe(3);
  expect(await page.getByTestId('timeline').textContent()).toBe(before);

  // New task: the conversation is cleared (and stays cleared after a reload); the files are kept.
  await page.getByTestId('new-task').click();
  await page.getByTestId('confirm-new-task').click();
  await expect.poll(async () => page.getByTestId('timeline').count()).toBe(0);
  expect(await page.getByTestId('context-meter').textContent()).not.toBe(meterBefore);
  expect(await files()).toEqual(['notes.txt']);
  await page.reload();
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  await expect.poll(files, { timeout: 15_000 }).toEqual(['notes.txt']);
  expect(await page.getByTestId('timeline').count()).toBe(0);
  await context.close();
});
