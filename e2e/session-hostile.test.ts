// Issue 12, item 19 in the app (real Chromium, IndexedDB): a saved agent session with `tokens: null`
// used to throw in the Workspace constructor, so the project could not be opened at all. Now the app
// opens, says what was wrong and where the bad session was kept, and the agent works on a new session.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startServer, type RunningServer } from '../server/app.ts';
import { tinyModelDir } from '../test/helpers/tiny-model.ts';
import { launchChromium, newDeviceContext } from './helpers/browser.ts';

let server: RunningServer;
let browser: Browser;
let root = '';

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'pooled-app-'));
  cpSync(path.resolve('dist'), path.join(root, 'dist'), { recursive: true }); // this file's own copy of the built app
  writeFileSync(path.join(root, 'reply.jsonl'), JSON.stringify({ text: 'All good here.' }) + '\n');
  server = await startServer({ port: 0, root, extraStatic: { '/models/tiny': await tinyModelDir(), '/e2e-scripts': root } });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** A record in the app's session store, as an old build or a crash might have left it. */
const PUT_BAD_SESSION = `new Promise((resolve, reject) => {
  const open = indexedDB.open('pooled-sessions', 1);
  open.onupgradeneeded = () => open.result.createObjectStore('sessions');
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const tx = open.result.transaction('sessions', 'readwrite');
    tx.objectStore('sessions').put({
      version: 1, model: 'replay of /e2e-scripts/reply.jsonl', requests: 1, savedAt: 1, servedPorts: [],
      segments: [{ kind: 'user', request: 0, text: 'hi', tokens: null, content: 'hi' }],
      timeline: [{ kind: 'request', request: 0, text: 'hi' }],
    }, 'replay');
    tx.oncomplete = () => { open.result.close(); resolve(true); };
    tx.onerror = () => reject(tx.error);
  };
})`;

const SESSION_KEYS = `new Promise((resolve, reject) => {
  const open = indexedDB.open('pooled-sessions', 1);
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const req = open.result.transaction('sessions').objectStore('sessions').getAllKeys();
    req.onsuccess = () => { open.result.close(); resolve(req.result); };
  };
})`;

test('item 19: the app opens a project whose saved session has tokens: null; the bad session is kept and the agent works', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  const url = `${server.url}/?agent=replay&script=/e2e-scripts/reply.jsonl`;
  await page.goto(url);
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  await page.evaluate(PUT_BAD_SESSION);
  await page.reload();
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  const alert = page.locator('[role="alert"]').first();
  await expect.poll(async () => (await alert.textContent()) ?? '', { timeout: 15_000 }).toMatch(/segments\[0\]\.tokens is null/);
  expect(await alert.textContent()).toMatch(/kept as "replay\.unreadable-[^"]+" and a new session started/);
  const keys = (await page.evaluate(SESSION_KEYS)) as string[];
  expect(keys.some((k) => /^replay\.unreadable-/.test(k))).toBe(true);
  await page.getByTestId('request-input').fill('Are you there?');
  await page.getByTestId('send').click();
  await page.getByTestId('tl-summary').first().waitFor({ timeout: 60_000 });
  expect(await page.getByTestId('tl-summary').first().getAttribute('data-reason')).toBe('done');
  await context.close();
});
