// Issue 40, the host tab's half in Node: the real server (npm start's startServer), our RelayClient over
// `ws` as the host tab's socket, the replay model under the real Generator, tokenizer, templates and call
// grammar (one host per call format), and the real openai client an editor uses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import WebSocket from 'ws';
import { renderToolCall, type ToolFormat } from '../../../src/model/tool-format.ts';
import { RelayClient, type RelayStatus, type SocketLike } from '../../../src/api/relay-client.ts';
import { requestHandler, type ServedLine } from '../../../src/api/serve-requests.ts';
import type { BackendRequest } from '../../../src/agent/backend.ts';
import { client, newKey, startApiServer, type ApiFixture } from '../server/api-fixture.ts';
import { qwenTokenizer, replayApi, WEATHER_TOOLS } from './fixture.ts';

const LONG = Array.from({ length: 80 }, (_, i) => `w${i}`).join(' ');
let fx: ApiFixture;

interface Host {
  relay: RelayClient; served: ServedLine[]; openai: OpenAI; model: string;
  /** Tokens generated so far, and how many there were when the request's signal aborted. */
  generated: number[]; atAbort: number[];
}

/** A host tab serving the replay model with `format`'s template, under its own key and model id. */
async function host(format: ToolFormat, replies: string[]): Promise<Host> {
  const api = await replayApi(format, replies, { tokenDelayMs: 4 });
  const id = `qwen3-${format}`;
  const model = { ...api.model, id };
  const generated: number[] = [];
  const atAbort: number[] = [];
  const inner = model.backend;
  model.backend = Object.assign(Object.create(inner), {
    generate: (req: BackendRequest) => {
      req.signal?.addEventListener('abort', () => atAbort.push(generated.length));
      return inner.generate({ ...req, onToken: (t: number) => generated.push(t) });
    },
  });
  const served: ServedLine[] = [];
  const key = newKey(format);
  const statuses: RelayStatus[] = [];
  const relay = new RelayClient({
    origin: fx.server.url, key, models: () => [{ id, contextSize: 4096 }], handle: requestHandler(() => model, (l) => served.push(l)),
    openSocket: (url) => new WebSocket(url, { origin: fx.server.url }) as unknown as SocketLike,
    onStatus: (s) => statuses.push(s), retryMs: { first: 50, max: 200 },
  });
  relay.start();
  await until(() => relay.status.kind === 'serving' || relay.status.kind === 'refused');
  expect(relay.status).toEqual({ kind: 'serving' });
  return { relay, served, openai: client(fx.server, key), model: id, generated, atAbort };
}

async function until(ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

let json: Host;
let xml: Host;
// The real vocabulary loads in ~2 s alone, far more on a busy 2-core CI box; then two hosts connect.
beforeAll(async () => {
  await qwenTokenizer();
  fx = await startApiServer();
  json = await host('json', [
    'Hello from the room.',
    `Checking.\n${renderToolCall('json', { name: 'get_weather', arguments: { city: 'Paris', days: '3' } })}`,
    LONG,
    ' over the lazy dog.',
  ]);
  xml = await host('xml', [renderToolCall('xml', { name: 'get_weather', arguments: { city: 'Oslo' } })]);
}, 120_000);
afterAll(async () => {
  json?.relay.stop();
  xml?.relay.stop();
  await fx?.close();
});

describe('the openai client against a room served by our relay client', () => {
  it('a streamed chat, with usage counted from our token ids', async () => {
    const stream = await json.openai.chat.completions.create({ model: json.model, messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      usage = c.usage ?? usage;
    }
    expect(text).toBe('Hello from the room.');
    const tok = await qwenTokenizer();
    expect(usage?.completion_tokens).toBe(tok.encode('Hello from the room.').length);
    expect(json.served.at(-1)).toMatchObject({ kind: 'chat', outcome: 'ok', completionTokens: usage?.completion_tokens });
  });

  it.each(['json', 'xml'] as const)('a tool call (%s template) comes back as tool_calls with valid JSON arguments', async (format) => {
    const h = format === 'json' ? json : xml;
    const r = await h.openai.chat.completions.create({ model: h.model, messages: [{ role: 'user', content: 'Weather?' }], tools: WEATHER_TOOLS as OpenAI.ChatCompletionTool[] });
    const choice = r.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual(format === 'json' ? { city: 'Paris', days: 3 } : { city: 'Oslo' });
  });

  it('a client that aborts mid-stream: the host stops within one token', async () => {
    const abort = new AbortController();
    const stream = await json.openai.chat.completions.create({ model: json.model, messages: [{ role: 'user', content: 'Long' }], stream: true }, { signal: abort.signal });
    let pieces = 0;
    // The client ends its iteration (quietly or with an abort error, by version); the host hears `cancel`.
    await (async () => { for await (const _ of stream) if (++pieces === 5) abort.abort(); })().catch(() => undefined);
    expect(pieces).toBe(5);
    await until(() => json.served.at(-1)?.outcome === 'cancelled');
    const before = json.atAbort.at(-1)!;
    expect(before).toBeGreaterThan(0);
    expect(json.generated.length - before).toBeLessThanOrEqual(1);
    expect(json.generated.length).toBeLessThan(80);
  });

  it('a completion', async () => {
    json.generated.length = 0;
    const r = await json.openai.completions.create({ model: json.model, prompt: 'The quick brown fox jumps', max_tokens: 20 });
    expect(r.choices[0]).toMatchObject({ text: ' over the lazy dog.', finish_reason: 'stop' });
  });

  it('a wrong key is a 401; a host that stopped serving is a 503', async () => {
    await expect(client(fx.server, newKey('wrong')).chat.completions.create({ model: json.model, messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 401 });
    xml.relay.stop();
    await expect(xml.openai.chat.completions.create({ model: xml.model, messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 503 });
  });
});
