// Issue 40 (server half): what the endpoint refuses and how every request ends. Wrong keys (401), a closed
// host tab (503 with a reason), bodies out of bounds (413/400/404, never relayed), a full host (429), host
// sockets from other origins or with a held key (refused), a hostile host (dropped, its requests end), a
// host gone mid-request (503, or an SSE error after the stream began), and CORS closed unless configured.
// The limits are small so each case is quick; the clocks (deadlines, pings) have their own file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import WebSocket from 'ws';
import { chatChunk, connectFakeHost, isRequest, type Answer, type FakeHost } from '../../helpers/fake-relay-host.ts';
import { client, newKey, startApiServer, type ApiFixture } from './api-fixture.ts';

const MODEL = 'pooled-tiny';
const CONTEXT = 512;
let fx: ApiFixture;

beforeAll(async () => {
  fx = await startApiServer({ limits: { maxOpenPerHost: 2, maxMessages: 10, maxBodyBytes: 64 * 1024, maxHosts: 4, hostSocketsPerAddress: 6, maxFrameBytes: 64 * 1024 } });
});
afterAll(async () => { await fx?.close(); });

const chat = (openai: OpenAI, extra: object = {}, signal?: AbortSignal) =>
  openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], ...extra } as never, { signal });
/** A host socket that says nothing (it would be refused after helloWithinMs). */
const openSocket = () => new Promise<WebSocket>((resolve, reject) => {
  const ws = new WebSocket(`${fx.server.url.replace(/^http/, 'ws')}/v1/host`, { origin: fx.server.url });
  ws.once('open', () => resolve(ws));
  ws.once('error', reject);
});
const statusOf = (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof OpenAI.APIError ? `${e.status} ${e.message}` : String(e)));

async function host(tag: string, answer?: Answer): Promise<{ h: FakeHost; key: string }> {
  const key = newKey(tag);
  const h = await connectFakeHost(fx.server.url, { key, answer });
  expect(h.first).toBe('ready');
  return { h, key };
}

