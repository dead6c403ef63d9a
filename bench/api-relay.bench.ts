// The OpenAI-compatible endpoint's relay (issue 40): what the server adds per token between the host tab
// and the client. A scripted host (the tests' fake, a `ws` client) sends one chunk at a time stamped with
// its send time; the real openai client reads it through the real server (WebSocket in, SSE out) and the
// next chunk goes when the last arrived: that round is the latency the relay adds to each token, on top of
// the room's own generation. Then the same chunks back to back: the most chunks per second it passes.
// The host tab's own share (its generator to its socket) is not in here: that needs a browser room.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { startServer } from '../server/app.ts';
import { chatChunk, connectFakeHost, type Answer } from '../test/helpers/fake-relay-host.ts';

export const title = 'API endpoint: relay latency per chunk (host socket in, SSE out) and chunks per second';

const MODEL = 'pooled-tiny';
const CHUNKS = 300;
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;

export async function run(): Promise<Record<string, number | string>> {
  const root = mkdtempSync(path.join(tmpdir(), 'pooled-api-bench-'));
  mkdirSync(path.join(root, 'dist'));
  writeFileSync(path.join(root, 'dist', 'index.html'), '<!doctype html>');
  const server = await startServer({ port: 0, root });
  const key = 'bench_'.padEnd(40, 'k');
  let answer: Answer = () => undefined;
  const host = await connectFakeHost(server.url, { key, answer: (r, h) => answer(r, h) });
  const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
  const ask = () => openai.chat.completions.create({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] });
  try {
    // Lock-step: one chunk in flight; each carries its send time (one process, one clock).
    const delays: number[] = [];
    let send = (_k: number) => undefined as void;
    answer = (r, h) => {
      send = (k) => {
        if (k === CHUNKS) { h.send({ t: 'done', id: r.id }); return; }
        h.send({ t: 'chunk', id: r.id, data: chatChunk(r.id, MODEL, { content: 'tok' }, null) as never });
        sentAt = performance.now();
      };
      send(0);
    };
    let sentAt = 0;
    for (let round = 0; round < 3; round++) {
      let k = 0;
      for await (const _c of await ask()) {
        if (round > 0) delays.push(performance.now() - sentAt); // round 0 warms up
        send(++k);
      }
    }
    // Back to back: every chunk sent at once; chunks per second through to the client.
    answer = (r, h) => {
      for (let k = 0; k < CHUNKS; k++) h.send({ t: 'chunk', id: r.id, data: chatChunk(r.id, MODEL, { content: 'tok' }) });
      h.send({ t: 'done', id: r.id });
    };
    const t0 = performance.now();
    let got = 0;
    for await (const _c of await ask()) got++;
    const ms = performance.now() - t0;
    if (got !== CHUNKS) throw new Error(`expected ${CHUNKS} chunks, got ${got}`);
    return {
      'chunks timed (lock-step)': delays.length,
      'added ms per chunk, median': quantile(delays, 0.5),
      'added ms per chunk, p95': quantile(delays, 0.95),
      'chunks per second, back to back': (CHUNKS / ms) * 1000,
    };
  } finally {
    await host.close();
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}
