// Issue 40 (server half): no request hangs. A host that stalls before its first chunk gets the client a
// 504 at the request's deadline; one that stalls mid-stream gets it an SSE error after the chunk gap; in
// both the host is told to cancel. A host that stops answering pings is dropped (its requests end), one
// that answers stays, and a socket that never says hello is refused. The clocks are short here
// (hundreds of ms; the request deadline 2 s so a silent host is dropped well before it); the bounds
// below leave a busy CI machine seconds of slack.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import OpenAI from 'openai';
import { chatChunk, connectFakeHost, isCancel, isRequest, type FakeHost } from '../../helpers/fake-relay-host.ts';
import { client, newKey, startApiServer, type ApiFixture } from './api-fixture.ts';

const MODEL = 'pooled-tiny';
const LIMITS = { requestTotalMs: 2000, chunkGapMs: 300, pingEveryMs: 100, silentDropMs: 400, helloWithinMs: 300 };
let fx: ApiFixture;

beforeAll(async () => { fx = await startApiServer({ limits: LIMITS }); });
afterAll(async () => { await fx?.close(); });

const chat = (openai: OpenAI, stream: boolean) => openai.chat.completions.create({ model: MODEL, stream, messages: [{ role: 'user', content: 'hi' }] } as never);

async function host(tag: string, opts: { pong?: boolean; firstChunk?: boolean } = {}): Promise<{ h: FakeHost; openai: OpenAI }> {
  const key = newKey(tag);
  const h = await connectFakeHost(fx.server.url, {
    key, pong: opts.pong,
    answer: (r, fake) => { if (opts.firstChunk) fake.send({ t: 'chunk', id: r.id, data: chatChunk(r.id, MODEL, { content: 'a' }) }); },
  });
  expect(h.first).toBe('ready');
  return { h, openai: client(fx.server, key) };
}

describe('deadlines and liveness', () => {
  it('answers 504 when the host sends nothing before the deadline, and cancels it there', async () => {
    const { h, openai } = await host('stall');
    const started = performance.now();
    const err = await chat(openai, false).catch((e: unknown) => e);
    const took = performance.now() - started;
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
    expect(took).toBeGreaterThanOrEqual(LIMITS.requestTotalMs - 50);
    expect(took).toBeLessThan(LIMITS.requestTotalMs + 5000);
    await h.waitFor(isCancel(h.frames.find(isRequest)!.id), 2000);
    await h.close();
  });

  it('ends a stream that stalls after a chunk with an error event, and cancels it there', async () => {
    const { h, openai } = await host('gap', { firstChunk: true });
    const stream = await chat(openai, true) as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>;
    let text = '';
    const err = await (async () => { for await (const c of stream) text += c.choices[0]?.delta.content ?? ''; })().catch((e: Error) => e.message);
    expect(text).toBe('a');
    expect(err).toMatch(/no chunk for 300 ms/);
    await h.waitFor(isCancel(h.frames.find(isRequest)!.id), 2000);
    await h.close();
  });

  it('drops a host that stops answering pings, and ends its requests; keeps one that answers', async () => {
    const answering = await host('pongs');
    const { h, openai } = await host('silent', { pong: false });
    const pending = chat(openai, false).catch((e: unknown) => (e as InstanceType<typeof OpenAI.APIError>).status);
    expect(await h.closed).toBe(1006); // terminated, no close handshake
    expect(await pending).toBe(503);
    // The answering host, connected first, has been up longer than silentDropMs by now: pinged and kept.
    expect(answering.h.frames.filter((f) => f.t === 'ping').length).toBeGreaterThanOrEqual(LIMITS.silentDropMs / LIMITS.pingEveryMs - 1);
    expect((await answering.openai.models.list()).data[0]!.id).toBe(MODEL);
    await answering.h.close();
  });

  it('refuses a socket that never says hello', async () => {
    const ws = new WebSocket(`${fx.server.url.replace(/^http/, 'ws')}/v1/host`, { origin: fx.server.url });
    const notPing = await new Promise<unknown>((resolve) => ws.on('message', (m) => {
      const f = JSON.parse(String(m)) as { t: string };
      if (f.t !== 'ping') resolve(f);
    }));
    expect(notPing).toEqual({ t: 'refused', why: 'no hello' });
    await new Promise((resolve) => ws.once('close', resolve));
  });
});
