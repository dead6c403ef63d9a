// npm run eval -- --backend replay|openai|room [options]
// Runs the eval suite (eval/tasks): each task's request through the agent on the chosen model, then a
// Playwright check of the page it built, in real Chromium. Prints the table and writes it, with one
// transcript per run, to eval-results/<date>/. Needs the built app for the preview (npm run build).
//   --backend replay            the scripted right and broken answers (exit 1 unless each right one
//                               passes its check and each broken one fails it)
//   --backend openai URL        an OpenAI-compatible server (with --model NAME; --tokenizer SRC for a
//                               model outside the Qwen3 vocabulary)
//   --backend room --model DIR  our own engine on a local model folder, in this process (--engine webgpu)
//   --only a,b   only these task ids      --ctx N   context (default 8192)      --out DIR
//   --check-seconds N   a task's check is given up after N s (default 60; a page stuck in a loop fails
//                       its task with that reason and the run goes on). Pages run in Chromium's sandbox:
//                       see docs/platform.md (Chromium's sandbox) for what the machine needs.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { EVAL_TASKS } from '../eval/tasks/index.ts';
import { openaiModel, replayModel, roomModel, type EvalModel } from '../eval/model.ts';
import { formatTable, rowOk, summaryOf, writeReport } from '../eval/report.ts';
import { runEval } from '../eval/run.ts';

const USAGE = 'usage: npm run eval -- --backend replay|openai URL|room [--model NAME|DIR] [--tokenizer SRC] [--engine reference|webgpu] [--only id,id] [--ctx N] [--check-seconds N] [--out DIR]';

function fail(message: string): never {
  process.stderr.write(`eval: ${message}\n${USAGE}\n`);
  process.exit(2);
}

async function main(): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        backend: { type: 'string' }, url: { type: 'string' }, model: { type: 'string' }, tokenizer: { type: 'string' }, engine: { type: 'string' },
        only: { type: 'string' }, ctx: { type: 'string' }, out: { type: 'string' }, 'check-seconds': { type: 'string' },
      },
    });
  } catch (e) {
    fail((e as Error).message);
  }
  const values = parsed.values as Record<string, string | undefined>;
  const backend = values.backend ?? 'replay';
  const ctx = values.ctx === undefined ? 8192 : Number(values.ctx);
  if (!Number.isInteger(ctx) || ctx < 1024) fail(`--ctx must be a whole number of tokens (at least 1024), not ${JSON.stringify(values.ctx)}`);
  const checkSeconds = values['check-seconds'] === undefined ? 60 : Number(values['check-seconds']);
  if (!Number.isFinite(checkSeconds) || checkSeconds < 1 || checkSeconds > 3600) fail(`--check-seconds must be a number of seconds from 1 to 3600, not ${JSON.stringify(values['check-seconds'])}`);
  const only = values.only?.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = only?.filter((id) => !EVAL_TASKS.some((t) => t.id === id)) ?? [];
  if (unknown.length) fail(`unknown task ${unknown.join(', ')}; the tasks are ${EVAL_TASKS.map((t) => t.id).join(', ')}`);
  const tasks = only ? EVAL_TASKS.filter((t) => only.includes(t.id)) : EVAL_TASKS;

  let model: EvalModel;
  const ctxGiven = values.ctx === undefined ? {} : { contextSize: ctx };
  if (backend === 'replay') {
    model = await replayModel(ctx);
  } else if (backend === 'openai') {
    const url = values.url ?? parsed.positionals[0];
    if (!url || !values.model) fail('--backend openai needs the server URL and --model NAME');
    model = await openaiModel(url, values.model, { ...ctxGiven, ...(values.tokenizer ? { tokenizer: values.tokenizer } : {}) });
  } else if (backend === 'room') {
    if (!values.model) fail('--backend room needs --model DIR|URL|HF-ID (a Qwen3 model in safetensors or MLC form)');
    if (values.engine && values.engine !== 'reference' && values.engine !== 'webgpu') fail('--engine must be reference or webgpu');
    model = await roomModel(values.model, { ...ctxGiven, ...(values.engine ? { engine: values.engine as 'reference' | 'webgpu' } : {}) });
  } else {
    fail(`--backend must be replay, openai or room, not ${JSON.stringify(backend)}`);
  }

  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const folder = path.resolve(values.out ?? path.join('eval-results', stamp));
  console.log(`eval: ${tasks.length} tasks on ${model.name}${model.scripted ? ' (right and broken answers)' : ''}`);
  const rows = await runEval({
    tasks, model, transcripts: path.join(folder, 'transcripts'), checkSeconds,
    onRow: (r) => console.log(`  ${rowOk(r) ? 'ok  ' : 'FAIL'} ${r.task} (${r.variant}): ${r.passed ? 'check passed' : `check failed${r.detail ? `: ${r.detail}` : ''}`} · ${r.reason} · ${r.seconds.toFixed(1)} s`),
  });
  await model.close?.();
  console.log(`\n${formatTable(rows)}\n\n${summaryOf(rows)}`);
  await writeReport(rows, { backend: model.name, date: new Date().toISOString(), tasks: String(tasks.length), ctx: String(ctx) }, folder);
  console.log(`wrote ${path.relative(process.cwd(), folder)}/results.md`);
  return model.scripted && !rows.every(rowOk) ? 1 : 0;
}

main().then((code) => process.exit(code), (e: unknown) => { // exit: Dawn keeps Node alive otherwise
  process.stderr.write(`eval: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
