// Issue 40 (server half): our own agent's OpenAI backend (src/agent/openai-backend.ts) against the room's
// endpoint, the room played by the scripted fake host: it finds the endpoint with the key
// (OPENAI_API_KEY in the CLIs: withApiKey), reads the model's context from /v1/models and sizes max_tokens
// by it, streams an answer through, and its Stop reaches the host as `cancel`. Without the key the probe
// says 401 in the server's words.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { OpenAIBackend } from '../../../src/agent/openai-backend.ts';
import { probeServer, withApiKey } from '../../../src/agent/openai/server.ts';
import { loadBundledQwen3Tokenizer } from '../../../src/model/bundled-tokenizer.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import type { JsonObject, RequestFrame } from '../../../src/api/relay-wire.ts';
import { connectFakeHost, isCancel, isRequest, type Answer, type FakeHost } from '../../helpers/fake-relay-host.ts';
import { newKey, startApiServer, type ApiFixture } from './api-fixture.ts';

const MODEL = 'qwen3-room';
const CONTEXT = 1024;
const KEY = newKey('agent');
const template = new ChatTemplate(readFileSync(new URL('../../fixtures/chat-templates/qwen3.jinja', import.meta.url), 'utf8'));
let fx: ApiFixture;
let host: FakeHost;
let answer: Answer = () => undefined;

beforeAll(async () => {
  fx = await startApiServer();
  host = await connectFakeHost(fx.server.url, { key: KEY, models: [{ id: MODEL, contextSize: CONTEXT }], answer: (r, h) => answer(r, h) });
  expect(host.first).toBe('ready');
});
afterAll(async () => {
  await host?.close();
  await fx?.close();
});

const piece = (r: RequestFrame, text: string, finish: string | null): JsonObject =>
  ({ id: r.id, object: 'text_completion', created: 1, model: MODEL, choices: [{ index: 0, text, finish_reason: finish, logprobs: null }] });

async function backend() {
  const fetchFn = withApiKey(KEY);
  const info = await probeServer(`${fx.server.url}/v1`, MODEL, fetchFn);
  const tokenizer = await loadBundledQwen3Tokenizer();
  const b = new OpenAIBackend({ server: info, model: MODEL, tokenizer, template, fetch: fetchFn });
  const prompt = b.encode(b.render([{ role: 'user', content: 'Say hello' }], []));
  return { b, info, prompt };
}

describe("the agent's OpenAI backend on the room's endpoint", () => {
  it('needs the key: without it the probe quotes the 401', async () => {
    await expect(probeServer(`${fx.server.url}/v1`, MODEL)).rejects.toThrow(/401.*Incorrect API key/);
  });

  it('finds the model and its context, and streams an answer sized to fit', async () => {
    answer = (r, h) => {
      for (const t of ['Hello', ' from', ' the room.']) h.send({ t: 'chunk', id: r.id, data: piece(r, t, null) });
      h.send({ t: 'chunk', id: r.id, data: piece(r, '', 'stop') });
      h.send({ t: 'done', id: r.id });
    };
    const { b, info, prompt } = await backend();
    expect(info).toMatchObject({ models: [MODEL], contextSize: CONTEXT });
    const r = await b.generate({ prompt, maxNewTokens: 4096, stopTokens: [151645] });
    expect(r.text).toBe('Hello from the room.');
    const sent = host.frames.filter(isRequest).at(-1)!;
    expect(sent.kind).toBe('completion');
    expect(sent.body.max_tokens).toBeLessThanOrEqual(CONTEXT - prompt.length);
    expect(sent.body.prompt).toContain('Say hello');
  });

  it('Stop reaches the host as cancel', async () => {
    answer = (r, h) => h.send({ t: 'chunk', id: r.id, data: piece(r, 'Hel', null) }); // then still generating
    const { b, prompt } = await backend();
    const stop = new AbortController();
    const r = await b.generate({ prompt, maxNewTokens: 64, stopTokens: [151645], signal: stop.signal, onText: () => stop.abort() });
    expect(r.finish).toBe('stopped');
    await host.waitFor(isCancel(host.frames.filter(isRequest).at(-1)!.id), 2000);
  });
});
