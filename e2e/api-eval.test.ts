// Issue 40: our own agent's OpenAI backend pointed at the endpoint finishes an eval task — the same loop end
// to end over HTTP. npm start's server; a host (our relay client over `ws`, in Node) serving the replay model
// scripted with the task's right answer; the eval (`npm run eval -- --backend openai URL`) runs the agent
// with OpenAIBackend against `${server}/v1` and checks the app it wrote in Chromium.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';
import WebSocket from 'ws';
import { startServer } from '../server/app.ts';
import { EVAL_TASKS } from '../eval/tasks/index.ts';
import { openaiModel } from '../eval/model.ts';
import { rowOk } from '../eval/report.ts';
import { runEval } from '../eval/run.ts';
import { scriptedReplies } from '../eval/script.ts';
import { RelayClient, type SocketLike } from '../src/api/relay-client.ts';
import { requestHandler, type ServedLine } from '../src/api/serve-requests.ts';
import { MODEL, replayApi } from '../test/unit/api/fixture.ts';

test('the agent over HTTP: OpenAIBackend → the endpoint → the relay → the replay model finishes the counter task', async () => {
  const task = EVAL_TASKS.find((t) => t.id === 'counter')!;
  const root = mkdtempSync(path.join(tmpdir(), 'pooled-api-eval-'));
  mkdirSync(path.join(root, 'dist'));
  writeFileSync(path.join(root, 'dist', 'index.html'), '<!doctype html>');
  const server = await startServer({ port: 0, root });
  const { model } = await replayApi('json', scriptedReplies({ task, files: task.solution }, 'json'), { contextSize: 8192 });
  const served: ServedLine[] = [];
  const key = 'eval_over_http_'.padEnd(43, 'k');
  const relay = new RelayClient({
    origin: server.url, key, models: () => [{ id: MODEL, contextSize: 8192 }], handle: requestHandler(() => model, (l) => served.push(l)),
    openSocket: (url) => new WebSocket(url, { origin: server.url }) as unknown as SocketLike,
  });
  relay.start();
  const saved = process.env.OPENAI_API_KEY;
  try {
    for (let i = 0; i < 500 && relay.status.kind !== 'serving'; i++) await new Promise((r) => setTimeout(r, 10));
    expect(relay.status).toEqual({ kind: 'serving' });
    process.env.OPENAI_API_KEY = key;     // what the eval's OpenAI backend sends as the Bearer key (README)
    const rows = await runEval({ tasks: [task], model: await openaiModel(server.url, MODEL), runSeconds: 240 });
    expect(rows.map((r) => `${r.task} ${r.variant}: ${rowOk(r) ? 'ok' : `${r.reason} ${r.detail}`}`)).toEqual(['counter model: ok']);
    expect(rows[0]!.toolCalls).toBeGreaterThanOrEqual(3);
    // Every step of the loop went through the endpoint (and the backend's own probes) and came back whole.
    expect(served.length).toBeGreaterThanOrEqual(rows[0]!.steps);
    expect(served.filter((l) => l.outcome !== 'ok')).toEqual([]);
  } finally {
    if (saved === undefined) delete process.env.OPENAI_API_KEY; else process.env.OPENAI_API_KEY = saved;
    relay.stop();
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}, 300_000);   // the headless preview, the check's Chromium and a few scripted steps over HTTP
