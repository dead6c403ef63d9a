// Issue 40 (server half): the real openai client against a real server, the room played by a scripted
// fake host tab. What a client asks arrives at the host as a `request` frame; what the host answers
// comes back in OpenAI's format: streamed and whole chat, completions, tool_calls untouched, errors
// before and after a stream began, and a client that aborts makes the host see `cancel`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { RequestFrame } from '../../../src/api/relay-wire.ts';
import { chatChunk, connectFakeHost, isCancel, isRequest, streamChat, type Answer, type FakeHost } from '../../helpers/fake-relay-host.ts';
import { client, newKey, startApiServer, type ApiFixture } from './api-fixture.ts';

const MODEL = 'pooled-tiny';
let fx: ApiFixture;
let host: FakeHost;
let openai: OpenAI;
/** What the fake host does with the next request; each test sets it. */
let answer: Answer = () => undefined;
const KEY = newKey('relay');

beforeAll(async () => {
  fx = await startApiServer();
  host = await connectFakeHost(fx.server.url, { key: KEY, models: [{ id: MODEL, contextSize: 512 }, { id: 'Qwen/Qwen3-0.6B', contextSize: 4096 }], answer: (r, h) => answer(r, h) });
  expect(host.first).toBe('ready');
  openai = client(fx.server, KEY);
});
afterAll(async () => {
  await host?.close();
  await fx?.close();
});

const lastRequest = (): RequestFrame => host.frames.filter(isRequest).at(-1)!;

