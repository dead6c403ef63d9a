// Issue 5 acceptance in real Chromium: harness/preview.html hosts the preview; tests call the agent tools.
import { beforeAll, expect, test } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Frame, Page } from 'playwright-core';
import { artifactDir, newDeviceContext, useServerAndBrowser } from './helpers/browser.ts';
import { callTool, openPreviewHarness, solidPng, textOf, writeProject } from './helpers/preview-page.ts';

const env = useServerAndBrowser();
let context: BrowserContext;

beforeAll(async () => {
  context = await newDeviceContext(env.browser, { width: 900, height: 700 });
});

/** The preview's sandboxed frame (out of process, inside its shell: src/preview/frame-shell.ts) once it is there. */
async function previewFrame(page: Page): Promise<Frame> {
  await expect.poll(() => page.frames().filter((f) => f.url() === 'about:srcdoc').length, { timeout: 10_000 }).toBeGreaterThan(0);
  return page.frames().find((f) => f.url() === 'about:srcdoc')!;
}

const APP = {
  'app/index.html': `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Shop list</title><link rel="stylesheet" href="style.css"></head>
<body>
  <h1 id="title">loading…</h1>
  <img id="logo" src="img/logo.png" alt="logo" width="64" height="64">
  <ul id="items"></ul>
  <button id="add">Add one</button> <span id="count">0</span>
  <script type="module" src="main.js"></script>
</body>
</html>`,
  'app/style.css': `body { font: 18px sans-serif; background: #fdf6e3 url("img/dot.png") repeat-x; }
h1 { color: rgb(200, 30, 30); }
#items li { color: rgb(20, 90, 160); }`,
  'app/lib.js': `export function greet(name) { return 'Hello, ' + name + '!'; }
export const double = (n) => n * 2;`,
  'app/main.js': `import { greet, double } from './lib.js';
document.getElementById('title').textContent = greet('preview');
const data = await (await fetch('data.json')).json();
for (const item of data.items) {
  const li = document.createElement('li');
  li.textContent = item;
  document.getElementById('items').append(li);
}
let n = 0;
document.getElementById('add').addEventListener('click', () => {
  n = double(n + 1) / 2;
  document.getElementById('count').textContent = String(n);
});
console.log('ready with', data.items.length, 'items');`,
  'app/data.json': JSON.stringify({ items: ['apples', 'bread', 'cheese'] }),
  'app/img/logo.png': { base64: solidPng(64, 64, [40, 160, 90]).toString('base64') },
  'app/img/dot.png': { base64: solidPng(8, 8, [230, 200, 120]).toString('base64') },
};

