// Issue 27, items 11–12: eval pages are written by a model, so each can be hostile. A page stuck in an
// endless loop fails its task with the reason, within the check's deadline, and the run goes on to the
// next task; a page that reaches for another loopback service (a llama.cpp server answers
// `Access-Control-Allow-Origin: *`) cannot read it; and the Chromium that runs these pages has its own
// sandbox on. Each task here runs through runEval as the real ones do (the scripted model writes the
// files through the agent's tools, the headless preview serves them, the check opens them).
import http from 'node:http';
import { expect, test } from 'vitest';
import { EVAL_TASKS } from '../eval/tasks/index.ts';
import { replayModel } from '../eval/model.ts';
import { runEval } from '../eval/run.ts';
import { must, type EvalTask } from '../eval/task.ts';
import { launchSandboxedChromium } from '../src/preview/chromium.ts';

const counter = EVAL_TASKS.find((t) => t.id === 'counter')!;

/** A page whose button spins forever; its check presses the button from inside the page (page.evaluate). */
const spinning: EvalTask = {
  id: 'spinning',
  title: 'A page that loops forever when its button is pressed',
  request: 'Make a page with a button with id "go".',
  solution: {
    'index.html': '<!doctype html>\n<html><body><button id="go">Go</button><script src="app.js"></script></body></html>\n',
    'app.js': "document.getElementById('go').addEventListener('click', () => { for (;;) {} });\n",
  },
  broken: [],
  async check(page, url) {
    await page.goto(url);
    await page.evaluate("document.getElementById('go').click()"); // never returns: the renderer is stuck
  },
};

test('item 11: a page that busy-loops fails its task with the reason within the check deadline, and the next task still runs and passes', async () => {
  // 20 s per check: a counter check takes < 2 s here, but this is a busy 2-core box.
  const checkSeconds = 20;
  const t0 = Date.now();
  const rows = await runEval({ tasks: [spinning, counter], model: await replayModel(), checkSeconds });
  const seconds = (Date.now() - t0) / 1000;
  expect(rows.map((r) => [r.task, r.variant, r.passed])).toEqual([['spinning', 'solution', false], ['counter', 'solution', true], ['counter', 'broken: the minus button adds', false]]);
  expect(rows[0]!.reason).toBe('done'); // the agent finished; the check is what hung
  expect(rows[0]!.detail).toBe(`the check did not finish within ${checkSeconds} s: the page is stuck (an endless loop?), so its tab was closed`);
  expect(rows[2]!.detail).toMatch(/after \+, \+, \+, − the count shows "4", not 2/);
  // Measured: 56–98 s for the three runs on a loaded 2-core box (each agent run ≈ 10–25 s, plus the 20 s deadline).
  console.log(`[eval hostile] spinning page + counter (2 variants): ${seconds.toFixed(1)} s`);
}, 300_000); // the hung check is given up at checkSeconds; without that this test never ends