describe('the endpoint relays to the host tab', () => {
  it('lists the host\'s models', async () => {
    const list = await openai.models.list();
    expect(list.data.map((m) => m.id)).toEqual([MODEL, 'Qwen/Qwen3-0.6B']);
    expect(list.data.map((m) => (m as unknown as { max_model_len: number }).max_model_len)).toEqual([512, 4096]);
    expect((await openai.models.retrieve(MODEL)).id).toBe(MODEL);
    expect((await openai.models.retrieve('Qwen/Qwen3-0.6B')).id).toBe('Qwen/Qwen3-0.6B');
    expect(await openai.models.retrieve('Qwen/other').catch((e: InstanceType<typeof OpenAI.APIError>) => e.status)).toBe(404);
  });

  it('streams a chat as SSE chunks the client reads back', async () => {
    answer = (r, h) => streamChat(r, h, 'Hello from the room.');
    const stream = await openai.chat.completions.create({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    let finish: string | null = null;
    for await (const c of stream) { text += c.choices[0]?.delta.content ?? ''; finish = c.choices[0]?.finish_reason ?? finish; }
    expect(text).toBe('Hello from the room.');
    expect(finish).toBe('stop');
    const req = lastRequest();
    expect(req.kind).toBe('chat');
    expect(req.body.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(req.client).toMatch(/^OpenAI\/JS/);
  });

  it('answers a chat that is not streamed with the host\'s whole response', async () => {
    answer = (r, h) => h.send({ t: 'done', id: r.id, response: {
      id: r.id, object: 'chat.completion', created: 1, model: MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content: 'whole', refusal: null }, finish_reason: 'stop', logprobs: null }],
      usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
    } });
    const done = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 });
    expect(done.choices[0]!.message.content).toBe('whole');
    expect(done.usage?.total_tokens).toBe(6);
    expect(lastRequest().body.stream).toBeUndefined();
  });

  it('relays completions, streamed and whole', async () => {
    answer = (r, h) => {
      const piece = (text: string, finish: string | null) => ({ id: r.id, object: 'text_completion', created: 1, model: MODEL, choices: [{ index: 0, text, finish_reason: finish, logprobs: null }] });
      if (r.body.stream) {
        for (const t of ['one ', 'two']) h.send({ t: 'chunk', id: r.id, data: piece(t, null) });
        h.send({ t: 'chunk', id: r.id, data: piece('', 'length') });
        h.send({ t: 'done', id: r.id });
      } else {
        h.send({ t: 'done', id: r.id, response: piece('one two', 'length') });
      }
    };
    const stream = await openai.completions.create({ model: MODEL, prompt: 'count:', stream: true, max_tokens: 2 });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.text ?? '';
    expect(text).toBe('one two');
    expect(lastRequest().kind).toBe('completion');
    const whole = await openai.completions.create({ model: MODEL, prompt: 'count:', max_tokens: 2 });
    expect(whole.choices[0]!.text).toBe('one two');
  });

  it('passes tool_calls through, streamed in pieces, with valid JSON arguments', async () => {
    const args = '{"path": "src/main.ts", "line": 3}';
    answer = (r, h) => {
      const send = (delta: object, finish: string | null = null) => h.send({ t: 'chunk', id: r.id, data: chatChunk(r.id, MODEL, delta as never, finish) });
      send({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '' } }] });
      for (let i = 0; i < args.length; i += 7) send({ tool_calls: [{ index: 0, function: { arguments: args.slice(i, i + 7) } }] });
      send({}, 'tool_calls');
      h.send({ t: 'done', id: r.id });
    };
    const tools = [{ type: 'function' as const, function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
    const stream = await openai.chat.completions.create({ model: MODEL, stream: true, tools, tool_choice: 'auto', messages: [{ role: 'user', content: 'read it' }] });
    let name = '';
    let got = '';
    let finish: string | null = null;
    for await (const c of stream) {
      const call = c.choices[0]?.delta.tool_calls?.[0];
      name += call?.function?.name ?? '';
      got += call?.function?.arguments ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(name).toBe('read_file');
    expect(JSON.parse(got)).toEqual({ path: 'src/main.ts', line: 3 });
    expect(finish).toBe('tool_calls');
    expect(lastRequest().body.tools).toEqual(tools);
  });

  it('answers a host error before any chunk with its status and OpenAI\'s error body', async () => {
    answer = (r, h) => h.send({ t: 'error', id: r.id, status: 400, message: 'tool_choice names no tool', type: 'invalid_request_error' });
    const err = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((err as Error).message).toContain('tool_choice names no tool');
  });

  it('ends a stream whose host fails mid-way with one error event', async () => {
    answer = (r, h) => {
      h.send({ t: 'chunk', id: r.id, data: chatChunk(r.id, MODEL, { content: 'par' }) });
      h.send({ t: 'error', id: r.id, status: 503, message: 'a device left the room' });
    };
    const stream = await openai.chat.completions.create({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'x' }] });
    let text = '';
    const err = await (async () => { for await (const c of stream) text += c.choices[0]?.delta.content ?? ''; })().catch((e: unknown) => e);
    expect(text).toBe('par');
    expect((err as Error).message).toContain('a device left the room');
  });

  it('answers 502 when a host streams chunks for a request that is not streamed, or ends one without a response', async () => {
    answer = (r, h) => h.send({ t: 'chunk', id: r.id, data: chatChunk(r.id, MODEL, { content: 'x' }) });
    const err = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    await host.waitFor(isCancel(lastRequest().id), 2000);
    answer = (r, h) => h.send({ t: 'done', id: r.id });
    const none = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect((none as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
  });

  it('tells the host to cancel when the client aborts mid-stream', async () => {
    answer = (r, h) => h.send({ t: 'chunk', id: r.id, data: chatChunk(r.id, MODEL, { content: 'first' }) }); // then nothing: still generating
    const abort = new AbortController();
    const stream = await openai.chat.completions.create({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'x' }] }, { signal: abort.signal });
    const it0 = stream[Symbol.asyncIterator]();
    expect((await it0.next()).value?.choices[0]?.delta.content).toBe('first');
    const id = lastRequest().id;
    const aborted = performance.now();
    abort.abort();
    await host.waitFor(isCancel(id), 2000);
    expect(performance.now() - aborted).toBeLessThan(2000);
  });
});
