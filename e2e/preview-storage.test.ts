// localStorage and sessionStorage in the preview, in real Chromium: the page runs in an opaque origin
// where the browser's own Storage throws, so the frame runtime gives it one (frame-storage.js) and the
// host keeps each port's contents across reloads (storage.ts). The eval's todo-list and dark-mode apps
// work as on a real site; the quota holds; IndexedDB says why it is missing; the host's own storage
// stays out of reach (e2e/preview.test.ts, test 5, checks the rest of the isolation).
import { beforeAll, expect, test } from 'vitest';
import type { BrowserContext, Frame, Page } from 'playwright-core';
import { newDeviceContext, useServerAndBrowser } from './helpers/browser.ts';
import { callTool, openPreviewHarness, textOf, writeProject } from './helpers/preview-page.ts';
import { todoList } from '../eval/tasks/todo-list.ts';
import { darkMode } from '../eval/tasks/dark-mode.ts';

const env = useServerAndBrowser();
let context: BrowserContext;

beforeAll(async () => {
  context = await newDeviceContext(env.browser, { width: 900, height: 700 });
});

/** The preview's sandboxed frame now (a reload replaces it: ask again after one). */
async function currentFrame(page: Page, previous?: Frame): Promise<Frame> {
  let found: Frame | undefined;
  await expect.poll(() => {
    found = page.frames().find((f) => f.url() === 'about:srcdoc' && f !== previous && !f.isDetached());
    return found !== undefined;
  }, { timeout: 10_000 }).toBe(true);
  await found!.waitForLoadState('load');
  return found!;
}

const errorsIn = (logs: string) => logs.split('\n').filter((l) => /^\[error\]/.test(l));

test('the eval\'s todo list: three items added, then the pane\'s Reload, the page\'s own reload and serve: three remain, no errors', async () => {
  const page = await openPreviewHarness(context, env.server.url);
  await writeProject(page, todoList.solution);
  expect(textOf(await callTool(page, 'serve'))).toMatch(/no errors\.$/);
  let frame = await currentFrame(page);
  for (const item of ['buy milk', 'walk the dog', 'write the report']) {
    await frame.fill('#new-todo', item);
    await frame.click('#add');
  }
  const items = (f: Frame) => f.locator('#todos li').allTextContents();
  expect(await items(frame)).toEqual(['buy milk', 'walk the dog', 'write the report']);
  await expect.poll(() => page.evaluate(`window.pv.host.storage.area(5173, 'local').get('todos')`)).toBe('["buy milk","walk the dog","write the report"]');

  // The pane's Reload button (a serve of the same page).
  await page.getByRole('button', { name: 'Reload the page' }).click();
  frame = await currentFrame(page, frame);
  await expect.poll(() => items(frame)).toEqual(['buy milk', 'walk the dog', 'write the report']);

  // The page reloads itself right after a write: the write is kept, and the page comes back with it.
  await frame.fill('#new-todo', 'call mum');
  await frame.click('#add');
  await frame.evaluate('location.reload()').catch(() => undefined);
  frame = await currentFrame(page, frame);
  await expect.poll(() => items(frame)).toEqual(['buy milk', 'walk the dog', 'write the report', 'call mum']);

  // The agent serves again (after an edit): the same port, the same storage.
  expect(textOf(await callTool(page, 'serve'))).toMatch(/no errors\.$/);
  frame = await currentFrame(page, frame);
  expect(await items(frame)).toHaveLength(4);
  const logs = textOf(await callTool(page, 'preview_logs'));
  expect(errorsIn(logs)).toEqual([]);
  expect(logs).not.toContain('SecurityError');
  expect(logs).toContain('the page reloaded itself');
  await page.close();
});

