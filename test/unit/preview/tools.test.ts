import { describe, expect, test } from 'vitest';
import { createPreviewTools } from '../../../src/preview/tools.ts';
import { LogBuffer } from '../../../src/preview/log-buffer.ts';
import { PreviewError, type PreviewApi, type RunJsResult, type ServeResult, type ServedPage } from '../../../src/preview/types.ts';

/** A scripted PreviewApi: what the tools make of each answer is what is under test. */
function fakePreview(over: Partial<PreviewApi> = {}, serveResult?: Partial<ServeResult>, run?: RunJsResult) {
  const log = new LogBuffer();
  const calls: unknown[][] = [];
  const api: PreviewApi = {
    async serve(folder = '') {
      calls.push(['serve', folder]);
      return { port: 5173, folder, page: 'index.html', loaded: true, ms: 120, errors: [], reloaded: false, ...serveResult };
    },
    async logs(cursor = 0) { calls.push(['logs', cursor]); return log.read(cursor); },
    async runJs(code, port) { calls.push(['runJs', code, port]); return run ?? { status: 'done', output: ['hi'], ms: 5 }; },
    async served(): Promise<ServedPage[]> { return []; },
    async restore() {},
    ...over,
  };
  const [serve, logs, runJs] = createPreviewTools(api);
  return { api, log, calls, serve: serve!, logs: logs!, runJs: runJs! };
}

describe('serve', () => {
  test('uses the schema names and reports a clean load with a page report for the agent loop', async () => {
    const f = fakePreview();
    expect([f.serve.schema.name, f.logs.schema.name, f.runJs.schema.name]).toEqual(['serve', 'preview_logs', 'run_js']);
    expect(await f.serve.run({}, {})).toEqual({
      ok: true, text: 'Served / on :5173/ — loaded in 120 ms, no errors.', page: { port: 5173, path: '', loaded: true, errors: [] },
      repeatText: 'Served / on :5173/ — loaded in 0 ms, no errors.', // the repeat rules compare it without the load time
    });
    expect(f.calls).toEqual([['serve', '']]);
  });

  test('first errors: at most 8 lines, one line each, the rest pointed at preview_logs', async () => {
    const errors = Array.from({ length: 11 }, (_, i) => `main.js:${i + 1}:1 Uncaught Error: e${i}\n    at stack line`);
    const f = fakePreview({}, { folder: 'app', errors, reloaded: true, ms: 2000, loaded: false });
    const r = await f.serve.run({ path: 'app' }, {});
    expect(r.ok).toBe(true);
    const lines = (r as { text: string }).text.split('\n');
    expect(lines[0]).toBe('Reloaded app/ on :5173/ — still loading after 2.0 s, 11 errors:');
    expect(lines.slice(1, 9)).toEqual(Array.from({ length: 8 }, (_, i) => `main.js:${i + 1}:1 Uncaught Error: e${i}`));
    expect(lines[9]).toBe('(3 more: call preview_logs)');
    expect(lines).toHaveLength(10);
    expect(r.page).toEqual({ port: 5173, path: 'app', loaded: false, errors });
  });

  test('a PreviewError is the tool error, as is anything else, by name', async () => {
    const f = fakePreview({ serve: async () => { throw new PreviewError('cannot serve "x": there is no such folder in the project'); } });
    expect(await f.serve.run({ path: 'x' }, {})).toEqual({ ok: false, error: 'cannot serve "x": there is no such folder in the project' });
    const g = fakePreview({ serve: async () => { throw new TypeError('boom'); } });
    expect(await g.serve.run({}, {})).toEqual({ ok: false, error: 'TypeError: boom' });
  });
});

describe('preview_logs', () => {
  test('new lines since the cursor and the next cursor; nothing new says so', async () => {
    const f = fakePreview();
    f.log.push({ port: 5173, level: 'log', source: 'console', text: 'a' });
    f.log.push({ port: 5173, level: 'error', source: 'error', text: 'main.js:1:1 Uncaught Error: b' });
    expect(await f.logs.run({}, {})).toEqual({ ok: true, text: '[log] a\n[error] main.js:1:1 Uncaught Error: b\nnext cursor: 3' });
    expect(await f.logs.run({ cursor: 3 }, {})).toEqual({ ok: true, text: 'No new console output.\nnext cursor: 3' });
    for (let i = 0; i < 45; i++) f.log.push({ port: 5173, level: 'log', source: 'console', text: `n${i}` });
    const many = (await f.logs.run({ cursor: 3 }, {})) as { text: string };
    expect(many.text.split('\n')[0]).toBe('(5 older lines since cursor 3 not shown)');
    expect(many.text.split('\n')).toHaveLength(42);
  });

  test('a bad cursor is refused', async () => {
    const f = fakePreview();
    expect(await f.logs.run({ cursor: -1 }, {})).toEqual({ ok: false, error: 'cursor must be a whole number ≥ 0 (got -1)' });
    expect((await f.logs.run({ cursor: 'x' }, {})).ok).toBe(false);
  });
});

describe('run_js', () => {
  test('returns what was printed; passes the port', async () => {
    const f = fakePreview();
    expect(await f.runJs.run({ code: 'console.log("hi")', port: 5174 }, {})).toEqual({ ok: true, text: 'hi' });
    expect(f.calls.at(-1)).toEqual(['runJs', 'console.log("hi")', 5174]);
  });
  test('errors and timeouts are failed calls that still show the output', async () => {
    const err = fakePreview({}, {}, { status: 'error', output: ['before'], error: 'TypeError: x is null', ms: 3 });
    expect(await err.runJs.run({ code: 'x.y' }, {})).toEqual({ ok: false, error: 'run_js failed: TypeError: x is null', text: 'run_js failed: TypeError: x is null\nbefore' });
    const slow = fakePreview({}, {}, { status: 'timeout', output: [], ms: 3000 });
    const r = await slow.runJs.run({ code: 'while(true){}' }, {});
    expect(r).toEqual({
      ok: false, error: 'run_js stopped after 3 s (an endless loop?); the page was reloaded.',
      text: 'run_js stopped after 3 s (an endless loop?); the page was reloaded.\n(nothing printed)',
    });
  });
  test('missing code or a bad port is refused before anything runs', async () => {
    const f = fakePreview();
    expect(await f.runJs.run({}, {})).toEqual({ ok: false, error: 'run_js needs code: a JavaScript module to run' });
    expect((await f.runJs.run({ code: '1', port: 'abc' }, {})).ok).toBe(false);
    expect(f.calls).toEqual([]);
  });
});
