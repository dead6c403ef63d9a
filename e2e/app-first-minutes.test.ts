// The first ten minutes as a new user (issue 28), desktop (1280×800) and phone (390×844): the start
// screen keeps "Host a room" in view and prints real fit lines; a guest that joins a room whose model fits
// on the host reads that it stands by, the host reads why with the factor, and "Split anyway" deals it
// layers; the demo completes a second and third request (also after Stop) and its workspace uses tabs on
// a phone; an error explains itself with Retry; the tokenizer comes from the browser's cache on a second
// load (bytes counted) and the built assets are compressed and immutable. Every page: no console error and
// no axe violation of moderate impact or worse. Screenshots: test-results/first-*.png.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { RunningServer } from '../server/app.ts';
import { tinyModelDir } from '../test/helpers/tiny-model.ts';
import { artifactDir, newDeviceContext, startBuiltApp, type BuiltApp } from './helpers/browser.ts';
import { axeViolations, consoleErrors } from './helpers/page-checks.ts';

let server: RunningServer;
let browser: Browser;
let app: BuiltApp | undefined;
const PHONE = { width: 390, height: 844 };

beforeAll(async () => {
  app = await startBuiltApp({ '/models/tiny': await tinyModelDir() });
  ({ server, browser } = app);
  mkdirSync(artifactDir(), { recursive: true });
}, 180_000);   // the tiny model is written once per machine (seconds); Chromium starts in a few seconds

afterAll(async () => { await app?.close(); });

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(artifactDir(), name) });

async function hostDeal(page: Page): Promise<string[]> {
  return page.getByTestId('device').evaluateAll((cards) => cards.map((c) => {
    const bar = c.querySelector('pooled-layer-bar')!.shadowRoot!.querySelector('[data-testid=layer-bar]')!;
    return `${c.getAttribute('data-status')} ${bar.getAttribute('data-start')}-${bar.getAttribute('data-end')}`;
  }));
}