test('the eval\'s dark-mode toggle is remembered; sessionStorage works too; run_js sees the page\'s storage', async () => {
  const page = await openPreviewHarness(context, env.server.url);
  await writeProject(page, darkMode.solution);
  await callTool(page, 'serve');
  let frame = await currentFrame(page);
  const dark = (f: Frame) => f.evaluate('document.body.classList.contains("dark")');
  expect(await dark(frame)).toBe(false);
  await frame.click('#theme-toggle');
  expect(await dark(frame)).toBe(true);
  expect(await callTool(page, 'run_js', { code: 'sessionStorage.visits = Number(sessionStorage.visits || 0) + 1; console.log(localStorage.getItem("theme"), localStorage.length, sessionStorage.visits)' }))
    .toEqual({ ok: true, text: 'dark 1 1' });
  await callTool(page, 'serve');
  frame = await currentFrame(page, frame);
  expect(await dark(frame)).toBe(true);
  await frame.click('#theme-toggle');
  await frame.evaluate('location.reload()').catch(() => undefined);
  frame = await currentFrame(page, frame);
  expect(await dark(frame)).toBe(false);
  expect(await callTool(page, 'run_js', { code: 'console.log(sessionStorage.getItem("visits"), Object.keys(localStorage).join(","), localStorage instanceof Storage)' }))
    .toEqual({ ok: true, text: '1 theme true' });
  expect(errorsIn(textOf(await callTool(page, 'preview_logs')))).toEqual([]);
  await page.close();
});

test('the quota holds (QuotaExceededError, the host keeps at most 5 Mi characters); IndexedDB says why it is missing; the host\'s storage is untouched', async () => {
  const page = await openPreviewHarness(context, env.server.url);
  await page.evaluate(`localStorage.setItem('host-secret', 'the app\\'s own')`);
  await writeProject(page, { 'index.html': '<p>storage</p>' });
  await callTool(page, 'serve');
  const fill = `const chunk = 'x'.repeat(1 << 20);
let stored = 0;
try { for (let i = 0; i < 10; i++) { localStorage.setItem('k' + i, chunk); stored++; } } catch (e) { console.log(e.name, e.code, stored); }
console.log(localStorage.getItem('host-secret'), localStorage.length);`;
  expect(await callTool(page, 'run_js', { code: fill })).toEqual({ ok: true, text: 'QuotaExceededError 22 4\nnull 4' });
  await expect.poll(() => page.evaluate(`window.pv.host.storage.area(5173, 'local').length`)).toBe(4);
  expect(await page.evaluate(`window.pv.host.storage.area(5173, 'local').size`)).toBeLessThanOrEqual(5 * 1024 * 1024);
  const idb = await callTool(page, 'run_js', { code: `try { indexedDB.open('todos'); } catch (e) { console.log(e.name + ': ' + e.message); }` });
  expect(idb.text).toMatch(/^SecurityError: IndexedDB is not available in the preview: .*localStorage/);
  // A page writing in a loop as fast as it can: the host ends with its last value, from a few messages.
  const loop = `let i = 0; const end = performance.now() + 500;
while (performance.now() < end) { localStorage.setItem('loop', String(i++)); await null; }
console.log('wrote', i);`;
  const wrote = Number(/wrote (\d+)/.exec(textOf(await callTool(page, 'run_js', { code: loop })))![1]);
  expect(wrote).toBeGreaterThan(100);
  await expect.poll(() => page.evaluate(`window.pv.host.storage.area(5173, 'local').get('loop')`)).toBe(String(wrote - 1));
  expect(await page.evaluate(`localStorage.getItem('host-secret')`)).toBe('the app\'s own');
  expect(await page.evaluate(`localStorage.length`)).toBe(1);
  await page.close();
});

test('a page that reloads itself at every load is served afresh a few times, then stopped; the host stays responsive', async () => {
  const page = await openPreviewHarness(context, env.server.url);
  await writeProject(page, {
    'index.html': '<p>again</p><script>console.log("run"); location.reload();</script>',
    'other/index.html': '<p id="ok">fine</p>',
  });
  await callTool(page, 'serve');
  const reloads = async () => (textOf(await callTool(page, 'preview_logs')).match(/the page reloaded itself/g) ?? []).length;
  await expect.poll(async () => textOf(await callTool(page, 'preview_logs')), { timeout: 15_000 }).toMatch(/stopped :5173\/ — the page reloads itself over and over/);
  const served = await reloads();
  expect(served).toBeGreaterThanOrEqual(5);   // the burst of fresh serves
  expect(served).toBeLessThanOrEqual(8);
  await new Promise((r) => setTimeout(r, 1_500));
  expect(await reloads()).toBe(served);       // and no more
  expect(textOf(await callTool(page, 'serve', { path: 'other' }))).toMatch(/^Served other\/ on :517\d\/ — loaded in \d+ ms, no errors\.$/);
  await page.close();
});
