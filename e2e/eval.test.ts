// The eval suite on the scripted model (`npm run eval -- --backend replay`): every task's right answer,
// written by the agent loop through its real tools and grammar and served by the headless preview,
// passes its Playwright check in real Chromium; every broken answer fails its check. A right answer's page
// also loads in the agent's preview with no errors (the todo and dark-mode pages use localStorage, which the
// sandboxed preview provides). A follow-up task's run starts on its given project (another task's right
// answer) and its right answer changes it with read_file and edit_file only.
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';
import { EVAL_TASKS } from '../eval/tasks/index.ts';
import { replayModel } from '../eval/model.ts';
import { rowOk, summaryOf } from '../eval/report.ts';
import { runEval } from '../eval/run.ts';

test('12+ tasks and the follow-ups: each right answer passes its check, each broken answer fails it', async () => {
  expect(EVAL_TASKS.length).toBeGreaterThanOrEqual(12);
  const followUps = EVAL_TASKS.filter((t) => t.edits !== undefined);
  expect(followUps.length).toBeGreaterThanOrEqual(4);
  for (const task of EVAL_TASKS) expect(task.broken.length, task.id).toBeGreaterThanOrEqual(1);
  const transcripts = await mkdtemp(path.join(tmpdir(), 'eval-transcripts-'));
  const rows = await runEval({ tasks: EVAL_TASKS, model: await replayModel(), transcripts });
  const wrong = rows.filter((r) => !rowOk(r)).map((r) => `${r.task} (${r.variant}): ${r.detail || r.reason}`);
  expect(wrong).toEqual([]);
  const answers = rows.filter((r) => r.expected === 'pass');
  expect(answers.map((r) => r.task)).toEqual(EVAL_TASKS.map((t) => t.id));
  expect(answers.every((r) => r.reason === 'done' && r.toolCalls >= 3)).toBe(true);
  expect(rows.filter((r) => r.expected === 'fail').length).toBe(EVAL_TASKS.reduce((n, t) => n + t.broken.length, 0));
  // What the preview said after each right answer's last serve: the page loaded, and nothing went wrong.
  const served: Record<string, string> = {};
  for (const name of (await readdir(transcripts)).filter((n) => n.endsWith('-solution.jsonl'))) {
    const said = [...(await readFile(path.join(transcripts, name), 'utf8')).matchAll(/(?:Served|Reloaded) \/ on :\d+\/ — [^\\]*/g)].map((m) => m[0]);
    served[name.replace('-solution.jsonl', '')] = said.at(-1)?.replace(/ \d+ ms/, ' N ms') ?? '(never served)';
  }
  expect(Object.keys(served).sort()).toEqual(EVAL_TASKS.map((t) => t.id).sort());
  for (const [task, said] of Object.entries(served)) expect(said, task).toMatch(/^(Served|Reloaded) \/ on :\d+\/ — loaded in N ms, no errors\.$/);
  // A follow-up's right answer edited the given files, one edit_file per edit, and wrote none whole.
  for (const task of followUps) {
    const lines = (await readFile(path.join(transcripts, `${task.id}-solution.jsonl`), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { role: string; text: string });
    const results = lines.filter((l) => l.role === 'tool').map((l) => l.text).join('\n');
    expect(results.match(/\bedited [\w.-]+: replaced/g)?.length ?? 0, task.id).toBe(task.edits!.length);
    expect(results, task.id).not.toMatch(/\b(created|wrote|appended) /);
  }
  expect(summaryOf(rows)).toBe(`${EVAL_TASKS.length} of ${EVAL_TASKS.length} tasks pass; ${rows.length - EVAL_TASKS.length} of ${rows.length - EVAL_TASKS.length} broken answers fail their check`);
}, 600_000);

test('--backend openai: a task run against an OpenAI-compatible server (scripted to answer right) passes its check', async () => {
  const { startOpenAIServer } = await import('../test/helpers/openai-server.ts');
  const { openaiModel } = await import('../eval/model.ts');
  const { repliesWriting } = await import('../eval/script.ts');
  const counter = EVAL_TASKS.find((t) => t.id === 'counter')!;
  const server = await startOpenAIServer({ kind: 'llama.cpp', nCtx: 8192, replies: repliesWriting(counter.solution, 'json').map((text) => ({ text })) });
  try {
    const rows = await runEval({ tasks: [counter], model: await openaiModel(server.url, 'qwen3-test') });
    expect(rows).toMatchObject([{ task: 'counter', variant: 'model', passed: true, reason: 'done', toolCalls: 3 }]);
    expect(server.requests.every((r) => typeof r.grammar === 'string')).toBe(true);
  } finally {
    await server.close();
  }
}, 300_000);

test('--backend openai: a follow-up task starts on its given files, and an answer that edits them passes its check', async () => {
  const { startOpenAIServer } = await import('../test/helpers/openai-server.ts');
  const { openaiModel } = await import('../eval/model.ts');
  const { repliesEditing } = await import('../eval/script.ts');
  const counterReset = EVAL_TASKS.find((t) => t.id === 'counter-reset')!;
  const server = await startOpenAIServer({ kind: 'llama.cpp', nCtx: 8192, replies: repliesEditing(counterReset, 'json').map((text) => ({ text })) });
  try {
    const rows = await runEval({ tasks: [counterReset], model: await openaiModel(server.url, 'qwen3-test') });
    // read + edit of index.html and of app.js, then serve: every edit found its text in the given files.
    expect(rows).toMatchObject([{ task: 'counter-reset', variant: 'model', passed: true, reason: 'done', toolCalls: 5 }]);
  } finally {
    await server.close();
  }
}, 300_000);