test('start screen: Host a room in view on a phone, fit lines at each model\'s real default context; no console error, no axe violation', async () => {
  for (const [size, name] of [[{ width: 1280, height: 800 }, 'desktop'], [PHONE, 'phone']] as const) {
    const context = await newDeviceContext(browser, size);
    const page = await context.newPage();
    const errors = consoleErrors(page);
    await page.goto(`${server.url}/`);
    await page.getByTestId('adapter').or(page.getByTestId('adapter-error')).waitFor({ timeout: 60_000 });
    const button = await page.getByTestId('host-room').boundingBox();
    expect(button!.y + button!.height, `${name}: Host a room is in the first screen`).toBeLessThanOrEqual(size.height);
    // The MLC 0.6B preset (a small model: 8,192 tokens by default) and the BF16 8B (16,384) count devices.
    expect(await page.getByTestId('need-mlc-ai/Qwen3-0.6B-q4f16_1-MLC').textContent()).toMatch(/^fits one device of .+, with 8,192 tokens of context \(its default\)$/);
    expect(await page.getByTestId('need-Qwen/Qwen3-8B').textContent()).toMatch(/with 16,384 tokens of context/);
    expect(await page.getByTestId('need-Qwen/Qwen3-30B-A3B-GGUF:Q4_K_M').textContent()).toMatch(/with 32,768 tokens of context/);
    expect(await page.getByText('with 0 tokens').count()).toBe(0);
    await shot(page, `first-start-${name}.png`);
    expect(await axeViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }
}, 180_000);   // two page loads and two axe runs on a busy 2-core box

test('a guest the deal leaves standing by: both sides say why; Split anyway deals it layers', async () => {
  const hostContext = await newDeviceContext(browser);
  const host = await hostContext.newPage();
  const hostErrors = consoleErrors(host);
  const guestContext = await newDeviceContext(browser, PHONE);
  const guest = await guestContext.newPage();
  const guestErrors = consoleErrors(guest);
  try {
    await host.goto(`${server.url}/?engine=reference&name=Laptop&speed=1`);
    await host.getByTestId('host-room').click();
    const invite = host.getByTestId('invite-link');
    await invite.waitFor({ timeout: 120_000 });
    await expect.poll(() => hostDeal(host), { timeout: 120_000 }).toEqual(['ready 0-4']);
    // A phone a fiftieth as fast: its share rounds to no layers.
    await guest.goto(`${await invite.inputValue()}&engine=reference&name=Phone&speed=0.02`);
    await expect.poll(() => guest.getByTestId('guest-status').textContent({ timeout: 5_000 }).catch(() => null), { timeout: 120_000 }).toBe('ready');
    await expect.poll(() => hostDeal(host), { timeout: 60_000 }).toEqual(['ready 0-4', 'ready 4-4']);
    expect(await guest.getByTestId('guest-status-text').textContent()).toMatch(/^Standing by: the host needs your memory only for bigger models\./);
    const note = host.getByTestId('standby');
    await note.waitFor({ timeout: 30_000 });
    expect((await note.textContent())!.replace(/\s+/g, ' ')).toMatch(/^ ?Phone: standing by — the model fits here and a split would run at ~[\d.]+× \(measured\)/);
    const factor = Number.parseFloat((await host.getByTestId('standby-factor').textContent())!.slice(1));
    expect(factor).toBeGreaterThan(0);
    expect(factor).toBeLessThan(1);    // a split onto a device 50× slower is slower
    await shot(host, 'first-host-standby-desktop.png');
    await shot(guest, 'first-guest-standby-phone.png');
    await host.setViewportSize(PHONE);
    await shot(host, 'first-host-standby-phone.png');
    expect(await axeViolations(host)).toEqual([]);
    expect(await axeViolations(guest)).toEqual([]);
    await host.setViewportSize({ width: 1280, height: 800 });

    // Split anyway: the layers by memory alone (both offer the same): 2 + 2, the guest loads and computes.
    await host.getByTestId('split-anyway').click();
    await expect.poll(() => hostDeal(host), { timeout: 120_000 }).toEqual(['ready 0-2', 'ready 2-4']);
    await expect.poll(() => guest.getByTestId('guest-layers').textContent(), { timeout: 60_000 }).toBe('layers 2–3 of 4');
    expect(await host.getByTestId('standby').count()).toBe(0);
    expect(await host.getByTestId('deal-mode').getAttribute('data-mode')).toBe('manual');
    await shot(host, 'first-host-split-desktop.png');
    await guest.bringToFront();
    await shot(guest, 'first-guest-split-phone.png');
    await host.setViewportSize(PHONE);
    await shot(host, 'first-host-split-phone.png');
    expect(await axeViolations(host)).toEqual([]);
    expect(hostErrors).toEqual([]);
    expect(guestErrors).toEqual([]);
  } finally {
    await guestContext.close();
    await hostContext.close();
  }
}, 420_000);   // two tiny-model loads on the CPU engine, a re-deal and a guest load, axe four times

test('the demo: a second and third request complete, also after Stop; on a phone its parts are tabs that do not overlap', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  const errors = consoleErrors(page);
  await page.goto(`${server.url}/?agent=replay&delay=1`);
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  const send = async (text: string) => {
    await page.getByTestId('request-input').fill(text);
    await page.getByTestId('send').click();
  };
  const summaries = page.getByTestId('tl-summary');
  await send('Build a counter');
  await expect.poll(() => summaries.count(), { timeout: 60_000 }).toBe(1);
  await shot(page, 'first-workspace-desktop.png');
  await send('Now make it blue');
  await expect.poll(() => summaries.count(), { timeout: 60_000 }).toBe(2);
  // Stop the third while it streams, then a fourth still replays the whole script.
  await send('And a reset button');
  await expect.poll(() => page.getByTestId('tl-text').count(), { timeout: 30_000 }).toBeGreaterThan(2);
  await page.getByTestId('stop').click();
  await expect.poll(() => summaries.count(), { timeout: 30_000 }).toBe(3);
  // Regenerate sends the stopped request again: the whole script, done.
  await page.getByTestId('regenerate').click();
  await expect.poll(() => summaries.count(), { timeout: 60_000 }).toBe(4);
  expect(await page.getByTestId('tl-request').last().textContent()).toBe('And a reset button');
  const reasons = await summaries.evaluateAll((els) => els.map((e) => e.getAttribute('data-reason')));
  expect(reasons).toEqual(['done', 'done', 'stopped', 'done']);
  expect(await summaries.nth(1).textContent()).toMatch(/^\d+ steps · \d+ tool calls · \d+ tok · scripted model · [\d.]+ s$/);
  expect(await axeViolations(page)).toEqual([]);

  // Take the result away: the project as a zip that unzip tests clean, holding the app's files.
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 30_000 }), page.getByTestId('download-zip').click()]);
  const zipPath = path.join(artifactDir(), 'first-project.zip');
  await download.saveAs(zipPath);
  expect(execFileSync('unzip', ['-t', zipPath], { encoding: 'utf8' })).toMatch(/No errors detected/);
  expect(execFileSync('unzip', ['-Z1', zipPath], { encoding: 'utf8' }).trim().split('\n').sort()).toEqual(['app.js', 'index.html', 'style.css']);
  // A hand edit in the viewer: saved to the project, and the next request tells the agent.
  await page.locator('pooled-file-browser button.file[data-path="style.css"]').click();
  await page.getByTestId('file-edit').click();
  await page.getByTestId('file-editor').fill('body { background: navy; }\n');
  await page.getByTestId('file-save').click();
  await expect.poll(async () => (await page.getByTestId('file-editor').textContent().catch(() => null)) ?? '').toContain('background: navy');
  await send('Keep my colour');
  await expect.poll(() => summaries.count(), { timeout: 60_000 }).toBe(5);
  expect(await page.getByTestId('tl-request').last().textContent()).toBe('Keep my colour\n\n(I edited style.css by hand since your last answer.)');

  // Phone: tabs; the chat shows the request box and notice, the files tab hides them (nothing overlaps).
  await page.setViewportSize(PHONE);
  await page.getByTestId('tab-chat').waitFor();
  expect(await page.getByTestId('request-input').isVisible()).toBe(true);
  expect(await page.getByTestId('workspace-notice').isVisible()).toBe(true);
  expect(await page.getByTestId('file-viewer').isVisible()).toBe(false);
  const [notice, box] = await Promise.all([page.getByTestId('workspace-notice').boundingBox(), page.getByTestId('request-input').boundingBox()]);
  expect(notice!.y + notice!.height).toBeLessThanOrEqual(box!.y);
  expect(box!.y + box!.height).toBeLessThanOrEqual(PHONE.height);
  await shot(page, 'first-workspace-phone-chat.png');
  await page.getByTestId('tab-files').click();
  expect(await page.getByTestId('request-input').isVisible()).toBe(false);
  expect(await page.getByTestId('file-viewer').isVisible()).toBe(true);
  await shot(page, 'first-workspace-phone-files.png');
  await page.getByTestId('tab-preview').click();
  await shot(page, 'first-workspace-phone-preview.png');
  expect(await axeViolations(page)).toEqual([]);
  expect(errors).toEqual([]);
  await context.close();
}, 300_000);   // four scripted requests at 1 ms a token, the preview served four times, axe twice

