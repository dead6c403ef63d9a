// The room a person keeps using (issue 38), in Chromium on the built app: a dead model URL on pooled's own
// server reads "not found" (not "no GGUF magic"), and "Use a server" starts empty with examples that never
// point back at pooled. (The session-loss repro lives with the other agent-workspace tests in app-agent.)
// Screenshots: test-results/keeps-*.png.
import { afterAll, beforeAll, expect, test } from 'vitest';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { RunningServer } from '../server/app.ts';
import { tinyModelDir } from '../test/helpers/tiny-model.ts';
import { startRangeServer } from '../test/helpers/range-server.ts';
import { artifactDir, newDeviceContext, startBuiltApp, type BuiltApp } from './helpers/browser.ts';
import { axeViolations, consoleErrors } from './helpers/page-checks.ts';

let server: RunningServer;
let browser: Browser;
let app: BuiltApp | undefined;
const PHONE = { width: 390, height: 844 };

beforeAll(async () => {
  app = await startBuiltApp({ '/models/tiny': await tinyModelDir() });
  ({ server, browser } = app);
}, 180_000);   // the tiny model is written once per machine (seconds); Chromium starts in a few seconds
afterAll(async () => { await app?.close(); });

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(artifactDir(), name) });

/** The scripted demo builds its counter app (one request to its summary): the workspace the editor and history tests start from. */
async function buildDemoCounter(page: Page): Promise<void> {
  await page.goto(`${server.url}/?agent=replay&delay=1`);
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  await page.getByTestId('request-input').fill('Build a counter');
  await page.getByTestId('send').click();
  await expect.poll(async () => page.getByTestId('tl-summary').count(), { timeout: 60_000 }).toBe(1);
}

/** In the file pane's editor, by hand: the counter page's heading becomes "Edited by hand", then Save. */
async function editHeadingByHand(page: Page): Promise<void> {
  await page.locator('pooled-file-browser button.file[data-path="index.html"]').click();
  await page.getByTestId('file-edit').click();
  const editor = page.locator('pooled-code-editor');
  await expect.poll(() => editor.getByTestId('code-editor').getAttribute('data-ready'), { timeout: 30_000 }).toBe('true');
  const text = await editor.evaluate((el) => (el as HTMLElement & { value: string }).value);
  await page.getByTestId('file-editor').fill(text.replace('<h1>Counter</h1>', '<h1>Edited by hand</h1>'));
  await page.getByTestId('file-save').click();
}

/** The served page's heading: it sits in the preview's frame inside the pane's frame. */
const servedHeading = (page: Page) => () => page.frameLocator('iframe').first().frameLocator('iframe').locator('h1').textContent({ timeout: 5_000 }).catch(() => null);
/** Switches the files part to its History list (the file tree by default), leaving it there if it is. */
const openHistory = async (page: Page) => {
  const toggle = page.getByTestId('history-toggle');
  if ((await toggle.getAttribute('aria-pressed')) !== 'true') await toggle.click();
  await page.getByTestId('history').waitFor({ timeout: 10_000 });
};
/** Back to the file tree. */
const showFiles = async (page: Page) => {
  const toggle = page.getByTestId('history-toggle');
  if ((await toggle.getAttribute('aria-pressed')) === 'true') await toggle.click();
  await page.getByTestId('file-tree').waitFor({ timeout: 10_000 });
};

test('a model URL with nothing behind it on pooled\'s own server: "not found", and the server answered 404', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  const errors = consoleErrors(page, /\/my-model\/|404/);          // the missing files are the test's own doing
  const statuses: number[] = [];
  page.on('response', (r) => { if (r.url().includes('/my-model/')) statuses.push(r.status()); });
  await page.goto(`${server.url}/?model=${encodeURIComponent(`${server.url}/my-model`)}&engine=reference`);
  await page.getByTestId('host-room').click();
  await page.getByTestId('host-error').waitFor({ timeout: 60_000 });
  expect(await page.getByTestId('error-what').textContent()).toMatch(/not found/);
  expect(statuses.length).toBeGreaterThan(0);
  expect(statuses.every((s) => s === 404)).toBe(true);
  await shot(page, 'keeps-model-404-desktop.png');
  expect(errors).toEqual([]);
  await context.close();
}, 120_000);

