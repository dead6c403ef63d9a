// Every page a user can reach beyond the first minutes' (app-first-minutes.test.ts covers start, host with a
// standing-by guest, the demo workspace and the server error): the agent on a server (a fake
// OpenAI-compatible server on 127.0.0.1) with its preview, the preview opened in a new tab and kept there
// across a rebuild, a URL the app cannot use, a model URL that 404s, a room that does not exist, and a
// guest while it joins. Each: no console error (every frame, the sandboxed preview included) and no axe
// violation of moderate impact or worse. Screenshots: test-results/every-*.png.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Frame, Page } from 'playwright-core';
import type { RunningServer } from '../server/app.ts';
import { tinyModelDir } from '../test/helpers/tiny-model.ts';
import { startOpenAIServer, type ScriptedServer } from '../test/helpers/openai-server.ts';
import { artifactDir, newDeviceContext, startBuiltApp, type BuiltApp } from './helpers/browser.ts';
import { axeViolations, consoleErrors } from './helpers/page-checks.ts';

let server: RunningServer;
let browser: Browser;
let app: BuiltApp | undefined;
let model: ScriptedServer | undefined;
const PHONE = { width: 390, height: 844 };
const call = (name: string, args: Record<string, unknown>) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
const page1 = (title: string) => `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title><link rel="stylesheet" href="style.css"></head>\n<body><main><h1 id="title">${title}</h1></main><script type="module" src="app.js"></script></body></html>\n`;

beforeAll(async () => {
  app = await startBuiltApp({ '/models/tiny': await tinyModelDir() });
  ({ server, browser } = app);
  mkdirSync(artifactDir(), { recursive: true });
  // Two requests: each writes the page and serves it (the second one is the rebuild the tab must follow).
  model = await startOpenAIServer({
    kind: 'llama.cpp', nCtx: 8192,
    replies: [
      { text: `Writing the page.\n${call('write_file', { path: 'index.html', content: page1('Hello from v1') })}`, delayMs: 1 },
      { text: `Style and script.\n${call('write_file', { path: 'style.css', content: 'h1 { color: #246; }\n' })}\n${call('write_file', { path: 'app.js', content: "import { label } from './label.js';\ndocument.getElementById('title').dataset.label = label;\nconsole.log('app ready');\n" })}\n${call('write_file', { path: 'label.js', content: "export const label = 'ok';\n" })}`, delayMs: 1 },
      { text: `Serving it.\n${call('serve', {})}`, delayMs: 1 },
      { text: 'Served on :5173.', delayMs: 1 },
      { text: `Version two.\n${call('write_file', { path: 'index.html', content: page1('Hello from v2') })}\n${call('serve', {})}`, delayMs: 1 },
      { text: 'Rebuilt.', delayMs: 1 },
    ],
  });
}, 180_000);   // the tiny model is written once per machine (seconds); Chromium starts in a few seconds

afterAll(async () => {
  await model?.close();
  await app?.close();
});

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(artifactDir(), name) });

/** The sandboxed frame (about:srcdoc) of a page: the served app. */
async function servedFrame(page: Page): Promise<Frame> {
  let found: Frame | undefined;
  await expect.poll(() => (found = page.frames().find((f) => f.url() === 'about:srcdoc')) !== undefined, { timeout: 30_000 }).toBe(true);
  return found!;
}

const titleIn = async (page: Page) => (await servedFrame(page)).locator('#title').textContent({ timeout: 5_000 }).catch(() => null);

