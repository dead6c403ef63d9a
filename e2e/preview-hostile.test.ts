// Issue 12, items 3–6 in real Chromium: a served page that floods the console, reloads itself, tampers
// with the bridge's builtins or fishes for the host's URL. The host keeps answering, keeps its bridge,
// hears the truth from run_js, and never gives the frame its own address.
import { beforeAll, expect, test } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { newDeviceContext, useServerAndBrowser } from './helpers/browser.ts';
import { callTool, textOf, writeProject } from './helpers/preview-page.ts';

const env = useServerAndBrowser();
let context: BrowserContext;
/** Something only the host page's address holds (as the app's URL holds a room id). */
const SECRET = 'room=5ec7e75ec7e75ec7e75ec7e75ec7e75e';

beforeAll(async () => {
  context = await newDeviceContext(env.browser, { width: 900, height: 700 });
});

async function openHarness(): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${env.server.url}/harness/preview.html?${SECRET}`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  return page;
}

test('item 3: a page logging 3,000 lines per interval for 10 s: the host keeps answering tool calls and timers, memory stays capped', async () => {
  const page = await openHarness();
  try { await flood(page); } finally { await page.close(); } // a flooding page left open would starve the next tests
});

async function flood(page: Page): Promise<void> {
  await writeProject(page, {
    'index.html': '<p>flood</p><script src="flood.js"></script>',
    'flood.js': "let n = 0;\nsetInterval(() => { for (let i = 0; i < 3000; i++) console.log('flood line', n++); }, 10);",
  });
  await callTool(page, 'serve');
  // In the host page itself: a timer that should tick every 50 ms (the longest gap between ticks), and
  // a preview_logs call every 200 ms timed from inside (what the agent would see).
  await page.evaluate(`(() => {
    window.__ticks = 0; window.__maxGap = 0; window.__inPage = []; let last = performance.now();
    window.__timer = setInterval(() => { const now = performance.now(); window.__maxGap = Math.max(window.__maxGap, now - last); last = now; window.__ticks++; }, 50);
    window.__caller = setInterval(async () => { const t0 = performance.now(); await window.pv.tool('preview_logs', {}); window.__inPage.push(performance.now() - t0); }, 200);
  })()`);
  // And from the driver, through Playwright (a full round trip to the tab).
  const latencies: number[] = [];
  const started = Date.now();
  while (Date.now() - started < 10_000) {
    const t0 = Date.now();
    const r = await Promise.race([
      callTool(page, 'preview_logs', {}),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 5_000)),
    ]);
    latencies.push(r === null ? 5_000 : Date.now() - t0);
    await new Promise((r2) => setTimeout(r2, 200));
  }
  const host = await page.evaluate(`(() => { clearInterval(window.__timer); clearInterval(window.__caller); return { ticks: window.__ticks, maxGap: window.__maxGap, inPage: window.__inPage, kept: window.pv.host.log.size, dropped: window.pv.host.log.since(0).filter((l) => /lines? dropped/.test(l.text)).length }; })()`) as { ticks: number; maxGap: number; inPage: number[]; kept: number; dropped: number };
  const inPage = [...host.inPage].sort((a, b) => a - b);
  const sorted = [...latencies].sort((a, b) => a - b);
  const pct = (xs: number[], p: number) => Math.round(xs[Math.min(xs.length - 1, Math.floor(xs.length * p))]!);
  console.log(`[preview flood] in the tab: ${inPage.length} preview_logs calls, median ${pct(inPage, 0.5)} ms, p95 ${pct(inPage, 0.95)} ms, max ${pct(inPage, 1)} ms; ` +
    `through Playwright: ${latencies.length} calls, median ${pct(sorted, 0.5)} ms, max ${pct(sorted, 1)} ms; host timer ${host.ticks} ticks, longest gap ${Math.round(host.maxGap)} ms; ${host.kept} lines kept`);
  // Counting first: the tab's own calls kept coming (one per 200 ms) and its timer kept ticking; every
  // driver call came back (none hit the 5 s cap). The code before this fix: 1 tick in 10 s, every call timed out.
  expect(inPage.length).toBeGreaterThanOrEqual(25);          // ≥ half of the ~50 calls of 10 s
  expect(host.ticks).toBeGreaterThanOrEqual(100);            // ≥ half of the 200 ticks of 10 s
  expect(latencies.length).toBeGreaterThanOrEqual(20);
  expect(sorted.at(-1)!).toBeLessThan(5_000);
  expect(pct(sorted, 0.5)).toBeLessThan(100);               // measured ≈3 ms through Playwright
  // The bound the issue sets: a tool call answered within 100 ms throughout. Held in the tab, where the
  // agent makes its calls: the median and 90 % of the calls (a loaded 2-core machine steals the odd slice).
  expect(pct(inPage, 0.5)).toBeLessThan(100);
  expect(pct(inPage, 0.9)).toBeLessThan(100);
  expect(host.kept).toBeLessThanOrEqual(2_000);
  expect(host.dropped).toBeGreaterThan(0);                   // the flood was cut, and it says so
  // The newest lines are still there, so the agent sees the page is flooding.
  expect(textOf(await callTool(page, 'preview_logs', {}))).toMatch(/\[log\] flood line \d+/);
}

test('item 4: a page that calls location.reload() keeps its bridge: run_js and the console work after each reload', async () => {
  const page = await openHarness();
  await writeProject(page, {
    'index.html': '<p id="p">reloading page</p><script src="main.js"></script>',
    'main.js': "console.log('loaded once more');",
  });
  await callTool(page, 'serve');
  for (let i = 0; i < 2; i++) {
    expect(textOf(await callTool(page, 'run_js', { code: 'setTimeout(() => location.reload(), 50); console.log("reloading")' }))).toBe('reloading');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await callTool(page, 'run_js', { code: 'console.log("after reload", document.getElementById("p").textContent)' }))
      .toEqual({ ok: true, text: 'after reload reloading page' });
  }
  const logs = textOf(await callTool(page, 'preview_logs', {}));
  expect(logs.match(/\[log\] loaded once more/g)?.length).toBe(3);
  expect(logs).toMatch(/the page reloaded itself/);
  await page.close();
});

test('issue 27: code that makes the page reload itself while it runs: run_js ends at the reload (no 3 s stop) and says so; the next run_js works', async () => {
  const page = await openHarness();
  await writeProject(page, {
    'index.html': '<p id="p">reloading page</p><script src="main.js"></script>',
    'main.js': "console.log('loaded once more');",
  });
  await callTool(page, 'serve');
  // The reload comes while the code still awaits: its document goes before it can say it finished.
  const t0 = Date.now();
  const cut = await callTool(page, 'run_js', { code: 'console.log("before"); setTimeout(() => location.reload(), 0); await new Promise((r) => setTimeout(r, 1000)); console.log("never")' });
  const ms = Date.now() - t0;
  expect(cut).toEqual({ ok: true, text: 'before\n(the page reloaded itself before this code finished; run_js now runs in the reloaded page)' });
  expect(ms).toBeLessThan(2_500); // the reload takes ≈0.3 s; the bug waited the full 3 s limit and recycled
  expect(await callTool(page, 'run_js', { code: 'console.log("after reload", document.getElementById("p").textContent)' }))
    .toEqual({ ok: true, text: 'after reload reloading page' });
  const logs = textOf(await callTool(page, 'preview_logs', {}));
  expect(logs).toMatch(/the page reloaded itself/);
  expect(logs).not.toMatch(/run_js stopped/);
  expect(logs.match(/\[log\] loaded once more/g)?.length).toBe(2);
  await page.close();
});

test('item 5: a page that patches MessagePort.prototype.postMessage, grabs the port or says hello again cannot rewrite what the host hears', async () => {
  const page = await openHarness();
  await writeProject(page, {
    'index.html': '<script src="liar.js"></script>',
    'liar.js': `// 1. Rewrite every message the bridge sends: failures become successes, and logs are replaced.
