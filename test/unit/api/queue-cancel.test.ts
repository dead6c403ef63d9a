// One stream through the room at a time: the agent's answers and API requests in FIFO order on the shared
// queue; a client that goes away leaves the queue or stops its answer within one token; a device that
// leaves mid-answer ends the request with a 503, never a hang.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Backend, BackendRequest, BackendResult } from '../../../src/agent/backend.ts';
import { EngineBackend } from '../../../src/agent/engine-backend.ts';
import { replayBackend } from '../../../src/agent/replay/replay-engine.ts';
import type { TokenGenerator } from '../../../src/model/generate-types.ts';
import { apiModel } from '../../../src/api/api-model.ts';
import { GenerateQueue, QueuedBackend } from '../../../src/api/generate-queue.ts';
import { runChat } from '../../../src/api/run-chat.ts';
import { requestHandler } from '../../../src/api/serve-requests.ts';
import { MODEL, qwenTokenizer, templateFor } from './fixture.ts';

beforeAll(async () => { await qwenTokenizer(); }, 120_000);   // the real vocabulary: ~2 s, far more on a busy CI box

const ASK = [{ role: 'user', content: 'Tell me a story.' }];
const LONG = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');

/** Wraps a Backend to log each answer's start and end, and the most answers ever running at once. */
function watched(inner: Backend) {
  const log: string[] = [];
  let running = 0;
  let most = 0;
  const backend: Backend = Object.assign(Object.create(inner) as Backend, {
    async generate(req: BackendRequest): Promise<BackendResult> {
      const who = (inner.decode(req.prompt).includes('agent asks') ? 'agent' : 'api');
      log.push(`start ${who}`);
      most = Math.max(most, ++running);
      try { return await inner.generate(req); } finally { running--; log.push(`end ${who}`); }
    },
  });
  return { backend, log, most: () => most };
}

describe('the shared queue', () => {
  it('runs the agent\'s answer and two API requests one at a time, in the order they asked', async () => {
    const tok = await qwenTokenizer();
    const template = templateFor('json');
    const replay = replayBackend({ tokenizer: tok, template, replies: [LONG, 'first', 'second'], tokenDelayMs: 2 });
    const w = watched(replay.backend);
    const queue = new GenerateQueue();
    const agentSide = new QueuedBackend(w.backend, queue);
    const model = apiModel(MODEL, new QueuedBackend(w.backend, queue), tok, 'json');
    const agent = agentSide.generate({ prompt: tok.encode('agent asks'), maxNewTokens: 200, stopTokens: tok.stopTokenIds() });
    const a = runChat(model, { model: MODEL, messages: ASK });
    const b = runChat(model, { model: MODEL, messages: ASK });
    const [agentResult, ra, rb] = await Promise.all([agent, a, b]);
    expect(agentResult.text).toBe(LONG);
    expect((ra.response as any).choices[0].message.content).toBe('first');
    expect((rb.response as any).choices[0].message.content).toBe('second');
    expect(w.most()).toBe(1);
    expect(w.log).toEqual(['start agent', 'end agent', 'start api', 'end api', 'start api', 'end api']);
  });

  it('a request cancelled while queued leaves the line without running; the next one runs', async () => {
    const tok = await qwenTokenizer();
    const replay = replayBackend({ tokenizer: tok, template: templateFor('json'), replies: [LONG, 'kept'], tokenDelayMs: 2 });
    const w = watched(replay.backend);
    const model = apiModel(MODEL, new QueuedBackend(w.backend), tok, 'json');
    const first = runChat(model, { model: MODEL, messages: ASK });
    const gone = new AbortController();
    const cancelled = runChat(model, { model: MODEL, messages: ASK }, { signal: gone.signal });
    const last = runChat(model, { model: MODEL, messages: ASK });
    gone.abort();
    expect((await cancelled).end).toEqual({ kind: 'cancelled' });
    await first;
    expect(((await last).response as any).choices[0].message.content).toBe('kept');
    expect(w.log.filter((l) => l.startsWith('start'))).toHaveLength(2);
  });

  it('a client that disconnects mid-stream stops the generation within one token', async () => {
    const tok = await qwenTokenizer();
    const replay = replayBackend({ tokenizer: tok, template: templateFor('xml'), replies: [LONG], tokenDelayMs: 3 });
    const generated: number[] = [];
    const inner = replay.backend;
    const counting: Backend = Object.assign(Object.create(inner) as Backend, {
      generate: (req: BackendRequest) => inner.generate({ ...req, onToken: (id: number) => generated.push(id) }),
    });
    const model = apiModel(MODEL, new QueuedBackend(counting), tok, 'xml');
    const gone = new AbortController();
    let atCancel = -1;
    let chunks = 0;
    const r = await runChat(model, { model: MODEL, messages: ASK, stream: true }, {
      signal: gone.signal,
      onChunk: () => { if (++chunks === 6) { atCancel = generated.length; gone.abort(); } },
    });
    expect(r.end).toEqual({ kind: 'cancelled' });
    expect(atCancel).toBeGreaterThan(0);
    expect(generated.length - atCancel).toBeLessThanOrEqual(1);
    expect(generated.length).toBeLessThan(tok.encode(LONG).length);
  });
});