test('the agent on a server: workspace and preview clean; the preview opens in a new tab that shows each new build', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  const errors = consoleErrors(page);
  await page.goto(`${server.url}/?server=${encodeURIComponent(model!.url)}&server-model=qwen3-test&tokenizer=/models/tiny`);
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  expect(await axeViolations(page)).toEqual([]);
  await page.getByTestId('request-input').fill('Make a hello page');
  await page.getByTestId('send').click();
  await page.getByTestId('tl-summary').first().waitFor({ timeout: 90_000 });
  expect(await page.getByTestId('tl-summary').first().getAttribute('data-reason')).toBe('done');
  expect(await titleIn(page)).toBe('Hello from v1');
  expect(await (await servedFrame(page)).locator('#title').getAttribute('data-label')).toBe('ok');   // its module import ran
  await shot(page, 'every-server-workspace-desktop.png');
  expect(await axeViolations(page)).toEqual([]);

  // Open in a new tab: the same app, served by this tab's preview.
  const [tab] = await Promise.all([context.waitForEvent('page', { timeout: 30_000 }), page.getByTestId('preview-open-tab').click()]);
  const tabErrors = consoleErrors(tab);
  await tab.waitForLoadState();
  await expect.poll(() => titleIn(tab), { timeout: 30_000 }).toBe('Hello from v1');
  expect(await (await servedFrame(tab)).locator('#title').getAttribute('data-label')).toBe('ok');
  expect(await tab.title()).toBe(':5173/ — pooled preview');
  await shot(tab, 'every-preview-tab-desktop.png');
  expect(await axeViolations(tab)).toEqual([]);

  // The next request rebuilds: the tab shows the new build without a reload…
  await page.bringToFront();
  await page.getByTestId('request-input').fill('Make it version two');
  await page.getByTestId('send').click();
  await expect.poll(() => page.getByTestId('tl-summary').count(), { timeout: 90_000 }).toBe(2);
  await expect.poll(() => titleIn(page), { timeout: 30_000 }).toBe('Hello from v2');
  await expect.poll(() => titleIn(tab), { timeout: 30_000 }).toBe('Hello from v2');
  // …and after the user reloads the tab.
  await tab.reload();
  await expect.poll(() => titleIn(tab), { timeout: 30_000 }).toBe('Hello from v2');
  await tab.setViewportSize(PHONE);
  await shot(tab, 'every-preview-tab-phone.png');

  await page.setViewportSize(PHONE);
  await page.getByTestId('tab-preview').click();
  await page.getByTestId('preview-open-tab').waitFor();
  await shot(page, 'every-server-preview-phone.png');
  expect(await axeViolations(page)).toEqual([]);
  expect(errors).toEqual([]);
  expect(tabErrors).toEqual([]);
  await context.close();
}, 300_000);   // two requests of a few scripted steps, the preview served twice, axe four times

test('a URL the app cannot use, a model URL that 404s, a room that does not exist: plain errors, clean pages', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  // The 404s of the missing model are the test's own doing.
  const errors = consoleErrors(page, /\/models\/nope|404/);
  await page.goto(`${server.url}/?room=not-a-room`);
  await page.getByTestId('url-error').waitFor({ timeout: 60_000 });
  await shot(page, 'every-bad-url-desktop.png');
  expect(await axeViolations(page)).toEqual([]);

  await page.goto(`${server.url}/?model=${encodeURIComponent(`${server.url}/models/nope`)}&engine=reference`);
  await page.getByTestId('host-room').click();
  await page.getByTestId('host-error').waitFor({ timeout: 60_000 });
  expect(await page.getByTestId('error-what').textContent()).toMatch(/model/i);
  expect(await page.getByTestId('retry').isVisible()).toBe(true);
  await shot(page, 'every-model-404-desktop.png');
  expect(await axeViolations(page)).toEqual([]);
  await page.setViewportSize(PHONE);
  await shot(page, 'every-model-404-phone.png');
  await page.setViewportSize({ width: 1280, height: 800 });

  await page.goto(`${server.url}/?room=${'ab'.repeat(16)}&engine=reference&name=Phone`);
  await expect.poll(() => page.getByTestId('guest-status').textContent({ timeout: 5_000 }).catch(() => null), { timeout: 60_000 }).toBe('gone');
  expect(await page.getByTestId('error-what').textContent()).toBe('This room is closed.');
  expect(await page.getByTestId('retry').isVisible()).toBe(true);
  await shot(page, 'every-no-room-desktop.png');
  expect(await axeViolations(page)).toEqual([]);
  expect(errors).toEqual([]);
  await context.close();
}, 180_000);