test('an error in plain words with Retry: a server that cannot be reached names CORS; the detail is folded', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  // The unreachable server's refused connection is the test's own doing.
  const errors = consoleErrors(page, /127\.0\.0\.1:9\b|ERR_CONNECTION_REFUSED/);
  await page.goto(`${server.url}/?server=${encodeURIComponent('http://127.0.0.1:9')}&server-model=qwen&tokenizer=/models/tiny`);
  const box = page.getByTestId('error-box');
  await box.waitFor({ timeout: 60_000 });
  expect(await page.getByTestId('error-what').textContent()).toBe('The model server did not answer.');
  expect(await page.getByTestId('error-cause').textContent()).toMatch(/CORS/);
  expect(await page.getByTestId('error-detail').isVisible()).toBe(false);   // folded
  expect(await page.getByTestId('retry').isVisible()).toBe(true);
  await shot(page, 'first-error-desktop.png');
  await page.setViewportSize(PHONE);
  await shot(page, 'first-error-phone.png');
  expect(await axeViolations(page)).toEqual([]);
  // Retry tries again (and fails the same way, with the same explanation).
  await page.getByTestId('retry').click();
  await box.waitFor({ timeout: 60_000 });
  expect(await page.getByTestId('error-what').textContent()).toBe('The model server did not answer.');
  expect(errors).toEqual([]);
  await context.close();
}, 180_000);

test('weight and caching: hashed assets compressed and immutable; the tokenizer from the browser cache on a second load (0 bytes)', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  const tokenizerBytes: number[] = [];
  let counting = 0;
  const assets: { url: string; encoding?: string; cache?: string }[] = [];
  page.on('response', (r) => {
    if (/\/assets\/.+\.js$/.test(r.url())) assets.push({ url: r.url(), encoding: r.headers()['content-encoding'], cache: r.headers()['cache-control'] });
  });
  page.on('requestfinished', (r) => {
    if (!r.url().endsWith('/models/tiny/tokenizer.json')) return;
    counting++;
    void r.sizes().then((s) => { tokenizerBytes.push(s.responseBodySize); counting--; });
  });
  await page.goto(`${server.url}/?agent=replay&delay=1`);
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  await expect.poll(() => counting, { timeout: 10_000 }).toBe(0);
  const first = tokenizerBytes.reduce((a, b) => a + b, 0);
  expect(first).toBeGreaterThan(1_000_000);      // the tiny model's tokenizer.json (Qwen3's, 11 MB; compressed on the wire)
  expect(assets.length).toBeGreaterThan(0);
  for (const a of assets) {
    expect(a.encoding, a.url).toMatch(/^(br|gzip)$/);
    expect(a.cache, a.url).toBe('public, max-age=31536000, immutable');
  }
  tokenizerBytes.length = 0;
  await page.reload();
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  await expect.poll(() => counting, { timeout: 10_000 }).toBe(0);
  expect(tokenizerBytes.reduce((a, b) => a + b, 0)).toBe(0);
  await context.close();
}, 180_000);
