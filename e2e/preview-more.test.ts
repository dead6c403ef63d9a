// Preview behaviour beyond issue 5's five acceptance lines: TypeScript/JSX, restore after a reload,
// live fetch of edited files, the pane's address and console.
import { beforeAll, expect, test } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { newDeviceContext, useServerAndBrowser } from './helpers/browser.ts';
import { callTool, openPreviewHarness, textOf, writeProject } from './helpers/preview-page.ts';

const env = useServerAndBrowser();
let context: BrowserContext;

beforeAll(async () => {
  context = await newDeviceContext(env.browser, { width: 900, height: 700 });
});

test('TypeScript and JSX are bundled when imported; a type-syntax error names file:line:col', async () => {
  const page = await openPreviewHarness(context, env.server.url);
  await writeProject(page, {
    'index.html': '<div id="root"></div><script type="module" src="main.tsx"></script>',
    'main.tsx': `import { h } from './h';\nimport { total } from './math';\nconst el: HTMLElement = <p id="p" title="t">{'sum ' + total([1, 2, 3])}</p>;\ndocument.getElementById('root')!.append(el);\nconsole.log('rendered', el.outerHTML);`,
    'h.ts': `/** tiny JSX factory */\nexport function h(tag: string, props: Record<string, string> | null, ...kids: string[]): HTMLElement {\n  const el = document.createElement(tag);\n  for (const [k, v] of Object.entries(props ?? {})) el.setAttribute(k, v);\n  el.append(...kids);\n  return el;\n}`,
    'math.ts': 'export const total = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);',
    'bad/index.html': '<script type="module" src="oops.ts"></script>',
    'bad/oops.ts': 'const ok: number = 1;\nconst broken: = 2;\n',
  });
  await page.evaluate(`document.body.dataset.jsx = 'h'`);
  // esbuild's default factory is React.createElement; a file can name its own with a pragma.
  await writeProject(page, { 'main.tsx': `/** @jsx h */\n` + (await page.evaluate(`window.pv.files.readText('main.tsx')`) as string) });
  const served = textOf(await callTool(page, 'serve'));
  expect(served).toMatch(/loaded in \d+ ms, no errors\./);
  expect(textOf(await callTool(page, 'preview_logs'))).toContain('[log] rendered <p id="p" title="t">sum 6</p>');
  const bad = textOf(await callTool(page, 'serve', { path: 'bad' }));
  expect(bad).toMatch(/bad\/oops\.ts:2:15 /);
  await page.close();
});