describe('keys', () => {
  it('answers an unknown key, or none, with 401', async () => {
    const { h } = await host('k401');
    expect(await statusOf(client(fx.server, newKey('nobody')).models.list())).toMatch(/^401 /);
    expect(await statusOf(client(fx.server, 'short').models.list())).toMatch(/^401 /);
    const bare = await fetch(`${fx.server.url}/v1/models`);
    expect(bare.status).toBe(401);
    expect(((await bare.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
    await h.close();
  });

  it('answers the key of a closed host tab with 503 and the reason', async () => {
    const { h, key } = await host('k503');
    expect(await statusOf(client(fx.server, key).models.list())).toBe('ok');
    await h.close();
    expect(await statusOf(chat(client(fx.server, key)))).toMatch(/^503 .*host tab serving this room is closed/);
  });

  it('refuses a second host with a held key, and keeps the first', async () => {
    const { h, key } = await host('twice');
    const second = await connectFakeHost(fx.server.url, { key });
    expect(second.first).toMatch(/^refused: .*already served/);
    expect(await second.closed).toBe(1008);
    expect(await statusOf(client(fx.server, key).models.list())).toBe('ok');
    await h.close();
  });

  it('refuses hosts beyond maxHosts', async () => {
    const hosts = await Promise.all([0, 1, 2, 3].map((i) => host(`many${i}`)));
    const fifth = await connectFakeHost(fx.server.url, { key: newKey('many4') });
    expect(fifth.first).toMatch(/^refused: .*serves 4 host tabs/);
    await Promise.all(hosts.map(({ h }) => h.close()));
  });

  it('takes at most hostSocketsPerAddress host sockets from one address', async () => {
    const hosts = await Promise.all([0, 1, 2, 3].map((i) => host(`addr${i}`)));
    // Two sockets that never say hello still hold a slot each (6 = hostSocketsPerAddress from 127.0.0.1).
    const silent = await Promise.all([0, 1].map(() => openSocket()));
    const seventh = await connectFakeHost(fx.server.url, { key: newKey('addr7') });
    expect(seventh.first).toBe('http 429');
    silent[0]!.close();
    await new Promise((resolve) => silent[0]!.once('close', resolve));
    const again = await connectFakeHost(fx.server.url, { key: newKey('addr8') });
    expect(again.first).toMatch(/^refused: .*serves 4 host tabs/); // a slot again; the hello meets maxHosts
    silent[1]!.close();
    await Promise.all(hosts.map(({ h }) => h.close()));
  });

  it('takes host sockets only from its own origin, and no other upgrade', async () => {
    const evil = await connectFakeHost(fx.server.url, { key: newKey('evil'), origin: 'http://evil.example' });
    expect(evil.first).toBe('http 403');
    const noOrigin = await connectFakeHost(fx.server.url, { key: newKey('evil'), origin: '' });
    expect(noOrigin.first).toBe('http 403');
    const other = await connectFakeHost(fx.server.url, { key: newKey('evil'), path: '/v1/other' });
    expect(other.first).toBe('http 404');
    // Behind a proxy that rewrites Host, the page's origin is the forwarded host.
    const proxied = await connectFakeHost(fx.server.url, { key: newKey('proxied'), origin: 'https://pool.example', headers: { 'x-forwarded-host': 'pool.example' } });
    expect(proxied.first).toBe('ready');
    await proxied.close();
  });
});

describe('bounds, checked before anything reaches the host', () => {
  let h: FakeHost;
  let openai: OpenAI;
  beforeAll(async () => {
    const made = await host('bounds', (r, fake) => fake.send({ t: 'done', id: r.id, response: { id: r.id, object: 'chat.completion', choices: [] } }));
    h = made.h;
    openai = client(fx.server, made.key);
  });
  afterAll(async () => { await h.close(); });

  it.each([
    ['an unknown model', { model: 'gpt-4o' }, /^404 .*does not exist/],
    ['no model', { model: '' }, /^400 .*model is required/],
    ['too many messages', { messages: Array.from({ length: 11 }, () => ({ role: 'user', content: 'x' })) }, /^400 .*1 to 10 messages/],
    ['no messages', { messages: [] }, /^400 .*messages/],
    ['a message that is not an object', { messages: ['hi'] }, /^400 .*messages\[0\]/],
    ['max_tokens past the context', { max_tokens: CONTEXT + 1 }, /^400 .*max_tokens .* 512/],
    ['max_tokens zero', { max_tokens: 0 }, /^400 .*max_tokens/],
    ['max_completion_tokens fractional', { max_completion_tokens: 2.5 }, /^400 .*max_completion_tokens/],
    ['n of 2', { n: 2 }, /^400 .*n must be 1/],
    ['stream not a boolean', { stream: 'yes' }, /^400 .*stream/],
  ])('refuses %s', async (_name, extra, expected) => {
    const before = h.frames.filter(isRequest).length;
    expect(await statusOf(chat(openai, extra))).toMatch(expected);
    expect(h.frames.filter(isRequest).length).toBe(before);
  });

  it('refuses a bad completion prompt, and bodies that are too big or not JSON', async () => {
    const before = h.frames.filter(isRequest).length;
    expect(await statusOf(openai.completions.create({ model: MODEL, prompt: ['a', 'b'] }))).toMatch(/^400 .*prompt/);
    const post = (body: string) => fetch(`${fx.server.url}/v1/chat/completions`, {
      method: 'POST', body, headers: { authorization: `Bearer ${newKey('bounds')}`, 'content-type': 'application/json' },
    });
    const big = await post(JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x'.repeat(65 * 1024) }] }));
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { message: string } }).error.message).toMatch(/too big/);
    expect((await post('{"model": ')).status).toBe(400);
    expect((await post('[1, 2]')).status).toBe(400);
    expect(h.frames.filter(isRequest).length).toBe(before);
    // A body within bounds does reach the host (so the refusals above were refusals, not a broken relay).
    expect(await statusOf(chat(openai, { max_tokens: CONTEXT }))).toBe('ok');
    expect(h.frames.filter(isRequest).length).toBe(before + 1);
  });

  it('answers an unknown path under /v1 with an OpenAI 404, not the app', async () => {
    const res = await fetch(`${fx.server.url}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${newKey('bounds')}` } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });
});

describe('open requests', () => {
  it('answers 429 past maxOpenPerHost, and takes requests again when one ends', async () => {
    const { h, key } = await host('full'); // answers nothing: every request stays open
    const openai = client(fx.server, key);
    const aborts = [new AbortController(), new AbortController()];
    const open = aborts.map((a) => statusOf(chat(openai, { stream: true }, a.signal)));
    await h.waitFor((f): f is never => h.frames.filter(isRequest).length === 2 && f.t === 'request');
    expect(await statusOf(chat(openai))).toMatch(/^429 /);
    aborts[0]!.abort();
    await h.waitFor((f): f is never => f.t === 'cancel');
    const third = new AbortController();
    const again = statusOf(chat(openai, { stream: true }, third.signal));
    await h.waitFor((f): f is never => h.frames.filter(isRequest).length === 3 && f.t === 'request');
    aborts[1]!.abort();
    third.abort();
    await Promise.all([...open, again]);
    await h.close();
  });

  it('ends open requests when their host closes: 503 before the stream, an error event after', async () => {
    const { h, key } = await host('gone', (r, fake) => {
      if (r.body.stream) fake.send({ t: 'chunk', id: r.id, data: chatChunk(r.id, MODEL, { content: 'so far' }) });
    });
    const openai = client(fx.server, key);
    const whole = statusOf(chat(openai));
    const stream = await chat(openai, { stream: true }) as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>;
    await h.waitFor((f): f is never => h.frames.filter(isRequest).length === 2 && f.t === 'request');
    let text = '';
    const streamed = (async () => { for await (const c of stream) text += c.choices[0]?.delta.content ?? ''; return 'ended'; })().catch((e: Error) => e.message);
    await h.close();
    expect(await whole).toMatch(/^503 .*host tab serving this room is closed/);
    expect(await streamed).toMatch(/host tab serving this room is closed/);
    expect(text).toBe('so far');
  });

  it('drops a hostile host that sends garbage, and ends its requests', async () => {
    const { h, key } = await host('hostile');
    const pending = statusOf(chat(client(fx.server, key)));
    await h.waitFor(isRequest);
    h.send('{"t": "chunk", "id": "not an id!", "data": 1}');
    expect(await h.closed).toBe(1008);
    expect(await pending).toMatch(/^503 /);
  });

  it('drops a host whose frame is over maxFrameBytes, and ends its requests', async () => {
    const { h, key } = await host('bigframe');
    const pending = statusOf(chat(client(fx.server, key)));
    const req = await h.waitFor(isRequest);
    h.send({ t: 'done', id: req.id, response: { pad: 'x'.repeat(65 * 1024) } });
    expect(await h.closed).toBe(1009);
    expect(await pending).toMatch(/^503 /);
  });

  it.each([
    ['not JSON', 'lorem ipsum'],
    ['a list', '[]'],
    ['a second hello', JSON.stringify({ t: 'hello', v: 1, key: newKey('again'), models: [{ id: 'm', contextSize: 8 }] })],
    ['a server frame', JSON.stringify({ t: 'request', id: 'r', kind: 'chat', body: {}, client: '' })],
  ])('drops a host that sends %s', async (_name, garbage) => {
    const { h } = await host(`garbage${garbage.length}`);
    h.send(garbage);
    expect(await h.closed).toBe(1008);
  });

  it('refuses a socket whose first frame is not hello', async () => {
    const ws = await connectFakeHost(fx.server.url, { key: 'not a key' });
    expect(ws.first).toMatch(/^refused: hello: key/);
  });
});

describe('CORS', () => {
  const preflight = (base: string, origin: string) => fetch(`${base}/v1/chat/completions`, {
    method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,x-stainless-os' },
  });
  const corsHeaders = (res: Response) => [...res.headers.keys()].filter((k) => k.startsWith('access-control-'));

  it('is closed by default: no Access-Control-* header, preflight refused', async () => {
    const res = await preflight(fx.server.url, 'http://editor.example');
    expect(res.status).toBe(403);
    expect(corsHeaders(res)).toEqual([]);
    const get = await fetch(`${fx.server.url}/v1/models`, { headers: { origin: 'http://editor.example' } });
    expect(corsHeaders(get)).toEqual([]);
  });

  it('answers the configured origins only', async () => {
    const open = await startApiServer({ corsOrigins: ['http://editor.example'] });
    try {
      const ok = await preflight(open.server.url, 'http://editor.example');
      expect(ok.status).toBe(204);
      expect(ok.headers.get('access-control-allow-origin')).toBe('http://editor.example');
      expect(ok.headers.get('access-control-allow-headers')).toBe('authorization,content-type,x-stainless-os');
      const get = await fetch(`${open.server.url}/v1/models`, { headers: { origin: 'http://editor.example' } });
      expect(get.status).toBe(401);
      expect(get.headers.get('access-control-allow-origin')).toBe('http://editor.example');
      const other = await preflight(open.server.url, 'http://evil.example');
      expect(other.status).toBe(403);
      expect(corsHeaders(other)).toEqual([]);
    } finally {
      await open.close();
    }
  });
});