test('a slow link: the host\'s own card counts its bytes as they arrive (with a rate), not 0% until the share is whole', async () => {
  // The app's tiny model's weights (~19 MiB) at ~4 MB/s: about 5 s of load, many screen refreshes (the tokenizer at full speed).
  const slow = await startRangeServer(await tinyModelDir(), { crossOrigin: true, bytesPerSecond: 4_000_000, slowPaths: (p) => p.endsWith('.safetensors') });
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  try {
    await page.goto(`${server.url}/?model=${encodeURIComponent(slow.url)}&engine=reference&name=Laptop`);
    await page.getByTestId('host-room').click();
    const card = page.locator('[data-testid=device]').first();
    const seen: { pct: number; text: string }[] = [];
    await expect.poll(async () => {
      const pct = Number(await card.getByTestId('device-progress').getAttribute('data-pct', { timeout: 500 }).catch(() => null));
      const text = (await card.getByTestId('device-progress-text').textContent({ timeout: 500 }).catch(() => null)) ?? '';
      seen.push({ pct, text });
      if (pct > 0 && pct < 100 && seen.filter((s) => s.pct > 0 && s.pct < 100).length === 1) await shot(page, 'keeps-host-own-load-desktop.png');
      return await card.getAttribute('data-status', { timeout: 500 }).catch(() => null);
    }, { timeout: 60_000, interval: 50 }).toBe('ready');
    const midway = seen.filter((s) => s.pct > 0 && s.pct < 100);
    expect(midway.length, JSON.stringify(seen.slice(-20))).toBeGreaterThan(0);
    expect(midway.some((s) => /\/s/.test(s.text)), `a rate shown while loading: ${JSON.stringify(midway)}`).toBe(true);
  } catch (e) {
    await shot(page, 'keeps-host-own-load-failed.png');
    throw e;
  } finally {
    await context.close();
    await slow.close();
  }
}, 120_000);

test('"Use a server" starts empty, with examples, none of them this page\'s own address', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  await page.goto(server.url);
  const url = page.getByTestId('server-url');
  await url.waitFor({ timeout: 60_000 });
  expect(await url.inputValue()).toBe('');
  const examples = (await page.getByTestId('server-url-examples').textContent())!.replace(/\s+/g, ' ');
  expect(examples).toMatch(/llama\.cpp/);
  expect(examples).toMatch(/Ollama/);
  expect(examples).not.toContain(`127.0.0.1:${new URL(server.url).port})`);
  expect(await url.getAttribute('placeholder')).not.toBe(server.url);
  await page.setViewportSize(PHONE);
  await page.getByTestId('server-url').scrollIntoViewIfNeeded();
  await shot(page, 'keeps-server-form-phone.png');
  expect(await axeViolations(page)).toEqual([]);
  await context.close();
}, 120_000);

test('a message longer than the context: the end note says the message alone is too long and what would fit', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  await page.goto(`${server.url}/?agent=replay&ctx=2048`);
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  await page.getByTestId('request-input').fill('Build this: ' + 'a very long request with many words '.repeat(400));
  await page.getByTestId('send').click();
  await expect.poll(async () => page.getByTestId('tl-summary').count(), { timeout: 60_000 }).toBe(1);
  expect(await page.getByTestId('tl-summary').getAttribute('data-reason')).toBe('context');
  const timeline = (await page.getByTestId('timeline').textContent())!.replace(/\s+/g, ' ');
  expect(timeline).toMatch(/your message alone is [\d,]+ tokens and [\d,]+ fit beside the system prompt and tools: shorten it by about [\d,]+ tokens/);
  expect(timeline).not.toMatch(/start a new task/);                  // which would not help: the message itself is too long
  await shot(page, 'keeps-context-full-desktop.png');
  await context.close();
}, 120_000);