test('(1) a multi-file app renders and works: css, module import, fetch, image; screenshot', async () => {
  const page = await openPreviewHarness(context, env.server.url);
  await writeProject(page, APP);
  const served = await callTool(page, 'serve', { path: 'app' });
  expect(served.ok).toBe(true);
  expect(served.text).toMatch(/^Served app\/ on :5173\/ — loaded in \d+ ms, no errors\.$/);

  const frame = await previewFrame(page);
  expect(await frame.textContent('#title')).toBe('Hello, preview!');
  expect(await frame.$$eval('#items li', (els) => els.map((e) => e.textContent))).toEqual(['apples', 'bread', 'cheese']);
  expect(await frame.evaluate('getComputedStyle(document.querySelector("h1")).color')).toBe('rgb(200, 30, 30)');
  expect(await frame.evaluate('getComputedStyle(document.querySelector("#items li")).color')).toBe('rgb(20, 90, 160)');
  expect(await frame.evaluate('document.getElementById("logo").naturalWidth')).toBe(64);
  expect(await frame.evaluate('getComputedStyle(document.body).backgroundImage')).toMatch(/^url\("blob:/);
  expect(await page.getByTestId('preview-address').textContent()).toBe(':5173/');
  const logs = await callTool(page, 'preview_logs');
  expect(logs.text).toContain('[log] ready with 3 items');
  await expect.poll(() => page.getByTestId('preview-console').textContent()).toContain('ready with 3 items');
  mkdirSync(artifactDir(), { recursive: true });
  await page.screenshot({ path: path.join(artifactDir(), 'preview-app.png') });

  await frame.click('#add');
  await frame.click('#add');
  expect(await frame.textContent('#count')).toBe('2');

  // Serving the same folder again reloads it with the current files; another folder gets the next port.
  await writeProject(page, { 'app/lib.js': `export function greet(name) { return 'Hi again, ' + name; }\nexport const double = (n) => n * 2;` });
  const again = await callTool(page, 'serve', { path: 'app' });
  expect(again.text).toMatch(/^Reloaded app\/ on :5173\//);
  const frame2 = await previewFrame(page);
  await expect.poll(() => frame2.textContent('#title').catch(() => '')).toBe('Hi again, preview');
  await writeProject(page, { 'other/index.html': '<p>other</p>' });
  expect((await callTool(page, 'serve', { path: 'other' })).text).toMatch(/on :5174\//);
  expect(await page.evaluate('window.pv.host.served()')).toEqual([
    { port: 5173, folder: 'app', page: 'index.html' }, { port: 5174, folder: 'other', page: 'index.html' },
  ]);
  await page.close();
});

test('(2) a syntax error, a runtime error and a 404 show in serve\'s first errors and in preview_logs', async () => {
  const page = await openPreviewHarness(context, env.server.url);
  await writeProject(page, {
    'index.html': `<!doctype html><html><body><h1>broken</h1>
<script src="syntax.js"></script>
<script src="runtime.js"></script>
<img src="missing.png" alt="">
</body></html>`,
    'syntax.js': 'const ok = 1;\nconst broken = ;\n',
    'runtime.js': '// calls something that does not exist\nundefinedFunction(42);\n',
  });
  const served = await callTool(page, 'serve');
  const text = textOf(served);
  expect(text).toMatch(/^Served \/ on :5173\/ — loaded in \d+ ms, 3 errors:/);
  expect(text).toMatch(/syntax\.js:2:16 Uncaught SyntaxError: Unexpected token ';'/);
  expect(text).toMatch(/runtime\.js:2:1 Uncaught ReferenceError: undefinedFunction is not defined/);
  expect(text).toContain('404 Not Found: missing.png (<img> in index.html)');

  const logs = textOf(await callTool(page, 'preview_logs', { cursor: 0 }));
  expect(logs).toMatch(/\[error\] syntax\.js:2:16 Uncaught SyntaxError: Unexpected token ';'/);
  expect(logs).toMatch(/\[error\] runtime\.js:2:1 Uncaught ReferenceError: undefinedFunction is not defined/);
  expect(logs).toContain('[error] 404 Not Found: missing.png');

  // A module importing a missing file, and fetch() of a missing file: both 404s the page sees.
  await writeProject(page, {
    'mod/index.html': '<script type="module" src="main.js"></script><script type="module" src="boom.js"></script>',
    'mod/boom.js': `import { helper } from './helper.js';\nhelper();`,
    'mod/helper.js': `export function helper() {\n  return notDefinedHere + 1;\n}`,
    'mod/main.js': `const r = await fetch('nope.json');\nconsole.log('status', r.status);\nimport('./gone.js').catch((e) => console.log('import failed:', e.name));`,
  });
  const mod = textOf(await callTool(page, 'serve', { path: 'mod' }));
  expect(mod).toContain('GET /nope.json 404 (Not Found)');
  expect(mod).toMatch(/helper\.js:2:3 Uncaught ReferenceError: notDefinedHere is not defined/);
  const modLogs = textOf(await callTool(page, 'preview_logs'));
  expect(modLogs).toContain('[log] status 404');
  expect(modLogs).toContain('[log] import failed: TypeError');
  await page.close();
});

test('(3) the console cursor returns only new lines; 40 lines / 3,000 chars caps hold, newest last', async () => {
  const page = await openPreviewHarness(context, env.server.url);
  await writeProject(page, { 'index.html': '<script>console.log("first line")</script>' });
  await callTool(page, 'serve');
  const first = textOf(await callTool(page, 'preview_logs'));
  expect(first).toContain('[log] first line');
  const cursor = Number(/next cursor: (\d+)/.exec(first)![1]);

  expect(textOf(await callTool(page, 'preview_logs', { cursor }))).toBe(`No new console output.\nnext cursor: ${cursor}`);
  await callTool(page, 'run_js', { code: 'console.warn("second"); console.error("third")' });
  const second = textOf(await callTool(page, 'preview_logs', { cursor }));
  expect(second).not.toContain('first line');
  expect(second.split('\n').slice(0, 2)).toEqual(['[warn] second', '[error] third']);
  const cursor2 = Number(/next cursor: (\d+)/.exec(second)![1]);

  await callTool(page, 'run_js', { code: 'for (let i = 0; i < 100; i++) console.log("line " + i)' });
  const many = textOf(await callTool(page, 'preview_logs', { cursor: cursor2 }));
  const manyLines = many.split('\n');
  expect(manyLines[0]).toBe(`(60 older lines since cursor ${cursor2} not shown)`);
  expect(manyLines.filter((l) => l.startsWith('[log] line '))).toHaveLength(40);
  expect(manyLines[1]).toBe('[log] line 60');
  expect(manyLines[40]).toBe('[log] line 99');
  const cursor3 = Number(/next cursor: (\d+)/.exec(many)![1]);

  await callTool(page, 'run_js', { code: 'for (let i = 0; i < 10; i++) console.log(String(i).repeat(900))' });
  const wide = textOf(await callTool(page, 'preview_logs', { cursor: cursor3 }));
  const body = wide.split('\n').filter((l) => l.startsWith('[log]'));
  expect(body.join('\n').length).toBeLessThanOrEqual(3_000);
  expect(body.at(-1)).toBe('[log] ' + '9'.repeat(900));
  expect(body).toHaveLength(3);
  await page.close();
});

test('(4) run_js returns what it printed; while(true){} is stopped at 3 s and the next run_js works', async () => {
  const page = await openPreviewHarness(context, env.server.url);
  await writeProject(page, {
    'index.html': '<title>Counter</title><p id="n">7</p><script type="module">import { add } from "./math.js"; window.sum = add(2, 3);</script>',
    'math.js': 'export const add = (a, b) => a + b;',
  });
  await callTool(page, 'serve');
  const printed = await callTool(page, 'run_js', {
    code: 'import { add } from "./math.js";\nconsole.log(document.title, document.getElementById("n").textContent, add(1, 2), window.sum);\nconsole.warn({ a: [1, 2] });',
  });
  expect(printed).toEqual({ ok: true, text: 'Counter 7 3 5\n[warn] {"a":[1,2]}' });

  const thrown = await callTool(page, 'run_js', { code: 'console.log("before"); null.x;' });
  expect(thrown.ok).toBe(false);
  expect(textOf(thrown)).toContain("run_js failed: TypeError: Cannot read properties of null (reading 'x')");
  expect(textOf(thrown)).toContain('before');

  const started = Date.now();
  const pending = page.evaluate(`window.pv.tool('run_js', { code: 'while (true) {}' })`) as Promise<{ ok: boolean; error?: string }>;
  await new Promise((r) => setTimeout(r, 1000));
  const t0 = Date.now();
  expect(await page.evaluate('1 + 1')).toBe(2); // the host page is not frozen by the loop
  expect(Date.now() - t0).toBeLessThan(1000);
  const looped = await pending;
  const elapsed = Date.now() - started;
  expect(looped.ok).toBe(false);
  expect(looped.error).toContain('run_js stopped after 3 s');
  expect(elapsed).toBeGreaterThanOrEqual(2900);
  expect(elapsed).toBeLessThan(8000);

  const after = await callTool(page, 'run_js', { code: 'console.log("alive", document.getElementById("n").textContent)' });
  expect(after).toEqual({ ok: true, text: 'alive 7' });
  await page.close();
});

test('(5) the sandbox cannot reach the host: IndexedDB, localStorage (the page gets its own), cookies, DOM, forged bridge messages', async () => {
  const page = await openPreviewHarness(context, env.server.url);
  await page.evaluate(`(async () => {
    localStorage.setItem('secret', 'host-local');
    document.cookie = 'secret=host-cookie; path=/';
    const div = document.createElement('div'); div.id = 'host-secret'; div.textContent = 'host-dom'; document.body.append(div);
    await new Promise((resolve, reject) => {
      const req = indexedDB.open('host-db', 1);
      req.onupgradeneeded = () => req.result.createObjectStore('s');
      req.onsuccess = () => { const tx = req.result.transaction('s', 'readwrite'); tx.objectStore('s').put('host-idb', 'k'); tx.oncomplete = resolve; tx.onerror = reject; };
      req.onerror = reject;
    });
  })()`);
  await writeProject(page, {
    'index.html': '<script src="evil.js"></script>',
    'evil.js': `const attempt = (name, fn) => {
  try {
    const got = fn();
    if (got && typeof got.then === 'function') {
      got.then((v) => console.log('isolation ' + name + ': READ ' + v), (e) => console.log('isolation ' + name + ': blocked ' + e.name));
    } else console.log('isolation ' + name + ': READ ' + got);
  } catch (e) { console.log('isolation ' + name + ': blocked ' + e.name); }
};
// The page's own localStorage (the preview's, kept per port): empty, never the host's.
attempt('localStorage', () => localStorage.getItem('secret'));
attempt('localStorage write', () => { localStorage.setItem('secret', 'page-local'); return "kept as the page's own " + localStorage.getItem('secret'); });
attempt('parent localStorage', () => parent.localStorage.getItem('secret'));
attempt('cookie', () => document.cookie);
attempt('parent DOM', () => parent.document.getElementById('host-secret').textContent);
attempt('top DOM', () => top.document.body.innerHTML);
attempt('top navigation', () => { top.location.href = 'https://example.invalid/'; return 'navigated'; });
attempt('popup', () => { const w = window.open('https://example.invalid/'); if (!w) throw new TypeError('no window'); return 'opened'; });
attempt('indexedDB', () => new Promise((resolve, reject) => {
  const req = indexedDB.open('host-db');
  req.onsuccess = () => resolve(req.result.objectStoreNames.length);
  req.onerror = () => reject(req.error);
}));
// Forged bridge traffic: a second hello, and raw log messages posted to the host window.
parent.postMessage({ t: 'pv-hello', token: 'guess' }, '*');
parent.postMessage({ t: 'log', level: 'error', source: 'console', text: 'FORGED', run: 0 }, '*');
parent.postMessage({ t: 'run-done', run: 1, ok: true }, '*');`,
  });
  await callTool(page, 'serve');
  await new Promise((r) => setTimeout(r, 300));
  const logs = textOf(await callTool(page, 'preview_logs'));
  const results = Object.fromEntries(logs.split('\n').filter((l) => l.startsWith('[log] isolation ')).map((l) => {
    const m = /^\[log\] isolation (.+?): (.*)$/.exec(l)!;
    return [m[1], m[2]];
  }));
  expect(Object.keys(results).sort()).toEqual(['cookie', 'indexedDB', 'localStorage', 'localStorage write', 'parent DOM', 'parent localStorage', 'popup', 'top DOM', 'top navigation']);
  const { localStorage: own, 'localStorage write': write, ...reachingOut } = results;
  expect(own).toBe('READ null');
  expect(write).toBe('READ kept as the page\'s own page-local');
  for (const [name, outcome] of Object.entries(reachingOut)) {
    expect(outcome, name).toMatch(/^blocked (SecurityError|TypeError)$/);
  }
  expect(logs).not.toContain('FORGED');
  expect(logs).not.toContain('host-');
  await expect.poll(() => page.evaluate(`window.pv.host.storage.area(5173, 'local').get('secret')`)).toBe('page-local');
  // The host's data is intact and the host still owns exactly one channel to the frame, which works.
  expect(await page.evaluate(`localStorage.getItem('secret')`)).toBe('host-local');
  expect(page.url()).toBe(`${env.server.url}/harness/preview.html`);
  expect(context.pages()).toHaveLength(1);
  expect(await callTool(page, 'run_js', { code: 'console.log("still bridged")' })).toEqual({ ok: true, text: 'still bridged' });
  expect(await page.evaluate(`window.pv.host.log.since(0).some((l) => l.text.includes('FORGED'))`)).toBe(false);
  await page.close();
});