test('a guest while it joins (before the host deals): clean, phone-sized', async () => {
  const hostContext = await newDeviceContext(browser);
  const host = await hostContext.newPage();
  const hostErrors = consoleErrors(host);
  const guestContext = await newDeviceContext(browser, PHONE);
  const guest = await guestContext.newPage();
  const guestErrors = consoleErrors(guest);
  try {
    await host.goto(`${server.url}/?engine=reference&name=Laptop&speed=1`);
    await host.getByTestId('host-room').click();
    expect(await axeViolations(host)).toEqual([]);    // the "Opening a room" screen
    const invite = host.getByTestId('invite-link');
    await invite.waitFor({ timeout: 120_000 });
    await guest.goto(`${await invite.inputValue()}&engine=reference&name=Phone&speed=1`);
    await guest.getByTestId('guest-status').waitFor({ timeout: 30_000 });
    // Asked once on this device: the offer, the suggestion filled in (it joined with it meanwhile).
    const suggested = await guest.getByTestId('guest-offer-memory').inputValue();
    expect(suggested).toMatch(/^\d+(\.\d+)?$/);
    await shot(guest, 'every-guest-joining-phone.png');
    await guest.setViewportSize({ width: 1280, height: 800 });
    await shot(guest, 'every-guest-joining-desktop.png');
    await guest.setViewportSize(PHONE);
    expect(await axeViolations(guest)).toEqual([]);
    await expect.poll(() => guest.getByTestId('guest-status').textContent({ timeout: 5_000 }).catch(() => null), { timeout: 180_000 }).toBe('ready');
    await shot(guest, 'every-guest-ready-phone.png');
    expect(await axeViolations(guest)).toEqual([]);
    expect(await axeViolations(host)).toEqual([]);

    // Split the tiny model over both (it fits on the host, so the deal keeps the guest standing by).
    const split = host.getByTestId('split-anyway');
    await split.or(host.getByTestId('device-status').nth(1)).first().waitFor({ timeout: 30_000 });
    if (await split.count()) await split.click();
    await expect.poll(() => guest.getByTestId('guest-layers').textContent(), { timeout: 120_000 }).toMatch(/^layers \d+–\d+ of 4$/);
    await expect.poll(() => host.getByTestId('device-status').allTextContents(), { timeout: 120_000 }).toEqual(['ready', 'ready']);
    // Dealt: the guest reads what the room needs from it, of what it offers.
    await expect.poll(async () => (await guest.getByTestId('guest-needs').textContent())?.replace(/\s+/g, ' ').trim(), { timeout: 30_000 })
      .toMatch(/^The host needs [\d.]+ [KMG]iB of your memory for layers? [\d–]+ \(of the [\d.]+ GiB offered\): [\d.]+ [KMG]iB of weights and [\d.]+ [KMG]iB of cache for 8,192 tokens of context\.$/);
    await shot(guest, 'every-guest-needs-phone.png');
    await guest.getByTestId('guest-offer-save').click();   // the same figure: kept for this device, no rejoin
    await expect.poll(() => guest.getByTestId('guest-offer').count()).toBe(0);
    expect(await guest.evaluate(() => localStorage.getItem('pooled.memory-offer'))).toBe(suggested);
    // A long request, so the prompt takes a while to read: each device's card shows its own count.
    await host.getByTestId('request-input').fill(`Summarise this: ${'the quick brown fox jumps over the lazy dog. '.repeat(450)}`);
    await host.getByTestId('send').click();
    const bars = host.getByTestId('device-prefill');
    await expect.poll(() => bars.count(), { timeout: 60_000, interval: 50 }).toBe(2);
    await shot(host, 'every-host-prefill-desktop.png');
    const counts = await bars.evaluateAll((els) => els.map((e) => [Number(e.getAttribute('data-done')), Number(e.getAttribute('data-total'))]));
    for (const [done, total] of counts) {
      expect(total).toBeGreaterThan(3000);
      expect(done).toBeLessThanOrEqual(total!);
    }
    expect(counts[0]![0]).toBeGreaterThanOrEqual(counts[1]![0]!);   // the host's layers read first, then the guest's
    expect(await axeViolations(host)).toEqual([]);
    await host.setViewportSize(PHONE);
    await shot(host, 'every-host-prefill-phone.png');
    await host.setViewportSize({ width: 1280, height: 800 });
    await expect.poll(() => bars.count(), { timeout: 180_000 }).toBe(0);   // read: the bars go
    expect(hostErrors).toEqual([]);
    expect(guestErrors).toEqual([]);
  } finally {
    await guestContext.close();
    await hostContext.close();
  }
}, 540_000);   // two tiny-model loads and a re-deal on the CPU engine, a 4,000-token prompt read by both, axe five times