test('the start page is under 0.3 MB on a fresh load; the code editor loads only when a file opens, and highlights, searches and undoes', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  const loaded: { url: string; bytes: number }[] = [];
  let pending = 0;
  page.on('requestfinished', (r) => {
    pending++;
    void r.sizes().then((s) => { loaded.push({ url: r.url(), bytes: s.responseBodySize + s.responseHeadersSize }); pending--; });
  });
  await page.goto(server.url);
  await page.getByTestId('host-room').waitFor({ timeout: 60_000 });
  await page.waitForLoadState('networkidle');
  await expect.poll(() => pending, { timeout: 10_000 }).toBe(0);
  const startBytes = loaded.reduce((a, b) => a + b.bytes, 0);
  expect(startBytes).toBeLessThan(300_000);
  expect(loaded.some((r) => /codemirror/.test(r.url))).toBe(false);

  await buildDemoCounter(page);
  expect(loaded.some((r) => /codemirror/.test(r.url))).toBe(false);     // the workspace alone does not load it
  await page.locator('pooled-file-browser button.file[data-path="app.js"]').click();
  const editor = page.locator('pooled-code-editor');
  await expect.poll(() => editor.getByTestId('code-editor').getAttribute('data-ready'), { timeout: 30_000 }).toBe('true');
  expect(loaded.some((r) => /codemirror/.test(r.url))).toBe(true);
  // Highlighting: the script's keywords are in their own spans; search opens on Ctrl-F; undo takes an edit back.
  expect(await editor.locator('.cm-content span').count()).toBeGreaterThan(5);
  await page.getByTestId('file-edit').click();
  await page.getByTestId('file-editor').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('// typed by hand');
  const value = () => editor.evaluate((el) => (el as HTMLElement & { value: string }).value);
  expect(await value()).toMatch(/\/\/ typed by hand$/);
  await page.keyboard.press('Control+z');
  await expect.poll(value).not.toMatch(/typed by hand/);
  await page.keyboard.press('Control+f');
  await editor.locator('.cm-search').waitFor({ timeout: 10_000 });
  await shot(page, 'keeps-code-editor.png');
  await context.close();
}, 180_000);

test('a hand edit saved in the file pane reloads the preview that serves it', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  await buildDemoCounter(page);
  const heading = servedHeading(page);
  await expect.poll(heading, { timeout: 30_000 }).toBe('Counter');
  await editHeadingByHand(page);
  await expect.poll(heading, { timeout: 30_000 }).toBe('Edited by hand');
  await shot(page, 'keeps-hand-edit-preview.png');
  await context.close();
}, 180_000);

/** The box of the card (section) that holds a test id, on the page. */
const cardBox = (page: Page, testid: string) => page.getByTestId(testid).evaluate((el) => {
  const r = el.closest('section')!.getBoundingClientRect();
  return { y: r.y + scrollY, bottom: r.bottom + scrollY };
});
const cardTop = async (page: Page, testid: string) => (await cardBox(page, testid)).y;

test('a guest phone: its status and its share first, one memory choice, no empty load bar while it stands by', async () => {
  const hostContext = await newDeviceContext(browser);
  const host = await hostContext.newPage();
  const guestContext = await newDeviceContext(browser, PHONE);
  const guest = await guestContext.newPage();
  try {
    await host.goto(`${server.url}/?engine=reference&name=Laptop&speed=1`);
    await host.getByTestId('host-room').click();
    const invite = host.getByTestId('invite-link');
    await invite.waitFor({ timeout: 120_000 });
    // A slow phone on a fresh browser: the deal leaves it standing by, and it is asked its memory offer once.
    await guest.goto(`${await invite.inputValue()}&engine=reference&name=Phone&speed=0.02`);
    await expect.poll(() => guest.getByTestId('guest-status').textContent({ timeout: 5_000 }).catch(() => null), { timeout: 120_000 }).toBe('ready');
    await guest.getByTestId('guest-offer').waitFor({ timeout: 30_000 });
    expect(await guest.getByTestId('guest-status-text').textContent()).toMatch(/^Standing by/);
    const [status, share, offer] = [await cardTop(guest, 'guest-status'), await cardTop(guest, 'guest-layers'), await cardTop(guest, 'guest-offer')];
    expect(status).toBeLessThan(share);
    expect(share).toBeLessThan(offer);                                     // the question comes after what the device does
    expect((await cardBox(guest, 'guest-layers')).bottom).toBeLessThanOrEqual(PHONE.height); // the share is above the fold
    expect(await guest.getByTestId('guest-memory-change').count()).toBe(0); // one memory choice at a time
    expect(await guest.getByTestId('guest-progress').count()).toBe(0);      // nothing to load: no bar saying 100%
    expect(await guest.getByTestId('guest-layers').textContent()).toBe('No layers in this deal: standing by.');
    await shot(guest, 'keeps-guest-standby-phone.png');
    expect(await axeViolations(guest)).toEqual([]);
    // Answered: the question goes and the one way to change the offer is back.
    await guest.getByTestId('guest-offer-save').click();
    await expect.poll(() => guest.getByTestId('guest-offer').count()).toBe(0);
    expect(await guest.getByTestId('guest-memory-change').count()).toBe(1);
  } finally {
    await guestContext.close();
    await hostContext.close();
  }
}, 300_000);   // two tiny-model loads on the CPU reference engine

