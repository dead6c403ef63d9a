// The agent's browser parts in real Chromium: project files in IndexedDB (one store per project, kept
// across reloads, no path leaving the root), the session store, and search's regex in a Web Worker —
// a pattern that runs over 2 s is refused and the tab keeps running meanwhile.
import { expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { newDeviceContext, useServerAndBrowser } from './helpers/browser.ts';

const env = useServerAndBrowser();

async function open(page: Page): Promise<void> {
  await page.goto(`${env.server.url}/harness/agent-store.html`);
  await page.getByTestId('ready').waitFor({ state: 'visible', timeout: 30_000 });
}
const call = <T>(page: Page, expr: string): Promise<T> => page.evaluate(`window.__agentStore.${expr}`) as Promise<T>;

test('IndexedDB project files: per project, kept across a reload, paths checked', async () => {
  const context = await newDeviceContext(env.browser);
  const page = await context.newPage();
  await open(page);
  await call(page, `write('p1', 'index.html', '<!doctype html>')`);
  await call(page, `write('p1', 'src/game.js', 'let x = 1;')`);
  await call(page, `write('p2', 'other.txt', 'B')`);
  expect(await call(page, `tryWrite('p1', '../escape.txt')`)).toMatch(/^ProjectPathError: .*leaves the project root/);
  expect(await call(page, `tryWrite('p1', 'index.html/x')`)).toMatch(/^ProjectFileError: /);
  await page.reload();
  await page.getByTestId('ready').waitFor({ state: 'visible' });
  expect(await call(page, `read('p1', 'src/game.js')`)).toBe('let x = 1;');
  expect(await call(page, `listing('p1')`)).toEqual({ root: ['dir:src:0', 'file:index.html:15'], all: ['index.html', 'src/game.js'] });
  expect(await call(page, `listing('p2')`)).toEqual({ root: ['file:other.txt:1'], all: ['other.txt'] });
  await call(page, `remove('p1', 'index.html')`);
  expect(await call(page, `read('p1', 'index.html')`)).toBeNull();
  await call(page, `saveSession('p1', 'make a game')`);
  await page.reload();
  await page.getByTestId('ready').waitFor({ state: 'visible' });
  expect(await call(page, `loadSession('p1')`)).toMatchObject({ requests: 1, timeline: [{ text: 'make a game' }], servedPorts: [{ port: 5173 }] });
  expect(await call(page, `loadSession('nope')`)).toBeNull();
  await context.close();
});

test('search runs its regex in a Web Worker: a runaway pattern is refused after 2 s and the tab keeps running', async () => {
  const context = await newDeviceContext(env.browser);
  const page = await context.newPage();
  await open(page);
  await call(page, `write('s', 'evil.txt', '${'a'.repeat(40)}!\\nscore = 1')`);
  const runaway = await call<{ ok: boolean; text: string; ms: number; ticks: number }>(page, `search('s', '^(a+)+$')`);
  expect(runaway.ok).toBe(false);
  expect(runaway.text).toMatch(/ran over 2 s and was refused/);
  expect(runaway.ms).toBeGreaterThanOrEqual(1900);
  expect(runaway.ms).toBeLessThan(8000);
  expect(runaway.ticks).toBeGreaterThanOrEqual(20); // ~40 ticks of 50 ms while the worker spun
  const ok = await call<{ ok: boolean; text: string }>(page, `search('s', 'score')`);
  expect(ok).toMatchObject({ ok: true, text: 'evil.txt:2: score = 1' });
  await context.close();
});
