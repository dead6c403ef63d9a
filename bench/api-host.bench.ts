// The OpenAI-compatible endpoint (issue 40), end to end against the tab's own generation: the same model,
// prompt and answer generated (1) as the agent does, straight on the Backend, and (2) by the real openai
// client through npm start's server, the relay socket and our relay client into runChat (template, grammar
// queue, chunk objects). The model is the replay model under the real Generator and tokenizer with no
// per-token delay, so the difference is all the endpoint's: the latency it adds per token and before the
// first one. A real room adds its own per-token time to both sides equally.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import WebSocket from 'ws';
import { startServer } from '../server/app.ts';
import { RelayClient, type SocketLike } from '../src/api/relay-client.ts';
import { requestHandler } from '../src/api/serve-requests.ts';
import { MODEL, replayApi } from '../test/unit/api/fixture.ts';

export const title = 'API endpoint vs the tab\'s own generation: added ms per token and before the first (replay model, same prompt)';

const WORDS = 200;
const ROUNDS = 5;
const ANSWER = Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ');
const MESSAGES = [{ role: 'system' as const, content: 'You are terse.' }, { role: 'user' as const, content: 'Count.' }];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(): Promise<Record<string, number | string>> {
  const root = mkdtempSync(path.join(tmpdir(), 'pooled-api-host-bench-'));
  mkdirSync(path.join(root, 'dist'));
  writeFileSync(path.join(root, 'dist', 'index.html'), '<!doctype html>');
  const server = await startServer({ port: 0, root });
  const key = 'bench_host_'.padEnd(43, 'k');
  const own: { total: number; first: number }[] = [];
  const viaApi: { total: number; first: number }[] = [];
  let tokens = 0;
  // One host serving a fresh replay model per request: every run (own or via the endpoint) starts cold.
  let next = await replayApi('json', [ANSWER]);
  const relay = new RelayClient({
    origin: server.url, key, models: () => [{ id: MODEL, contextSize: 4096 }],
    handle: requestHandler(() => next.model),
    openSocket: (url) => new WebSocket(url, { origin: server.url }) as unknown as SocketLike,
  });
  relay.start();
  try {
    for (let i = 0; i < 200 && relay.status.kind !== 'serving'; i++) await new Promise((r) => setTimeout(r, 10));
    const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
    for (let round = 0; round <= ROUNDS; round++) {
      // (1) the tab's own: the agent's call on the same Backend.
      const mine = await replayApi('json', [ANSWER]);
      const prompt = mine.backend.encode(mine.backend.render(MESSAGES, []));
      let t0 = performance.now();
      let first = 0;
      const r = await mine.backend.generate({ prompt, maxNewTokens: 1000, stopTokens: mine.tok.stopTokenIds(), onText: () => { first ||= performance.now() - t0; } });
      if (round > 0) own.push({ total: performance.now() - t0, first });   // round 0 warms up
      tokens = r.ids.length;
      // (2) the same through the endpoint.
      next = await replayApi('json', [ANSWER]);
      t0 = performance.now();
      first = 0;
      let text = '';
      for await (const c of await openai.chat.completions.create({ model: MODEL, messages: MESSAGES, stream: true })) {
        const piece = c.choices[0]?.delta?.content ?? '';
        if (piece) { first ||= performance.now() - t0; text += piece; }
      }
      if (text !== ANSWER) throw new Error('the endpoint streamed another answer');
      if (round > 0) viaApi.push({ total: performance.now() - t0, first });
    }
    const ownMs = median(own.map((o) => o.total));
    const apiMs = median(viaApi.map((o) => o.total));
    return {
      'tokens per answer': tokens,
      "tab's own: ms per token": ownMs / tokens,
      'via the endpoint: ms per token': apiMs / tokens,
      'added ms per token (median of 5)': (apiMs - ownMs) / tokens,
      'added ms before the first token': median(viaApi.map((o) => o.first)) - median(own.map((o) => o.first)),
    };
  } finally {
    relay.stop();
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}