const post = MessagePort.prototype.postMessage;
MessagePort.prototype.postMessage = function (m, ...rest) {
  if (m && m.t === 'run-done') m = { t: 'run-done', run: m.run, ok: true };
  if (m && m.t === 'log') m = { ...m, text: 'REWRITTEN' };
  return post.call(this, m, ...rest);
};
Promise.prototype.then = ((then) => function (ok, err) { return then.call(this, ok, ok); })(Promise.prototype.then);
// 2. Listen for the host's port (it arrives after this script ran) and forge answers on it.
addEventListener('message', (e) => {
  const port = e.ports && e.ports[0];
  if (port) { window.__stolen = port; port.postMessage({ t: 'log', level: 'error', source: 'console', text: 'FORGED', run: 0 }); }
}, true);
// 3. Read the bridge's token from the page and say hello again, to be handed a fresh port.
const token = [...document.scripts].map((s) => (/__POOLED_TOKEN__|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.exec(s.textContent) || [])[0]).find(Boolean);
setTimeout(() => parent.postMessage({ t: 'pv-hello', token }, '*'), 300);
setInterval(() => { if (window.__stolen) for (let r = 1; r < 20; r++) window.__stolen.postMessage({ t: 'run-done', run: r, ok: true }); }, 5);`,
  });
  await callTool(page, 'serve');
  await new Promise((r) => setTimeout(r, 800));
  const thrown = await callTool(page, 'run_js', { code: 'console.log("truth"); throw new Error("boom")' });
  expect(thrown.ok).toBe(false);
  expect(textOf(thrown)).toContain('run_js failed: Error: boom');
  expect(textOf(thrown)).toContain('truth');
  const logs = textOf(await callTool(page, 'preview_logs', {}));
  expect(logs).not.toContain('FORGED');
  expect(logs).not.toContain('REWRITTEN');
  expect(await page.evaluate('window.pv.host.log.since(0).some((l) => /FORGED|REWRITTEN/.test(l.text))')).toBe(false);
  expect(await callTool(page, 'run_js', { code: 'console.log(typeof window.__stolen)' })).toEqual({ ok: true, text: 'undefined' });
  await page.close();
});

test('item 6: the frame never learns the host page\'s address (base removed, baseURI, referrer, links, a child frame)', async () => {
  const page = await openHarness();
  await writeProject(page, {
    'index.html': '<a id="rel" href="x.html">x</a><script src="spy.js"></script>',
    'spy.js': `for (const b of document.querySelectorAll('base')) b.remove();
const child = document.createElement('iframe');
document.body.append(child);
const seen = {
  baseURI: document.baseURI, referrer: document.referrer, href: location.href, url: document.URL,
  link: document.getElementById('rel').href, childBase: child.contentDocument ? child.contentDocument.baseURI : '(none)',
  ancestors: location.ancestorOrigins ? [...location.ancestorOrigins].join(' ') : '',
};
console.log('spy ' + JSON.stringify(seen));`,
  });
  await callTool(page, 'serve');
  const logs = textOf(await callTool(page, 'preview_logs', {}));
  const line = logs.split('\n').find((l) => l.startsWith('[log] spy '));
  expect(line).toBeDefined();
  expect(line).not.toContain(SECRET);
  expect(line).not.toContain('harness/preview.html');
  // The page still works as a page: its own links resolve inside the preview.
  expect(textOf(await callTool(page, 'run_js', { code: 'console.log(new URL("x.html", document.baseURI).href)' }))).not.toContain(SECRET);
  await page.close();
});
