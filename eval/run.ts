// Runs eval tasks: for each, a fresh project folder (holding a follow-up task's given files first), the
// agent (real loop, tools, grammar, repairs, compaction and the headless preview for serve /
// preview_logs / run_js) on the chosen model, then the task's check of the page in real Chromium,
// served from the folder on 127.0.0.1. One row per run.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { Agent } from '../src/agent/loop.ts';
import { createCallCodec } from '../src/agent/call-codec.ts';
import { NodeFolderFiles } from '../src/agent/files/node-folder.ts';
import type { FileEntry, ProjectFiles } from '../src/agent/files/types.ts';
import { createFileTools } from '../src/agent/tools/file-tools.ts';
import { NodeRegexRunner } from '../src/agent/tools/regex-runner.ts';
import { ToolRegistry } from '../src/agent/tools/registry.ts';
import { HeadlessPreview } from '../src/preview/headless.ts';
import { createPreviewTools } from '../src/preview/tools.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../e2e/helpers/browser.ts';
import { serveFolder } from './check-server.ts';
import type { EvalModel } from './model.ts';
import { brokenFiles, type BrokenSolution, type EvalTask } from './task.ts';

export interface EvalRow {
  task: string;
  /** 'model' (the model's own answer), 'solution' (scripted right answer) or 'broken: …' (scripted wrong one). */
  variant: string;
  /** What the check should say: pass for the model and a right answer, fail for a broken one. */
  expected: 'pass' | 'fail';
  passed: boolean;
  steps: number;
  toolCalls: number;
  tokens: number;
  seconds: number;
  reason: string;
  /** Why the check failed (or the agent's error). */
  detail: string;
}

export interface EvalOptions {
  tasks: readonly EvalTask[];
  model: EvalModel;
  /** Folder for transcripts (one JSONL per run); none = not written. */
  transcripts?: string;
  /** Give up on one run after this long (the request is stopped). Default 15 minutes. */
  runSeconds?: number;
  onRow?: (row: EvalRow) => void;
}

/** The project the headless preview serves: the current run's folder. */
class CurrentFiles implements ProjectFiles {
  current: ProjectFiles | null = null;
  private get files(): ProjectFiles {
    if (!this.current) throw new Error('eval: no project is open');
    return this.current;
  }
  list(dir: string): Promise<FileEntry[]> { return this.files.list(dir); }
  allFiles(): Promise<string[]> { return this.files.allFiles(); }
  readText(p: string): Promise<string | null> { return this.files.readText(p); }
  readBytes(p: string): Promise<Uint8Array | null> { return this.files.readBytes(p); }
  write(p: string, content: string | Uint8Array): Promise<void> { return this.files.write(p, content); }
  remove(p: string): Promise<void> { return this.files.remove(p); }
  onChange(listener: (p: string) => void): () => void { return this.files.onChange(listener); }
}

export async function runEval(opts: EvalOptions): Promise<EvalRow[]> {
  const project = new CurrentFiles();
  const preview = await HeadlessPreview.start({ files: project });
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
  const rows: EvalRow[] = [];
  try {
    for (const task of opts.tasks) {
      const variants = opts.model.scripted
        ? [{ variant: 'solution', expected: 'pass' as const, files: task.solution },
           ...task.broken.map((b) => ({ variant: `broken: ${b.why}`, expected: 'fail' as const, files: brokenFiles(task, b), broken: b }))]
        : [{ variant: 'model', expected: 'pass' as const }];
      for (const v of variants) {
        const row = await runOne(task, v, { ...opts, project, preview, browser });
        rows.push(row);
        opts.onRow?.(row);
      }
    }
  } finally {
    await browser.close();
    await preview.close();
  }
  return rows;
}

interface RunEnv extends EvalOptions { project: CurrentFiles; preview: HeadlessPreview; browser: Browser }

interface Variant {
  variant: string;
  expected: 'pass' | 'fail';
  /** Scripted runs: the files the answer leaves, and the broken change when it is a broken one. */
  files?: Record<string, string>;
  broken?: BrokenSolution;
}

async function runOne(task: EvalTask, v: Variant, env: RunEnv): Promise<EvalRow> {
  const dir = await mkdtemp(path.join(tmpdir(), `pooled-eval-${task.id}-`));
  const row: EvalRow = { task: task.id, variant: v.variant, expected: v.expected, passed: false, steps: 0, toolCalls: 0, tokens: 0, seconds: 0, reason: '', detail: '' };
  try {
    const files = await NodeFolderFiles.open(dir);
    for (const [file, content] of Object.entries(task.given ?? {})) await files.write(file, content);
    env.project.current = files;
    const { tokenizer, template } = env.model;
    const tools = new ToolRegistry([...createFileTools(files, { regexRunner: new NodeRegexRunner() }), ...createPreviewTools(env.preview)]);
    const backend = env.model.backend({
      tools: tools.schemas(),
      ...(v.files ? { files: v.files, task } : {}),
      ...(v.broken ? { broken: v.broken } : {}),
    });
    const agent = new Agent({
      backend, tools, files, format: template.format,
      codec: createCallCodec({ tokenizer, format: template.format, tools: tools.schemas() }),
    });
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), (env.runSeconds ?? 900) * 1000);
    const started = performance.now();
    try {
      const outcome = await agent.run(task.request, { signal: stop.signal });
      Object.assign(row, { steps: outcome.stats.steps, toolCalls: outcome.stats.toolCalls, tokens: outcome.stats.generated, reason: outcome.reason });
      if (outcome.reason === 'error' && outcome.note) row.detail = outcome.note;
    } finally {
      clearTimeout(timer);
      row.seconds = (performance.now() - started) / 1000;
    }
    if (env.transcripts) {
      await mkdir(env.transcripts, { recursive: true });
      const name = `${task.id}-${v.variant.replace(/\W+/g, '-').replace(/-+$/, '')}.jsonl`;
      await writeFile(path.join(env.transcripts, name), agent.transcript.jsonl());
    }
    const check = await checkPage(task, dir, env.browser);
    row.passed = check === null;
    if (check) row.detail = row.detail ? `${row.detail}; ${check}` : check;
  } catch (e) {
    row.detail = `${(e as Error).name}: ${(e as Error).message}`;
  } finally {
    env.project.current = null;
    await rm(dir, { recursive: true, force: true });
  }
  return row;
}

/** null when the check passed, else what it found. */
async function checkPage(task: EvalTask, dir: string, browser: Browser): Promise<string | null> {
  const server = await serveFolder(dir);
  const context = await browser.newContext({ viewport: { width: 1024, height: 768 } });
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(5_000);
    await task.check(page, `${server.url}index.html`);
    return null;
  } catch (e) {
    const err = e as Error;
    return err.name === 'CheckFailed' ? err.message : `${err.name}: ${err.message.split('\n')[0]}`;
  } finally {
    await context.close();
    await server.close();
  }
}
