// The OpenAI-compatible backend against servers that misbehave, each a real HTTP server on 127.0.0.1
// that writes its answer by hand: streams that never end (pings, empty events, one byte at a time), a
// redirect to another origin, text after a stop string, malformed events, a server that dies mid-answer.
// Each ends bounded, with a named error or the text a local engine would have given; nothing runs that
// should not. The limits are set short (1.5–2 s) so the clocks' rules run in a test's time, and the
// clocks themselves are also checked on a fake timer.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { OpenAIBackend } from '../../../src/agent/openai-backend.ts';
import { AnswerTimeout, AnswerWatch, type Timers } from '../../../src/agent/openai/answer-watch.ts';
import { RedirectRefused, type ServerInfo } from '../../../src/agent/openai/server.ts';
import { cutAtStop, heldBack } from '../../../src/agent/openai/stop-strings.ts';
import { Agent } from '../../../src/agent/loop.ts';
import { createCallCodec } from '../../../src/agent/call-codec.ts';
import { MemoryFiles } from '../../../src/agent/files/memory.ts';
import { createFileTools } from '../../../src/agent/tools/file-tools.ts';
import { NodeRegexRunner } from '../../../src/agent/tools/regex-runner.ts';
import { ToolRegistry } from '../../../src/agent/tools/registry.ts';
import { loadBundledQwen3Tokenizer } from '../../../src/model/bundled-tokenizer.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import type { BackendRequest } from '../../../src/agent/backend.ts';
import { call } from './harness.ts';

// The first test loads the 151,669-token vocabulary (~10 s on a busy CI); the rest run on 1.5–2 s limits.
vi.setConfig({ testTimeout: 60_000 });

const template = new ChatTemplate(readFileSync(new URL('../../fixtures/chat-templates/qwen3.jinja', import.meta.url), 'utf8'));
const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise<void>((r) => { s.closeAllConnections(); s.close(() => r()); });
});

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void | Promise<void>;

/** A server on 127.0.0.1 whose every POST is answered by `handler`; the bodies it got are recorded (a GET is a 404). */
async function rawServer(handler: Handler): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    if (req.method === 'GET') { res.writeHead(404); res.end(); return; }  // backendAt's warm-up
    let body = '';
    req.on('data', (d: Buffer) => { body += d.toString('utf8'); });
    req.on('end', () => { bodies.push(body); void handler(req, res, body); });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, bodies };
}