describe('a device leaves mid-answer', () => {
  it('ends the request with a 503 naming it (the room\'s `stopped` + note), never a hang', async () => {
    const tok = await qwenTokenizer();
    const generator: TokenGenerator = {
      async generate(prompt, o) {
        const ids = tok.encode('Once upon');
        ids.forEach((id, i) => o.onToken?.(id, ids.slice(0, i + 1)));
        return { ids, finish: 'stopped', note: 'Phone left: tab closed', stats: { promptTokens: prompt.length, promptComputed: prompt.length, promptReused: 0, generated: ids.length, prefillSeconds: 0, decodeSeconds: 0, prefillTokensPerSecond: 0, decodeTokensPerSecond: 0, seconds: 0, seed: 1 } };
      },
    };
    const backend = new EngineBackend({ generator, tokenizer: tok, template: templateFor('json'), contextSize: 4096 });
    const model = apiModel(MODEL, new QueuedBackend(backend), tok, 'json');
    const chunks: unknown[] = [];
    await expect(runChat(model, { model: MODEL, messages: ASK, stream: true }, { onChunk: (c) => chunks.push(c) }))
      .rejects.toMatchObject({ status: 503, type: 'service_unavailable', message: /a device left the room.*Phone left: tab closed/ });
    expect(chunks.length).toBeGreaterThan(1);    // it had streamed: the relay sends the error after the chunks
  });
});

describe('after a device left', () => {
  it('the next request waits for the room to recover first (as the agent does), then runs', async () => {
    const tok = await qwenTokenizer();
    const log: string[] = [];
    let calls = 0;
    const generator: TokenGenerator = {
      async generate(prompt, o) {
        const left = calls++ === 0;
        log.push(left ? 'generate: a device leaves' : 'generate');
        const ids = tok.encode(left ? 'Once' : 'Fine.');
        ids.forEach((id, i) => o.onToken?.(id, ids.slice(0, i + 1)));
        return { ids, finish: left ? 'stopped' : 'stop-token', ...(left ? { note: 'Phone left' } : {}), stats: { promptTokens: prompt.length, promptComputed: 0, promptReused: 0, generated: ids.length, prefillSeconds: 0, decodeSeconds: 0, prefillTokensPerSecond: 0, decodeTokensPerSecond: 0, seconds: 0, seed: 1 } };
      },
      async recover() { log.push('recover'); return { ok: true, text: 'dealt again' }; },
    };
    const backend = new EngineBackend({ generator, tokenizer: tok, template: templateFor('json'), contextSize: 4096 });
    const model = apiModel(MODEL, new QueuedBackend(backend), tok, 'json');
    const handle = requestHandler(() => model);
    const ask = () => handle({ t: 'request', id: `r${calls}`, kind: 'chat', body: { model: MODEL, messages: ASK }, client: 'test' }, () => undefined, new AbortController().signal);
    expect(await ask()).toMatchObject({ kind: 'error', status: 503 });
    expect(await ask()).toMatchObject({ kind: 'done', response: { choices: [{ message: { content: 'Fine.' } }] } });
    expect(await ask()).toMatchObject({ kind: 'done' });
    expect(log).toEqual(['generate: a device leaves', 'recover', 'generate', 'generate']);
  });
});
