// Cross-origin isolation (issue 29): `npm start`'s server sends COOP same-origin + COEP credentialless
// (server/isolation.ts), so the page has SharedArrayBuffer (the WASM engine's threads), and what the
// app needs still works in an isolated page: the sandboxed preview serves a page, a model file on another
// origin (a Range server sending CORS + CORP, as a model host must) is read by Range, and a worker shares memory.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { newDeviceContext, useServerAndBrowser } from './helpers/browser.ts';
import { callTool, openPreviewHarness, writeProject } from './helpers/preview-page.ts';
import { startRangeServer, type RangeServer } from '../test/helpers/range-server.ts';
import { tinyModelDir } from '../test/helpers/tiny-model.ts';
import { startServer } from '../server/app.ts';
import { ev, openRoomPage } from './helpers/room-page.ts';

const env = useServerAndBrowser();
let models: RangeServer;
const bytes = Uint8Array.from({ length: 4096 }, (_, i) => (i * 31) & 255);

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pooled-iso-'));
  writeFileSync(path.join(dir, 'weights.bin'), bytes);
  models = await startRangeServer(dir, { crossOrigin: true });
});
afterAll(async () => { await models?.close(); });

test('the app page is cross-origin isolated: headers sent, crossOriginIsolated, SharedArrayBuffer shared with a worker', async () => {
  const context = await newDeviceContext(env.browser);
  try {
    const page = await context.newPage();
    const res = await page.goto(`${env.server.url}/`);
    expect(res!.headers()['cross-origin-opener-policy']).toBe('same-origin');
    expect(res!.headers()['cross-origin-embedder-policy']).toBe('credentialless');
    expect(await page.evaluate('crossOriginIsolated')).toBe(true);
    // A worker writes into memory the page shares with it (what the WASM thread pool relies on).
    const seen = await page.evaluate(`(async () => {
      const sab = new SharedArrayBuffer(8);
      const src = 'onmessage = (e) => { const a = new Int32Array(e.data); Atomics.store(a, 1, 42); Atomics.notify(a, 1); postMessage(0); }';
      const w = new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })));
      await new Promise((r) => { w.onmessage = r; w.postMessage(sab); });
      w.terminate();
      return Atomics.load(new Int32Array(sab), 1);
    })()`);
    expect(seen).toBe(42);
  } finally {
    await context.close();
  }
});

test('in the isolated page a model file on another origin is read by Range (CORS + CORP from the model host)', async () => {
  const context = await newDeviceContext(env.browser);
  try {
    const page = await context.newPage();
    await page.goto(`${env.server.url}/`);
    const got = await page.evaluate(`(async () => {
      const r = await fetch(${JSON.stringify(`${models.url}/weights.bin`)}, { headers: { Range: 'bytes=100-163' }, mode: 'cors' });
      return { status: r.status, range: r.headers.get('content-range'), body: [...new Uint8Array(await r.arrayBuffer())] };
    })()`) as { status: number; range: string; body: number[] };
    expect(got.status).toBe(206);
    expect(got.range).toBe('bytes 100-163/4096');
    expect(got.body).toEqual([...bytes.subarray(100, 164)]);
  } finally {
    await context.close();
  }
});

test('the sandboxed preview still serves a working page inside the isolated app page', async () => {
  const context = await newDeviceContext(env.browser, { width: 900, height: 700 });
  try {
    const page = await openPreviewHarness(context, env.server.url);
    expect(await page.evaluate('crossOriginIsolated')).toBe(true);
    await writeProject(page, {
      'site/index.html': '<!doctype html><h1 id="t">…</h1><script type="module" src="main.js"></script>',
      'site/main.js': "import { word } from './word.js';\ndocument.getElementById('t').textContent = word + ' ' + (await (await fetch('n.json')).json()).n;",
      'site/word.js': "export const word = 'isolated';",
      'site/n.json': '{"n": 7}',
    });
    const served = await callTool(page, 'serve', { path: 'site' });
    expect(served.ok, served.error).toBe(true);
    await expect.poll(() => page.frames().some((f) => f.url() === 'about:srcdoc'), { timeout: 10_000 }).toBe(true);
    const frame = page.frames().find((f) => f.url() === 'about:srcdoc')!;
    await expect.poll(() => frame.textContent('#t'), { timeout: 10_000 }).toBe('isolated 7');
  } finally {
    await context.close();
  }
});

test('served without the headers (a static host that sends none) the page is not isolated, and a WASM device says it runs single-threaded', async () => {
  const plain = await startServer({ port: 0, isolated: false, extraStatic: { '/models/tiny': await tinyModelDir({ layers: 4 }) } });
  const context = await newDeviceContext(env.browser);
  try {
    const page = await openRoomPage(context, `${plain.url}/harness/room.html?role=host&model=/models/tiny&engine=wasm&ctx=256&speed=1`);
    expect(await page.evaluate('crossOriginIsolated')).toBe(false);
    const engines = await ev<{ engine: string; label: string }[]>(page, 'window.__room.engines()');
    expect(engines).toMatchObject([{ engine: 'wasm', label: 'CPU · 1 thread (page not cross-origin isolated) · relaxed SIMD' }]);
  } finally {
    await context.close();
    await plain.close();
  }
});