test('fetch() sees the current files; served ports come back on a new host (session restore)', async () => {
  const page = await openPreviewHarness(context, env.server.url);
  await writeProject(page, {
    'index.html': '<p>root</p>',
    'notes.txt': 'v1',
    'docs/index.html': '<h1 id="d">docs</h1>',
    'docs/about.html': '<h1 id="a">about</h1>',
  });
  await callTool(page, 'serve');
  expect(textOf(await callTool(page, 'run_js', { code: 'console.log(await (await fetch("notes.txt")).text())' }))).toBe('v1');
  await writeProject(page, { 'notes.txt': 'v2' });
  expect(textOf(await callTool(page, 'run_js', { code: 'console.log(await (await fetch("/notes.txt")).text())' }))).toBe('v2');
  const xhr = `await new Promise((done) => { const x = new XMLHttpRequest(); x.open('GET', 'notes.txt');
    x.onload = () => { console.log(x.status, x.responseText); done(); }; x.send(); });
  await new Promise((done) => { const x = new XMLHttpRequest(); x.open('GET', 'nope.json'); x.onload = () => { console.log(x.status); done(); }; x.send(); });`;
  expect(textOf(await callTool(page, 'run_js', { code: xhr }))).toBe('200 v2\n[error] GET /nope.json 404 (Not Found)\n404');
  expect(textOf(await callTool(page, 'serve', { path: 'docs/about.html' }))).toMatch(/^Served docs\/about\.html on :5174\//);
  expect(await page.getByTestId('preview-address').textContent()).toBe(':5174/');

  // A new host (the app after a reload) restores the session's records on the same ports.
  const restored = await page.evaluate(`(async () => {
    const h = new window.pv.PreviewHost({ files: window.pv.files });
    document.body.append(h.element);
    await h.restore([{ port: 5173, path: '' }, { port: 5174, path: 'docs/about.html' }, { port: 5175, path: 'gone' }]);
    const a = await h.runJs('console.log(document.body.textContent)', 5173);
    const b = await h.runJs('console.log(document.getElementById("a").textContent)', 5174);
    return { served: await h.served(), a: a.output, b: b.output, warn: h.log.since(0).filter((l) => l.level === 'warn').map((l) => l.text) };
  })()`);
  expect(restored).toEqual({
    served: [{ port: 5173, folder: '', page: 'index.html' }, { port: 5174, folder: 'docs', page: 'about.html' }],
    a: ['root'], b: ['about'],
    warn: ['could not serve :5175 again: cannot serve "gone": there is no such folder in the project'],
  });
  await page.close();
});

test('the pane shows the address, switches ports, and lists console lines accessibly', async () => {
  const page = await openPreviewHarness(context, env.server.url);
  await writeProject(page, { 'index.html': '<script>console.warn("careful")</script>', 'b/index.html': '<script>console.error("bad")</script>' });
  await callTool(page, 'serve');
  await callTool(page, 'serve', { path: 'b' });
  await expect.poll(() => page.getByTestId('preview-console').textContent()).toContain(':5174 bad');
  expect(await page.getByRole('log').count()).toBe(1);
  await page.getByRole('button', { name: ':5173' }).click();
  // The pane refreshes once per animation frame (a flooding page cannot make it re-render per line).
  await expect.poll(() => page.getByTestId('preview-address').textContent()).toBe(':5173/');
  expect(await page.getByRole('button', { name: ':5173' }).getAttribute('aria-pressed')).toBe('true');
  await page.getByRole('button', { name: 'Clear the console' }).click();
  await expect.poll(() => page.getByTestId('preview-console').locator('li').count()).toBe(0);
  await callTool(page, 'run_js', { code: 'console.log("after clear")', port: 5173 });
  await expect.poll(() => page.getByTestId('preview-console').locator('li').allTextContents()).toEqual([':5173 after clear']);
  await page.close();
});

test('links between pages of the folder open in place; #fragments scroll instead of leaving', async () => {
  const page = await openPreviewHarness(context, env.server.url);
  await writeProject(page, {
    'index.html': '<a id="go" href="about.html">About</a><div style="height:3000px"></div><h2 id="end">end</h2><a id="jump" href="#end">to end</a>',
    'about.html': '<h1 id="t">About page</h1><a id="back" href="./">home</a><a id="lost" href="nowhere.html">lost</a>',
  });
  await callTool(page, 'serve');
  const frame = () => page.frames().filter((f) => f !== page.mainFrame() && !f.isDetached()).at(-1)!;
  await frame().evaluate(`document.getElementById('jump').click()`);
  await expect.poll(() => frame().evaluate('window.scrollY')).toBeGreaterThan(1000);
  // Clicks that navigate run after evaluate returns: the frame they are in goes away.
  await frame().evaluate(`setTimeout(() => document.getElementById('go').click())`);
  await expect.poll(() => frame().evaluate(`document.getElementById('t')?.textContent ?? ''`).catch(() => '')).toBe('About page');
  expect(await page.evaluate('window.pv.host.served()')).toEqual([{ port: 5173, folder: '', page: 'about.html' }]);
  await frame().evaluate(`setTimeout(() => document.getElementById('lost').click())`);
  await expect.poll(async () => textOf(await callTool(page, 'preview_logs'))).toContain('[error] 404 Not Found: nowhere.html (the page itself)');
  await page.close();
});

test('all frames share one sandbox process: a loop in one port is recovered for every port', async () => {
  const page = await openPreviewHarness(context, env.server.url);
  await writeProject(page, {
    'a/index.html': '<p id="a">a</p>',
    'b/index.html': '<p id="b">b</p>',
    'hang/index.html': '<script>while (true) {}</script>',
  });
  await callTool(page, 'serve', { path: 'a' });
  await callTool(page, 'serve', { path: 'b' });
  // run_js looping on :5173 stalls :5174 too; the timeout restarts both.
  expect(textOf(await callTool(page, 'run_js', { code: 'while (true) {}', port: 5173 }))).toContain('stopped after 3 s');
  expect(await callTool(page, 'run_js', { code: 'console.log(document.body.textContent)', port: 5174 })).toEqual({ ok: true, text: 'b' });
  // A page that loops while loading: its serve says so, and the next serve drops it and works.
  expect(textOf(await callTool(page, 'serve', { path: 'hang' }))).toMatch(/^Served hang\/ on :5175\/ — still loading after 2\.\d s, no errors yet/);
  const again = textOf(await callTool(page, 'serve', { path: 'a' }));
  expect(again).toMatch(/^Reloaded a\/ on :5173\/ — loaded in \d+ ms/);
  expect(await callTool(page, 'run_js', { code: 'console.log(document.body.textContent)', port: 5174 })).toEqual({ ok: true, text: 'b' });
  expect((await page.evaluate('window.pv.host.served()') as { port: number }[]).map((p) => p.port)).toEqual([5173, 5174]);
  expect(textOf(await callTool(page, 'preview_logs'))).toContain('[warn] stopped :5175/ — its page never finished loading');
  await page.close();
});
