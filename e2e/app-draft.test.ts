// The room panel's draft model (src/ui/draft-choice.ts): the host alone on the built-in tiny model first
// tries a draft model of another vocabulary (refused by name, prompt lookup stays), then loads the tiny
// model itself as its draft (same tokenizer: a valid draft), on the host's engine; a request completes
// and its summary's tooltip names the draft model. A screenshot of the panel goes to test-results/.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { RunningServer } from '../server/app.ts';
import { tinyModelDir } from '../test/helpers/tiny-model.ts';
import { artifactDir, newDeviceContext, startBuiltApp, type BuiltApp } from './helpers/browser.ts';

let server: RunningServer;
let browser: Browser;
let app: BuiltApp | undefined;
const ENGINE = process.env.POOLED_E2E_ENGINE ?? 'webgpu';

beforeAll(async () => {
  app = await startBuiltApp({ '/models/tiny': await tinyModelDir(), '/models/other-vocab': await tinyModelDir({ vocab: 1000 }) });
  ({ server, browser } = app);
}, 180_000);

afterAll(async () => { await app?.close(); });

const text = async (page: Page, id: string) => ((await page.getByTestId(id).textContent()) ?? '').replace(/\s+/g, ' ').trim();

test('the host refuses a draft model of another vocabulary, loads the tiny model as its draft, and the summary names it', async () => {
  mkdirSync(artifactDir(), { recursive: true });
  const context = await newDeviceContext(browser);
  const host = await context.newPage();
  const log: string[] = [];
  host.on('console', (m) => log.push(`${m.type()}: ${m.text()}`));
  host.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
  const panel = host.locator('aside');
  try {
    await host.goto(`${server.url}/?model=tiny&engine=${ENGINE}&name=Laptop&speed=1`);
    await host.getByTestId('adapter').waitFor({ timeout: 60_000 });
    await host.getByTestId('host-room').click();
    await host.getByTestId('invite-link').waitFor({ timeout: 120_000 });
    expect(await text(host, 'speculation-state')).toBe('on · prompt lookup');
    expect(await host.getByTestId('drafts-lookup').isChecked()).toBe(true);

    // Another vocabulary: refused before its weights are read, by name; prompt lookup stays in effect.
    await host.getByTestId('drafts-model').check();
    await host.getByTestId('draft-input').fill('/models/other-vocab');
    await host.getByTestId('draft-load').click();
    const error = host.getByTestId('draft-error');
    await error.waitFor({ timeout: 60_000 });
    expect(await error.textContent()).toBe("DraftVocabularyError: draft model other-vocab does not share the target's tokenizer: vocabulary size 1000 (the target's: 151936)");
    expect(await text(host, 'speculation-state')).toBe('on · prompt lookup');
    await panel.screenshot({ path: path.join(artifactDir(), 'app-draft-refused.png') });

    // The tiny model itself: same tokenizer, loaded whole on this device.
    await host.getByTestId('draft-input').fill('tiny');
    await host.getByTestId('draft-load').click();
    await expect.poll(() => text(host, 'speculation-state'), { timeout: 120_000 }).toBe('on · draft model tiny test model');
    expect(await host.getByTestId('draft-error').count()).toBe(0);
    expect(await text(host, 'draft-status')).toMatch(/^tiny test model · \d+ MB on this device$/);
    expect(new URL(host.url()).searchParams.get('draft')).toBe('tiny');
    await panel.screenshot({ path: path.join(artifactDir(), 'app-draft-loaded.png') });

    // A request completes; the tooltip names the draft model and gives its acceptance.
    await host.getByTestId('request-input').fill('Say hello');
    await host.getByTestId('send').click();
    const summary = host.getByTestId('tl-summary');
    await summary.waitFor({ timeout: 180_000 });
    expect(['done', 'limit']).toContain(await summary.getAttribute('data-reason'));
    const tip = (await summary.getAttribute('title')) ?? '';
    const m = /^speculation \(draft model tiny test model\): (\d+) of (\d+) drafted tokens accepted/.exec(tip);
    expect(m, tip).not.toBeNull();
    expect(Number(m![2])).toBeGreaterThan(0);
    expect(Number(m![1])).toBeGreaterThan(0);
    console.log(`draft e2e tooltip: ${tip}`);

    // Back to prompt lookup: the draft model goes.
    await host.getByTestId('drafts-lookup').check();
    expect(await text(host, 'speculation-state')).toBe('on · prompt lookup');
    expect(await host.getByTestId('draft-status').count()).toBe(0);
  } catch (e) {
    await host.screenshot({ path: path.join(artifactDir(), 'app-draft-failed.png') }).catch(() => undefined);
    throw new Error(`${(e as Error).message}\nhost console:\n${log.slice(-30).join('\n')}`, { cause: e });
  } finally {
    await context.close();
  }
}, 420_000);
