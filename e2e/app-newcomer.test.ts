// What a newcomer notices in the first minutes: loading the built-in model or a model folder from disk
// logs no console error; the host card's speed is "—" until a token is measured, then the room's
// tok/s; a request on the random-weights tiny model ends at its small cap with a note that says why;
// the demo workspace says it is scripted where the request is typed; a call the parser had to mend says
// so on its card. Screenshots go to test-results/newcomer-*.png.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { RunningServer } from '../server/app.ts';
import { TINY_ANSWER_CAP } from '../src/app/models.ts';
import { tinyModelDir } from '../test/helpers/tiny-model.ts';
import { artifactDir, newDeviceContext, startBuiltApp, type BuiltApp } from './helpers/browser.ts';

let server: RunningServer;
let browser: Browser;
let tinyDir = '';
let app: BuiltApp | undefined;
const ENGINE = process.env.POOLED_E2E_ENGINE ?? 'webgpu';

beforeAll(async () => {
  const scripts = mkdtempSync(path.join(tmpdir(), 'pooled-e2e-scripts-'));
  const mended = "Writing it.\n<tool_call>\n{'name': 'functions.write_file', 'arguments': {'path': 'index.html', 'content': '<h1>Hi</h1>\n<p>mended</p>\n'}}\n</tool_call>";
  writeFileSync(path.join(scripts, 'mended.jsonl'), [mended, 'Done: index.html is written.'].map((text) => JSON.stringify({ text })).join('\n') + '\n');
  tinyDir = await tinyModelDir();
  app = await startBuiltApp({ '/models/tiny': tinyDir, '/e2e-scripts': scripts });
  ({ server, browser } = app);
}, 180_000);

afterAll(async () => { await app?.close(); });

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(artifactDir(), name) });