test('a guest that holds layers closes its tab mid-request: the room re-deals and the answer runs again by itself', async () => {
  const hostContext = await newDeviceContext(browser);
  const host = await hostContext.newPage();
  const guestContext = await newDeviceContext(browser);
  const guest = await guestContext.newPage();
  try {
    await host.goto(`${server.url}/?engine=reference&name=Laptop&speed=1`);
    await host.getByTestId('host-room').click();
    const invite = host.getByTestId('invite-link');
    await invite.waitFor({ timeout: 120_000 });
    await guest.goto(`${await invite.inputValue()}&engine=reference&name=Phone&speed=1&mem=2`);
    // The tiny model fits on the host: split it so the phone holds layers.
    const split = host.getByTestId('split-anyway');
    await split.or(host.getByTestId('device-status').nth(1)).first().waitFor({ timeout: 60_000 });
    if (await split.count()) await split.click();
    await expect.poll(() => guest.getByTestId('guest-layers').textContent(), { timeout: 120_000 }).toMatch(/^layers \d+–\d+ of 4$/);
    await host.getByTestId('request-input').fill('Write a long story');
    await host.getByTestId('send').click();
    await expect.poll(async () => ((await host.getByTestId('tl-text').last().textContent().catch(() => '')) ?? '').length, { timeout: 120_000 }).toBeGreaterThan(10);
    await guestContext.close();                                        // the phone's tab is gone mid-answer
    const rerun = host.locator('[data-testid=tl-note][data-kind=rerun]');
    await rerun.waitFor({ timeout: 120_000 });
    expect((await rerun.textContent())!.replace(/\s+/g, ' ')).toMatch(/"Phone" left the room.*: the room dealt its layers again over 1 device; the answer runs again from the last pinned point$/);
    await expect.poll(() => host.getByTestId('tl-summary').count(), { timeout: 240_000 }).toBe(1);
    expect(await host.getByTestId('tl-summary').getAttribute('data-reason')).not.toBe('stopped');
    expect((await host.getByTestId('timeline').textContent())!).not.toMatch(/send the request again/);
    await shot(host, 'keeps-rerun-desktop.png');
  } finally {
    await guestContext.close().catch(() => undefined);
    await hostContext.close();
  }
}, 480_000);   // two tiny-model loads and a re-deal on the CPU reference engine, an answer of up to 256 tokens run twice


