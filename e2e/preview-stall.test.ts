// Issue 39, item 7: a page that busy-loops after its load event stalls the shared sandbox process. The
// next serve finds the sandbox stuck, brings the pages back one at a time and drops the one that stalls
// it again; serving that page again is refused, saying why, until its files change. The real preview
// (the harness page in Chromium); times to refusal are logged for the closing note.
import { beforeAll, expect, test } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { newDeviceContext, useServerAndBrowser } from './helpers/browser.ts';
import { callTool, openPreviewHarness, textOf, writeProject } from './helpers/preview-page.ts';

const env = useServerAndBrowser();
let context: BrowserContext;

beforeAll(async () => {
  context = await newDeviceContext(env.browser, { width: 900, height: 700 });
});

const KEPT = '<p id="a">a</p>';
const SPIN = `<p>spin</p><script>addEventListener('load', () => setTimeout(() => { for (;;) {} }, 20));</script>`;

// Serves with a stuck sandbox: a ping timeout, a restart and a load wait each; seconds on a busy 2-core machine.
test('item 7: a page looping after load is dropped once it stalls the sandbox, refused until it changes, and served again once it did', { timeout: 120_000 }, async () => {
  const page = await openPreviewHarness(context, env.server.url);
  await writeProject(page, { 'a/index.html': KEPT, 'spin/index.html': SPIN });
  expect(textOf(await callTool(page, 'serve', { path: 'a' }))).toMatch(/^Served a\/ on :5173\/ — loaded in \d+ ms/);
  expect(textOf(await callTool(page, 'serve', { path: 'spin' }))).toMatch(/^Served spin\/ on :5174\/ — loaded in \d+ ms/);

  // The next serve finds the sandbox stuck: the looping page is found and dropped, the other comes back.
  let t0 = performance.now();
  expect(textOf(await callTool(page, 'serve', { path: 'a' }))).toMatch(/^Reloaded a\/ on :5173\/ — loaded in \d+ ms/);
  console.log(`item 7: the serve after the stall found and dropped the looping page in ${(performance.now() - t0).toFixed(0)} ms`);
  expect((await page.evaluate('window.pv.host.served()') as { port: number }[]).map((p) => p.port)).toEqual([5173]);
  expect(textOf(await callTool(page, 'preview_logs'))).toContain('[warn] stopped :5174/ — it stalled the sandbox again right after loading: an endless loop after its load event?; it is not served again until its files change');
  expect(await callTool(page, 'run_js', { code: 'console.log(document.body.textContent)', port: 5173 })).toEqual({ ok: true, text: 'a' });

  // Served again unchanged: refused at once, saying why; the sandbox is not stalled again.
  t0 = performance.now();
  const refused = await callTool(page, 'serve', { path: 'spin' });
  const refusedMs = performance.now() - t0;
  console.log(`item 7: serving the unchanged looping page again refused in ${refusedMs.toFixed(0)} ms`);
  expect(refused.ok).toBe(false);
  expect(refused.error).toMatch(/^spin was not served: unchanged since it stalled the preview sandbox \(it stalled the sandbox again right after loading: an endless loop after its load event\?\); change its files \(the loop\), then serve it again$/);
  expect(refusedMs).toBeLessThan(5_000);
  expect(await callTool(page, 'run_js', { code: 'console.log(document.body.textContent)', port: 5173 })).toEqual({ ok: true, text: 'a' });

  // Fixed: served as any page.
  await writeProject(page, { 'spin/index.html': SPIN.replace('for (;;) {}', 'console.log("fixed")') });
  expect(textOf(await callTool(page, 'serve', { path: 'spin' }))).toMatch(/^Served spin\/ on :5174\/ — loaded in \d+ ms/);
  expect(await page.evaluate(`window.pv.files.readText('a/index.html')`)).toBe(KEPT); // the project file from before is unchanged
  await page.close();
});