test('item 12: a hostile eval page cannot read another 127.0.0.1 server that allows any origin (fetch, POST, XHR, WebSocket, beacon, form); its own origin still works', async () => {
  // The "other loopback service": answers everything with a secret and `Access-Control-Allow-Origin: *`.
  const hits: string[] = [];
  const secretServer = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(200, {
      'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Headers': '*', 'Access-Control-Allow-Methods': '*',
      'Content-Type': 'text/plain',
    });
    res.end('SECRET-27');
  });
  await new Promise<void>((r) => secretServer.listen(0, '127.0.0.1', () => r()));
  const other = `http://127.0.0.1:${(secretServer.address() as { port: number }).port}`;
  let seen = '';
  const hostile: EvalTask = {
    id: 'hostile-page',
    title: 'A page that reads another loopback service',
    request: 'Make a page.',
    solution: {
      'index.html': '<!doctype html>\n<html><body><pre id="out"></pre><form id="f" method="post" action="' + other + '/form"></form><script src="app.js"></script></body></html>\n',
      'own.txt': 'own origin works\n',
      'app.js': `const other = ${JSON.stringify(other)};
const tries = {
  get: () => fetch(other + '/get').then((r) => r.text()),
  post: () => fetch(other + '/v1/chat/completions', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"messages":[]}' }).then((r) => r.text()),
  noCors: () => fetch(other + '/no-cors', { mode: 'no-cors' }).then((r) => 'sent (opaque ' + r.type + ')'),
  xhr: () => new Promise((ok, no) => { const x = new XMLHttpRequest(); x.open('GET', other + '/xhr'); x.onload = () => ok(x.responseText); x.onerror = () => no(new Error('xhr error')); x.send(); }),
  ws: () => new Promise((ok, no) => { try { const w = new WebSocket(other.replace('http', 'ws') + '/ws'); w.onopen = () => ok('open'); w.onerror = () => no(new Error('ws error')); } catch (e) { no(e); } }),
  beacon: () => Promise.resolve(navigator.sendBeacon(other + '/beacon', 'x') ? 'queued' : 'refused'),
  own: () => fetch('own.txt').then((r) => r.text()),
};
(async () => {
  const out = {};
  for (const [name, run] of Object.entries(tries)) {
    out[name] = await Promise.race([run(), new Promise((r) => setTimeout(() => r('no answer in 3 s'), 3000))]).then((v) => String(v).trim(), (e) => 'blocked: ' + (e && e.name));
  }
  try { document.getElementById('f').submit(); } catch (e) { out.form = 'blocked: ' + e.name; }
  document.getElementById('out').textContent = JSON.stringify(out);
})();
`,
    },
    broken: [],
    async check(page, url) {
      await page.goto(url);
      await page.waitForFunction("document.getElementById('out') && document.getElementById('out').textContent.length > 0", undefined, { timeout: 20_000 });
      seen = (await page.textContent('#out')) ?? '';
      await page.waitForTimeout(500); // a form post, if one were let through, reaches the server
      must(!seen.includes('SECRET'), `the page read the other server: ${seen}`);
    },
  };
  try {
    const rows = await runEval({ tasks: [hostile], model: await replayModel(), checkSeconds: 45 });
    const out = JSON.parse(seen) as Record<string, string>;
    console.log(`[eval hostile] what the page got: ${seen}; requests the other server saw: ${JSON.stringify(hits)}`);
    expect(out.own).toBe('own origin works');                // its own origin is not blocked
    for (const k of ['get', 'post', 'noCors', 'xhr']) expect(out[k], k).toMatch(/^blocked: (TypeError|Error)$/); // no-cors: not even sent blind
    expect(out.ws).not.toBe('open');                          // it errs or never opens (measured: no answer)
    // Nothing reached it at all, the blind ones included (a beacon is "queued" and dropped later, the
    // form's post is refused): every request was stopped before it was sent.
    expect(hits).toEqual([]);
    expect(rows).toMatchObject([{ task: 'hostile-page', passed: true }]);
  } finally {
    await new Promise<void>((r) => secretServer.close(() => r()));
  }
}, 240_000);

test("item 12: the Chromium that runs model-written pages has its own sandbox on (chrome://sandbox says so), also when we are root", async () => {
  const browser = await launchSandboxedChromium();
  try {
    const page = await browser.newPage();
    await page.goto('chrome://sandbox');
    const text = ((await page.textContent('body')) ?? '').replace(/\s+/g, ' ');
    console.log(`[eval hostile] chrome://sandbox: ${text.trim().slice(0, 200)}`);
    expect(text).toMatch(/Layer 1 Sandbox ?Namespace/);
    expect(text).toMatch(/Seccomp-BPF sandbox ?Yes/);
    expect(text).toMatch(/You are adequately sandboxed/);
  } finally {
    await browser.close();
  }
}, 60_000);
