// The host screen's switch (src/app/api-serve.ts): the key it makes and keeps, and what it counts and lists
// once a request came through the real server with a client's User-Agent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ApiServe, API_KEY_STORAGE, newApiKey } from '../../../src/app/api-serve.ts';
import { API_KEY_PATTERN } from '../../../src/api/relay-wire.ts';
import type { SocketLike } from '../../../src/api/relay-client.ts';
import { startApiServer, type ApiFixture } from '../server/api-fixture.ts';
import { MODEL, qwenTokenizer, replayApi } from './fixture.ts';

class MemoryStorage {
  readonly items = new Map<string, string>();
  getItem(k: string): string | null { return this.items.get(k) ?? null; }
  setItem(k: string, v: string): void { this.items.set(k, v); }
}

let fx: ApiFixture;
// The real vocabulary loads in ~2 s alone, far more on a busy 2-core CI box.
beforeAll(async () => { await qwenTokenizer(); fx = await startApiServer(); }, 120_000);
afterAll(async () => { await fx?.close(); });

describe('the API key', () => {
  it('is 43 random base64url characters, kept in storage: a reload gets the same one', async () => {
    const a = newApiKey();
    expect(a).toMatch(API_KEY_PATTERN);
    expect(a).toHaveLength(43);
    expect(newApiKey()).not.toBe(a);
    const storage = new MemoryStorage();
    const { model } = await replayApi('json', []);
    const first = new ApiServe({ model, origin: fx.server.url, storage });
    expect(first.state).toMatchObject({ on: false, status: { kind: 'off' }, baseUrl: `${fx.server.url}/v1`, modelId: MODEL });
    expect(storage.getItem(API_KEY_STORAGE)).toBe(first.state.key);
    expect(new ApiServe({ model, origin: fx.server.url, storage }).state.key).toBe(first.state.key);
    storage.setItem(API_KEY_STORAGE, 'short');                   // not a key of ours: a new one replaces it
    const third = new ApiServe({ model, origin: fx.server.url, storage });
    expect(third.state.key).toMatch(API_KEY_PATTERN);
    expect(storage.getItem(API_KEY_STORAGE)).toBe(third.state.key);
  });
});

describe('serving', () => {
  it('on: serves through the server; counts requests and tokens; lists the client by its User-Agent; off: 503', async () => {
    const { model, tok } = await replayApi('json', ['Fine, thanks.']);
    const serve = new ApiServe({ model, origin: fx.server.url, storage: new MemoryStorage(), openSocket: (url) => new WebSocket(url, { origin: fx.server.url }) as unknown as SocketLike });
    serve.setOn(true);
    for (let i = 0; i < 500 && serve.state.status.kind !== 'serving'; i++) await new Promise((r) => setTimeout(r, 10));
    expect(serve.state.status).toEqual({ kind: 'serving' });
    const ask = () => fetch(`${fx.server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${serve.state.key}`, 'content-type': 'application/json', 'user-agent': 'my-editor/1.0' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'How are you?' }] }),
    });
    const r = await ask();
    expect(r.status).toBe(200);
    const body = await r.json() as { usage: { prompt_tokens: number; completion_tokens: number } };
    expect(body.usage.completion_tokens).toBe(tok.encode('Fine, thanks.').length);
    expect(serve.state).toMatchObject({ served: 1, tokensIn: body.usage.prompt_tokens, tokensOut: body.usage.completion_tokens });
    expect(serve.state.lines).toEqual([{ client: 'my-editor/1.0', kind: 'chat', outcome: 'ok', promptTokens: body.usage.prompt_tokens, completionTokens: body.usage.completion_tokens }]);
    serve.setOn(false);
    expect(serve.state.status).toEqual({ kind: 'off' });
    for (let i = 0; i < 100 && (await ask()).status !== 503; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await ask()).status).toBe(503);
  });

  it('a new key: the old one gets 401 at once (forgotten, not a closed tab\'s 503), the new one is served', async () => {
    const { model } = await replayApi('json', ['One.', 'Two.']);
    const serve = new ApiServe({ model, origin: fx.server.url, storage: new MemoryStorage(), openSocket: (url) => new WebSocket(url, { origin: fx.server.url }) as unknown as SocketLike });
    const serving = async () => { for (let i = 0; i < 500 && serve.state.status.kind !== 'serving'; i++) await new Promise((r) => setTimeout(r, 10)); expect(serve.state.status).toEqual({ kind: 'serving' }); };
    const ask = (key: string) => fetch(`${fx.server.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Count.' }] }),
    });
    serve.setOn(true);
    await serving();
    const old = serve.state.key;
    expect((await ask(old)).status).toBe(200);
    serve.newKey();
    expect(serve.state.key).not.toBe(old);
    expect(serve.state.on).toBe(true);
    await serving();
    expect((await ask(serve.state.key)).status).toBe(200);
    const refused = await ask(old);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
    serve.setOn(false);
  });
});