test('project history: restore to before a write puts the files back, reloads the preview, survives a reload and tells the agent', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  // Restored to before style.css and app.js existed, the served index.html still asks for them: the
  // served page's own "Not allowed to load" for each (as it would have then), not the app's.
  const errors = consoleErrors(page, /Not allowed to load local resource: blob:null\//);
  await buildDemoCounter(page);
  const heading = servedHeading(page);
  await expect.poll(heading, { timeout: 30_000 }).toBe('Counter');
  const tree = () => page.locator('pooled-file-browser button.file').evaluateAll((els) => els.map((e) => e.getAttribute('data-path')).sort());
  expect(await tree()).toEqual(['app.js', 'index.html', 'style.css']);

  // A hand edit is a point too (after the agent's three writes).
  await editHeadingByHand(page);
  await expect.poll(heading, { timeout: 30_000 }).toBe('Edited by hand');
  const points = page.getByTestId('history-point');
  const historyCount = async () => /History \((\d+)\)/.exec((await page.getByTestId('history-toggle').textContent()) ?? '')?.[1];
  await expect.poll(historyCount, { timeout: 10_000 }).toBe('4');

  // Each write_file card offers "Restore to before this"; the serve card changed no file and does not.
  const cards = page.getByTestId('call-card');
  expect(await cards.evaluateAll((els) => els.map((e) => `${e.getAttribute('data-name')}:${e.querySelector('[data-testid=call-restore]') ? 'restore' : '-'}`)))
    .toEqual(['write_file:restore', 'write_file:restore', 'write_file:restore', 'serve:-']);
  await cards.nth(1).getByTestId('call-restore').click();   // before style.css was written
  await expect.poll(tree, { timeout: 10_000 }).toEqual(['index.html']);
  await expect.poll(heading, { timeout: 30_000 }).toBe('Counter');   // the hand edit came after: undone, the page reloaded
  const status = (await page.getByTestId('restored-to').textContent())!.replace(/\s+/g, ' ');
  expect(status).toContain('Restored to before step 2 (write_file style.css): index.html changed back; app.js, style.css removed');
  await expect.poll(historyCount).toBe('5');                // the restore is a point itself
  await openHistory(page);
  expect(await points.evaluateAll((els) => els.map((e) => e.querySelector('.label')!.textContent))).toEqual([
    'restore to before write_file style.css', 'hand edit of index.html', 'write_file app.js', 'write_file style.css', 'write_file index.html']);
  await shot(page, 'keeps-history-desktop.png');
  expect(await axeViolations(page)).toEqual([]);

  // An old build's garbage in the history store is skipped on the next load, never trusted.
  await page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((ok, no) => { const r = indexedDB.open('pooled-history', 1); r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error); });
    const tx = db.transaction('points', 'readwrite');
    tx.objectStore('points').put('not a point', ['replay', 900]);
    tx.objectStore('points').put({ id: 901, at: 1, label: 'evil', changes: [{ path: '../../etc/passwd', before: null }] }, ['replay', 901]);
    await new Promise((ok) => { tx.oncomplete = ok; });
    db.close();
  });
  await page.reload();
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  await expect.poll(tree, { timeout: 10_000 }).toEqual(['index.html']);
  await expect.poll(historyCount, { timeout: 10_000 }).toBe('5');
  expect(await page.getByTestId('workspace-error').count()).toBe(0);
  expect(await page.getByTestId('call-restore').count()).toBe(3);    // the restored timeline's cards still find their points

  // Restoring to before the restore undoes it: the three files and the hand edit are back.
  await openHistory(page);
  await points.first().getByTestId('history-restore').click();       // newest first: the restore
  await showFiles(page);
  await expect.poll(tree, { timeout: 10_000 }).toEqual(['app.js', 'index.html', 'style.css']);
  await expect.poll(heading, { timeout: 30_000 }).toBe('Edited by hand');
  await cards.nth(1).getByTestId('call-restore').click();
  await expect.poll(tree, { timeout: 10_000 }).toEqual(['index.html']);

  // The next request carries the note, so the agent reads the files again.
  await page.getByTestId('request-input').fill('Go on');
  await page.getByTestId('send').click();
  await expect.poll(async () => page.getByTestId('tl-summary').count(), { timeout: 60_000 }).toBe(2);
  expect(await page.getByTestId('tl-request').last().textContent()).toBe('Go on\n\n' +
    '(I undid my restore to before write_file style.css: app.js, index.html, style.css changed back.)\n' +
    '(I restored the project to before step 2 (your write_file style.css): index.html changed back; app.js, style.css removed (they did not exist then).)');
  await page.setViewportSize(PHONE);
  await page.getByTestId('tab-files').click();
  await openHistory(page);
  await shot(page, 'keeps-history-phone.png');
  expect(await axeViolations(page)).toEqual([]);
  expect(errors).toEqual([]);
  await context.close();
}, 240_000);   // two runs of the replay demo at 1 ms a token, a reload and the preview's reloads: about a minute on a busy 2-core machine
