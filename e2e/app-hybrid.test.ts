// A Qwen3.5 hybrid in the app (issue 14): the host page loads a tiny hybrid checkpoint (Gated DeltaNet +
// gated attention) on the CPU engine and on the WebGPU engine (its worker, SwiftShader), its device card shows what one checkpoint snapshot of the recurrent
// state costs, and after a request how many it keeps (the pinned one after the system prompt + tools,
// and the answer's). Screenshots: test-results/app-hybrid-room-{reference,webgpu}.png.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import type { RunningServer } from '../server/app.ts';
import { tinyModelDir } from '../test/helpers/tiny-model.ts';
import { artifactDir, newDeviceContext, startBuiltApp, type BuiltApp } from './helpers/browser.ts';

let server: RunningServer;
let browser: Browser;
let app: BuiltApp | undefined;
const HYBRID = { layers: 4, seed: 2, headDim: 64, intermediate: 256, hybrid: {} } as const;   // the golden dense hybrid

beforeAll(async () => {
  app = await startBuiltApp({ '/models/hybrid': await tinyModelDir(HYBRID) });
  ({ server, browser } = app);
});

afterAll(async () => { await app?.close(); });

test.each(['reference', 'webgpu'])('the room panel shows a hybrid model\'s snapshot memory, and the snapshots a request keeps (%s engine)', async (engine) => {
  mkdirSync(artifactDir(), { recursive: true });
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  const log: string[] = [];
  page.on('console', (m) => log.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
  try {
    await page.goto(`${server.url}/?model=${encodeURIComponent(`${server.url}/models/hybrid`)}&engine=${engine}&name=Laptop&speed=1`);
    await page.getByTestId('host-room').click();
    const card = page.getByTestId('device').first();
    await expect.poll(async () => card.getAttribute('data-status'), { timeout: 120_000 }).toBe('ready');
    // Layers 0–2 are Gated DeltaNet: 3 × ((4 − 1) · (2·2·64 + 4·64) + 4·64·64) · 4 bytes = 3 × 71,680 = 210 KiB.
    const row = card.getByTestId('device-snapshots');
    expect(await row.textContent()).toMatch(/^\s*210 KiB of recurrent state a snapshot · 0 kept \(0 B\)\s*$/);
    await page.getByTestId('request-input').fill('Say hello');
    await page.getByTestId('send').click();
    await expect.poll(async () => page.getByTestId('tl-text').count(), { timeout: 120_000 }).toBeGreaterThan(0);
    if (await page.getByTestId('stop').isEnabled()) await page.getByTestId('stop').click();
    await page.getByTestId('tl-summary').waitFor({ timeout: 120_000 });
    await expect.poll(async () => Number(/· (\d+) kept/.exec((await row.textContent()) ?? '')?.[1] ?? 0), { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    await page.screenshot({ path: path.join(artifactDir(), `app-hybrid-room-${engine}.png`) });
  } catch (e) {
    await page.screenshot({ path: path.join(artifactDir(), `app-hybrid-failed-${engine}.png`) }).catch(() => undefined);
    throw new Error(`${(e as Error).message}\npage console:\n${log.slice(-30).join('\n')}`, { cause: e });
  } finally {
    await context.close();
  }
});
