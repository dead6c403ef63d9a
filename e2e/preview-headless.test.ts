// The agent CLI's preview: the same three tools from Node, driving headless Chromium over a real folder.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NodeFolderFiles } from '../src/agent/files/node-folder.ts';
import { HeadlessPreview } from '../src/preview/headless.ts';
import { createPreviewTools } from '../src/preview/tools.ts';
import type { Tool } from '../src/agent/tool-types.ts';
import { artifactDir } from './helpers/browser.ts';
import { call, harness, notes, results } from '../test/unit/agent/harness.ts';

let preview: HeadlessPreview;
let tools: Record<string, Tool>;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'pooled-headless-'));
  mkdirSync(path.join(dir, 'web'));
  writeFileSync(path.join(dir, 'web/index.html'), '<!doctype html><title>Folder app</title><h1 id="h">…</h1><script type="module" src="app.ts"></script>');
  writeFileSync(path.join(dir, 'web/app.ts'), `import { label } from './label';\nconst h = document.getElementById('h') as HTMLElement;\nh.textContent = label(3);\nconsole.log('typed', h.textContent);`);
  writeFileSync(path.join(dir, 'web/label.ts'), `export function label(n: number): string { return \`\${n} items\`; }`);
  preview = await HeadlessPreview.start({ files: await NodeFolderFiles.open(dir) });
  tools = Object.fromEntries(createPreviewTools(preview).map((t) => [t.schema.name, t]));
});
afterAll(async () => {
  await preview?.close();
});

test('serve, preview_logs and run_js work from Node on a folder on disk (TypeScript bundled)', async () => {
  const served = await tools.serve!.run({ path: 'web' }, {});
  expect(served).toMatchObject({ ok: true, page: { port: 5173, path: 'web', loaded: true, errors: [] } });
  expect((served as { text: string }).text).toMatch(/^Served web\/ on :5173\/ — loaded in \d+ ms, no errors\.$/);
  expect(await tools.preview_logs!.run({}, {})).toEqual({ ok: true, text: '[log] typed 3 items\nnext cursor: 2' });
  expect(await tools.run_js!.run({ code: 'import { label } from "./label.ts";\nconsole.log(document.title, label(7))' }, {})).toEqual({ ok: true, text: 'Folder app 7 items' });
  // Edits on disk are what the next serve shows.
  writeFileSync(path.join(dir, 'web/label.ts'), `export function label(n: number): string { return n + ' things'; }`);
  expect((await tools.serve!.run({ path: 'web' }, {})).ok).toBe(true);
  expect(await tools.run_js!.run({ code: 'console.log(document.getElementById("h").textContent)' }, {})).toEqual({ ok: true, text: '3 things' });
  expect(await preview.served()).toEqual([{ port: 5173, folder: 'web', page: 'index.html' }]);
  mkdirSync(artifactDir(), { recursive: true });
  await preview.screenshot(path.join(artifactDir(), 'preview-headless.png'));
});

test('a folder that is not there is a clear tool error', async () => {
  expect(await tools.serve!.run({ path: 'nope' }, {})).toEqual({ ok: false, error: 'cannot serve "nope": there is no such folder in the project' });
});

test('an agent serving the same broken page again and again, nothing changed, ends stuck through the real preview', async () => {
  mkdirSync(path.join(dir, 'broken'));
  writeFileSync(path.join(dir, 'broken/index.html'), '<!doctype html><title>Broken</title><script>document.getElementById("board").textContent = "x";</script>');
  const h = await harness({ replies: [...Array(4).fill(call('serve', { path: 'broken' })), 'unused'], extraTools: [tools.serve!] });
  const out = await h.agent.run('Make the board work');
  const served = results(h.events);
  expect(served).toHaveLength(4);
  for (const text of served) expect(text).toMatch(/^(Served|Reloaded) broken\/ on :\d+\/ — loaded in \d+ ms, 1 error:\n.*Uncaught TypeError/);
  expect(out.reason).toBe('stuck');
  expect(out.stats.steps).toBe(4);
  expect(notes(h.events).at(-1)).toMatch(/^end: stuck: serve broken made no progress 3 steps in a row \(the same result again\)/);
}, 180_000); // four real page loads in Chromium plus the real vocabulary and call grammar (~10 s) on a busy 2-core box

test('issue 27, item 11: a call past its deadline (kept in Node) fails with a named error; the preview restarts and serves again', async () => {
  const own = mkdtempSync(path.join(tmpdir(), 'pooled-headless-'));
  writeFileSync(path.join(own, 'index.html'), '<!doctype html><title>Plain</title><p id="p">plain</p>');
  const quick = await HeadlessPreview.start({ files: await NodeFolderFiles.open(own) });
  try {
    expect((await quick.serve('')).loaded).toBe(true);
    // The page answers after 2.5 s (within run_js's own 3 s), past a call deadline of 1 s: the deadline wins.
    quick.callMs = 1_000;
    const t0 = Date.now();
    const late = await quick.runJs('await new Promise((r) => setTimeout(r, 2500)); console.log("late")').catch((e: Error) => e);
    expect(Date.now() - t0).toBeLessThan(2_400); // the error comes at the deadline; the fresh tab opens meanwhile
    expect(late).toMatchObject({ name: 'HeadlessPreviewError', message: expect.stringMatching(/^the preview did not answer runJs within 1 s \(a page stuck in a loop\?\); it was restarted, so nothing is served now: call serve again$/) });
    quick.callMs = 60_000;
    expect(await quick.served()).toEqual([]); // a fresh harness
    expect((await quick.serve('')).loaded).toBe(true);
    expect(await quick.runJs('console.log(document.getElementById("p").textContent)')).toMatchObject({ status: 'done', output: ['plain'] });
  } finally {
    await quick.close();
  }
}, 120_000); // two Chromium pages and a few calls: ≈10 s here, more on a busy box