/** Every console error and uncaught page error, as the newcomer check counts them. */
function consoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()} (${m.location().url})`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return errors;
}

async function hostStatus(page: Page): Promise<string[]> {
  return page.getByTestId('device').evaluateAll((cards) => cards.map((c) => {
    const bar = c.querySelector('pooled-layer-bar')!.shadowRoot!.querySelector('[data-testid=layer-bar]')!;
    return `${c.getAttribute('data-status')} ${bar.getAttribute('data-start')}-${bar.getAttribute('data-end')}/${bar.getAttribute('data-total')}`;
  }));
}

async function hostUntilReady(page: Page): Promise<void> {
  await page.getByTestId('host-room').click();
  await expect.poll(() => hostStatus(page), { timeout: 180_000 }).toEqual(['ready 0-4/4']);
}

test('the built-in model loads with no console error, and the speed reads "—" before any token', async () => {
  mkdirSync(artifactDir(), { recursive: true });
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  const errors = consoleErrors(page);
  await page.goto(`${server.url}/?engine=${ENGINE}&name=Laptop&speed=1`);
  await page.getByTestId('adapter').waitFor({ timeout: 60_000 });
  expect(await page.getByTestId('model-tiny').isChecked()).toBe(true);
  await hostUntilReady(page);
  expect(await page.getByTestId('device-toks').textContent()).toBe('—');
  expect(await page.getByTestId('workspace-notice').textContent()).toContain(
    `Tiny test model: random weights, for trying the room: answers are gibberish and stop at ${TINY_ANSWER_CAP} tokens.`);
  expect(errors).toEqual([]);
  await shot(page, 'newcomer-host-ready.png');
  await context.close();
}, 240_000);

// On the CPU engine: the cap is the same on every engine, and this machine's software WebGPU adapter
// runs the tiny model's 151,936-row head at about 1.5 tok/s, so 256 tokens would take minutes here.
test('a request on the tiny model: speed "—" until measured, then the room\'s tok/s; it ends at the small cap with the note', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  const errors = consoleErrors(page);
  await page.goto(`${server.url}/?engine=reference&name=Laptop&speed=1`);
  await page.getByTestId('adapter').waitFor({ timeout: 60_000 });
  await hostUntilReady(page);
  const speed = page.getByTestId('device-toks');
  expect(await speed.textContent()).toBe('—');

  await page.getByTestId('request-input').fill('Build a todo list with local storage');
  await page.getByTestId('send').click();
  // Watch the host card while the answer streams: "—" until measured, then a real speed, never 0.0.
  const seen = new Set<string>();
  let shownWhileRunning = false;
  const summary = page.getByTestId('tl-summary');
  const deadline = Date.now() + 180_000;
  while ((await summary.count()) === 0 && Date.now() < deadline) {
    const [text, running] = await Promise.all([speed.textContent(), page.getByTestId('stop').isEnabled()]);
    seen.add(text ?? '');
    if (running && text?.endsWith('tok/s') && !shownWhileRunning) {
      shownWhileRunning = true;
      await shot(page, 'newcomer-host-computing.png');
    }
    await page.waitForTimeout(150);
  }
  expect(await summary.count()).toBe(1);
  for (const s of seen) expect(s).toMatch(/^(—|\d+\.\d tok\/s)$/);
  expect([...seen]).not.toContain('0.0 tok/s');
  expect(shownWhileRunning).toBe(true);            // the room's speed shows while the answer streams
  expect(await speed.textContent()).toMatch(/^\d+\.\d tok\/s$/);
  expect(Number.parseFloat((await speed.textContent())!)).toBeGreaterThan(0);

  // The answer stopped at the tiny model's cap, and the timeline says why.
  expect(await summary.getAttribute('data-reason')).toBe('limit');
  expect(await summary.textContent()).toMatch(new RegExp(`^1 step · 0 tool calls · ${TINY_ANSWER_CAP} tok · `));
  const note = page.getByTestId('tl-note').last();
  expect(await note.textContent()).toContain(`random weights, so it only writes gibberish: its answers stop at ${TINY_ANSWER_CAP} tokens`);
  await shot(page, 'newcomer-tiny-capped.png');
  expect(errors).toEqual([]);
  await context.close();
}, 300_000);

test('a model folder from this device (Hugging Face layout): no console error', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  const errors = consoleErrors(page);
  await page.goto(`${server.url}/?engine=${ENGINE}&name=Laptop&speed=1`);
  await page.getByTestId('adapter').waitFor({ timeout: 60_000 });
  await page.getByText('A folder on this device').click();
  await page.locator('input[type=file][webkitdirectory]').setInputFiles(tinyDir);
  await hostUntilReady(page);
  expect(await page.getByTestId('device-toks').textContent()).toBe('—');
  expect(await page.getByTestId('workspace-notice').count()).toBe(0);   // a real checkpoint: no tiny-model notice
  expect(errors).toEqual([]);
  await context.close();
}, 240_000);

test('the demo workspace says, where the request is typed, that it is scripted', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  const errors = consoleErrors(page);
  await page.goto(`${server.url}/?agent=replay&delay=1`);
  const notice = page.getByTestId('workspace-notice');
  await notice.waitFor({ timeout: 60_000 });
  expect(await notice.textContent()).toMatch(/Scripted demo: no model runs here\. Whatever you ask, it replays the same script, which builds a counter app\./);
  expect(await page.getByTestId('request-input').getAttribute('placeholder')).toBe('Ask for anything: the demo builds its counter app');
  expect(await page.getByTestId('timeline-empty').textContent()).toMatch(/^Send any request to watch the agent write a small counter app/);
  // The notice sits right above the request box.
  const [n, box] = await Promise.all([notice.boundingBox(), page.getByTestId('request-input').boundingBox()]);
  expect(box!.y - (n!.y + n!.height)).toBeLessThan(20);
  await shot(page, 'newcomer-demo.png');
  await page.getByTestId('request-input').fill('Build a todo list');
  await page.getByTestId('send').click();
  await page.getByTestId('tl-summary').waitFor({ timeout: 60_000 });
  expect(await page.getByTestId('tl-summary').getAttribute('data-reason')).toBe('done');
  expect(await notice.isVisible()).toBe(true);
  await shot(page, 'newcomer-demo-done.png');
  expect(errors).toEqual([]);
  await context.close();
}, 120_000);

test('a call the parser had to mend says so on its card (replay sampled without the call grammar)', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  await page.goto(`${server.url}/?agent=replay&script=/e2e-scripts/mended.jsonl&grammar=0&delay=1`);
  await page.getByTestId('request-input').waitFor({ timeout: 60_000 });
  expect(await page.getByTestId('workspace-notice').textContent()).toContain('Scripted replay: the answers come from /e2e-scripts/mended.jsonl, not from what you ask.');
  await page.getByTestId('request-input').fill('Write a page');
  await page.getByTestId('send').click();
  await page.getByTestId('tl-summary').waitFor({ timeout: 60_000 });
  const card = page.getByTestId('call-card').first();
  expect(await card.getAttribute('data-name')).toBe('write_file');
  expect(await card.getAttribute('data-state')).toBe('done');
  expect(await card.getByText('mended', { exact: true }).isVisible()).toBe(true);
  expect(await card.getByTestId('call-repairs').textContent()).toBe(
    'Mended: raw line breaks in a string kept as written · Python-style dict read as JSON · name "functions.write_file" as write_file');
  await card.screenshot({ path: path.join(artifactDir(), 'newcomer-mended-card.png') });
  await context.close();
}, 120_000);