const sse = (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' });
const event = (text: string, finish: string | null = null) => `data: ${JSON.stringify({ choices: [{ index: 0, text, finish_reason: finish }] })}\n\n`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function backendAt(url: string, extra: { progressMs?: number; deadlineMs?: number } = {}) {
  const tokenizer = await loadBundledQwen3Tokenizer();
  const files = new MemoryFiles({});
  const tools = new ToolRegistry(createFileTools(files, { regexRunner: new NodeRegexRunner() }));
  const server: ServerInfo = { base: url, kind: 'llama.cpp', models: [], contextSize: 4096 };
  // A first fetch in a fresh worker can take most of a second on a busy machine (undici starts up): done
  // here, outside the answers' short clocks.
  await fetch(`${new URL(url).origin}/warm-up`).then((r) => r.body?.cancel()).catch(() => undefined);
  const backend = new OpenAIBackend({ server, model: 'm', tokenizer, template, tools: tools.schemas(), ...extra });
  return { backend, tokenizer, files, tools };
}

function request(backend: OpenAIBackend, extra: Partial<BackendRequest> = {}): BackendRequest {
  return { prompt: backend.encode(backend.render([{ role: 'user', content: 'hi' }], [])), maxNewTokens: 256, stopTokens: [151645], ...extra };
}

/** Writes until the client goes away (a stream that would never end by itself). */
async function forever(res: http.ServerResponse, every: number, piece: () => string): Promise<void> {
  let open = true;
  res.on('close', () => { open = false; });
  while (open) { res.write(piece()); await sleep(every); }
}

describe('a stream that never ends is ended (27.6)', () => {
  test('pings, empty events and a stream dribbled byte by byte trip the progress rule: an AnswerTimeout naming it', async () => {
    let n = 0;
    const dribble = `${event('a')}`;
    const srv = await rawServer(async (_req, res) => {
      sse(res);
      const kind = n++;
      if (kind === 0) await forever(res, 20, () => ': ping\n\n');
      else if (kind === 1) await forever(res, 20, () => event(''));
      else { let i = 0; await forever(res, 40, () => dribble[i++ % dribble.length]!); }  // ~65 bytes a token: 2.6 s each
    });
    // 1.5 s: room for a busy machine to connect and read the first ping; each case ends in about that.
    const { backend } = await backendAt(srv.url, { progressMs: 1_500, deadlineMs: 60_000 });
    for (const what of ['pings', 'empty events', 'one byte at a time']) {
      const t0 = performance.now();
      const r = await backend.generate(request(backend));
      expect(r.finish, what).toBe('error');
      expect(r.error, what).toBeInstanceOf(AnswerTimeout);
      expect((r.error as AnswerTimeout).rule, what).toBe('progress');
      expect(r.error?.message, what).toMatch(/^the server at http:\/\/127\.0\.0\.1:\d+ sent \d+ reads but no new text for 1\.5 s \(pings, empty events or a stream dribbled byte by byte\)$/);
      expect(performance.now() - t0, what).toBeLessThan(30_000);
    }
  });

  test('a stream that makes progress but never finishes hits the deadline, the text so far kept', async () => {
    const srv = await rawServer(async (_req, res) => { sse(res); await forever(res, 40, () => event('x')); });
    // The progress rule is set past the deadline, so only the deadline can end it.
    const { backend } = await backendAt(srv.url, { progressMs: 10_000, deadlineMs: 2_000 });
    const r = await backend.generate(request(backend));
    expect(r.finish).toBe('error');
    expect((r.error as AnswerTimeout).rule).toBe('deadline');
    expect(r.error?.message).toMatch(/^the server at http:\/\/127\.0\.0\.1:\d+ was still answering after 2 s, the deadline for one answer \(\d+ pieces of text came\)$/);
    expect(r.text).toMatch(/^x+$/);
  });

  test('the clocks on a fake timer: reads never restart the progress clock, tokens do; the deadline holds regardless', () => {
    let now = 0;
    const pending: { at: number; fn: () => void; id: number }[] = [];
    let nextId = 0;
    const timers: Timers = {
      set: (fn, ms) => { const id = nextId++; pending.push({ at: now + ms, fn, id }); return id; },
      clear: (id) => { const i = pending.findIndex((p) => p.id === id); if (i >= 0) pending.splice(i, 1); },
    };
    const advance = (ms: number) => {
      const until = now + ms;
      for (;;) {
        pending.sort((a, b) => a.at - b.at);
        const due = pending[0];
        if (!due || due.at > until) break;
        pending.shift();
        now = due.at;
        due.fn();
      }
      now = until;
    };
    const trippedAt: number[] = [];
    const watch = new AnswerWatch({ deadlineMs: 10_000, progressMs: 1_000 }, () => trippedAt.push(now), timers);
    for (let i = 0; i < 5; i++) { watch.read(); advance(900); watch.progress(); }  // a token every 0.9 s: fine
    expect(watch.tripped).toBeNull();
    for (let i = 0; i < 4; i++) { watch.read(); advance(300); }                   // reads alone, no token
    expect(watch.tripped).toBe('progress');
    expect(trippedAt).toEqual([4_500 + 1_000]);                                      // 1 s after the last token
    expect(watch.error('http://h').message).toBe('the server at http://h sent 4 reads but no new text for 1 s (pings, empty events or a stream dribbled byte by byte)');
    const slow = new AnswerWatch({ deadlineMs: 10_000, progressMs: 1_000 }, () => trippedAt.push(now), timers);
    for (let i = 0; i < 40; i++) { advance(600); slow.progress(); }              // a token every 0.6 s, for 24 s
    expect(slow.tripped).toBe('deadline');
    expect(trippedAt).toEqual([5_500, 5_700 + 10_000]);                              // 10 s after it started
    expect(pending).toEqual([]);                                                      // no clock left running
  });
});

test('a redirect to another origin is refused by name and nothing reaches it (27.8)', async () => {
  const other = await rawServer((_req, res) => { sse(res); res.end(event('stolen', 'stop')); });
  const srv = await rawServer((req, res) => {
    if (req.url === '/v1/completions') { res.writeHead(307, { location: `${other.url}/v1/completions` }); res.end(); return; }
    if (req.url === '/here/v1/completions') { res.writeHead(307, { location: '/v1/completions' }); res.end(); return; }
    res.writeHead(404); res.end();
  });
  const { backend } = await backendAt(srv.url);
  const r = await backend.generate(request(backend));
  expect(r.finish).toBe('error');
  expect(r.error).toBeInstanceOf(RedirectRefused);
  expect(r.error?.message).toBe(`the server at ${srv.url} redirected POST /v1/completions to another origin (${other.url}) with 307: refused, nothing was sent there; if that is the server, give its address`);
  expect(other.bodies).toEqual([]);
  // A redirect within the same origin is followed (to the same refusal here, one hop on).
  const { backend: here } = await backendAt(`${srv.url}/here`);
  const h = await here.generate(request(here));
  expect(h.error?.message).toMatch(/redirected POST \/v1\/completions to another origin/);
  expect(other.bodies).toEqual([]);
  expect(srv.bodies.length).toBe(3);
});

test('text after a stop string is never read: "ok<|im_end|>" then a call answers ok and runs nothing (27.9)', async () => {
  const after = call('write_file', { path: 'pwned.txt', content: 'written after the stop string' });
  const srv = await rawServer(async (_req, res) => {
    sse(res);
    for (const piece of ['o', 'k<|im', '_end|>', after.slice(0, 20), after.slice(20)]) { res.write(event(piece)); await sleep(5); }
    res.end(`${event('', 'stop')}data: [DONE]\n\n`);
  });
  const { backend, tokenizer, files, tools } = await backendAt(srv.url);
  const seen: string[] = [];
  const r = await backend.generate(request(backend, { onText: (t) => seen.push(t) }));
  expect(r).toMatchObject({ finish: 'stop-token', text: 'ok' });
  expect(seen.every((t) => !t.includes('<|'))).toBe(true);   // the held-back "<|im" never showed
  const agent = new Agent({ backend, tools, files, format: 'json', codec: createCallCodec({ tokenizer, format: 'json', tools: tools.schemas() }) });
  const out = await agent.run('Say ok');
  expect(out).toMatchObject({ reason: 'done', answer: 'ok' });
  expect(out.stats.toolCalls).toBe(0);
  expect(await files.allFiles()).toEqual([]);
});

test('stop strings: the earliest of several wins, one straddling two pieces is found, a possible start is held back', () => {
  const stops = ['<|im_end|>', '<|endoftext|>'];
  expect(cutAtStop('a<|endoftext|>b<|im_end|>', stops)).toEqual({ text: 'a', stopped: true });
  expect(cutAtStop('no stop here', stops)).toEqual({ text: 'no stop here', stopped: false });
  // Searching from where the new piece began still finds a stop string that began in the piece before.
  const before = 'ok<|im_';
  expect(cutAtStop(`${before}end|> after`, stops, before.length)).toEqual({ text: 'ok', stopped: true });
  expect(cutAtStop(`<|im_end|>${'x'.repeat(50)}`, stops, 40)).toEqual({ text: `<|im_end|>${'x'.repeat(50)}`, stopped: false }); // the caller searched that part already
  expect(heldBack('ok<|im_', stops)).toBe(5);
  expect(heldBack('ok<', stops)).toBe(1);
  expect(heldBack('ok <b>', stops)).toBe(0);
});

test('data: null and other events that are not completion chunks are named malformed, not a network failure (27.10)', async () => {
  const bad = ['null', '[1, 2]', '"text"', '{"choices": [{"text": "a"}'];
  let n = 0;
  const srv = await rawServer((_req, res) => { sse(res); res.end(`${event('so far ')}data: ${bad[n++]}\n\n`); });
  const { backend } = await backendAt(srv.url);
  const messages: string[] = [];
  for (const _ of bad) {
    const r = await backend.generate(request(backend));
    expect(r).toMatchObject({ finish: 'error', text: 'so far ' });
    messages.push(r.error!.message);
  }
  expect(messages).toEqual([
    'the server sent a malformed event (not a JSON object): null',
    'the server sent a malformed event (not a JSON object): [1, 2]',
    'the server sent a malformed event (not a JSON object): "text"',
    'the server sent a malformed event (not JSON): {"choices": [{"text": "a"}',
  ]);
});

test('a server that dies mid-answer: "the connection dropped during the answer", the text so far kept (26.8)', async () => {
  const srv = await rawServer(async (_req, res) => {
    sse(res);
    res.write(event('partial '));
    res.write(event('answer'));
    await sleep(50);
    res.socket?.destroy();
  });
  const { backend } = await backendAt(srv.url);
  const r = await backend.generate(request(backend));
  expect(r).toMatchObject({ finish: 'error', text: 'partial answer' });
  expect(r.error?.message).toMatch(/^the connection to the server at http:\/\/127\.0\.0\.1:\d+ dropped during the answer \(after 14 characters\): \w+/);
  expect(r.error?.message).not.toMatch(/cannot be reached/);
});
