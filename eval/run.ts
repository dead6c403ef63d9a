// Runs eval tasks: for each, a fresh project folder (holding a follow-up task's given files first), the
// agent (real loop, tools, grammar, repairs, compaction and the headless preview for serve /
// preview_logs / run_js) on the chosen model, then the task's check of the page in real Chromium,
// served from the folder on its own walled-in 127.0.0.1 origin (check-server.ts). One row per run.
// The pages are a model's: Chromium runs them with its sandbox on (src/preview/chromium.ts), and every
// step has a deadline kept here in Node, since a page stuck in a loop stalls its tab and page.evaluate
// has no timeout: the agent's run, the check, and closing a stuck check's tab. A step past its deadline
// fails that task with the reason, and the run goes on to the next one.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { Agent } from '../src/agent/loop.ts';
import { createCallCodec } from '../src/agent/call-codec.ts';
import { NodeFolderFiles } from '../src/agent/files/node-folder.ts';
import type { FileEntry, ProjectFiles } from '../src/agent/files/types.ts';
import { createFileTools } from '../src/agent/tools/file-tools.ts';
import { NodeRegexRunner } from '../src/agent/tools/regex-runner.ts';
import { ToolRegistry } from '../src/agent/tools/registry.ts';
import { HeadlessPreview } from '../src/preview/headless.ts';
import { createPreviewTools } from '../src/preview/tools.ts';
import { confineToOrigin, launchSandboxedChromium } from '../src/preview/chromium.ts';
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
  /** Give up on a task's check after this long (its tab is closed). Default 60 s (a check takes ≲ 5 s). */
  checkSeconds?: number;
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
  const checks: CheckBrowser = { browser: await launchSandboxedChromium() };
  const rows: EvalRow[] = [];
  try {
    for (const task of opts.tasks) {
      const variants = opts.model.scripted
        ? [{ variant: 'solution', expected: 'pass' as const, files: task.solution },
           ...task.broken.map((b) => ({ variant: `broken: ${b.why}`, expected: 'fail' as const, files: brokenFiles(task, b), broken: b }))]
        : [{ variant: 'model', expected: 'pass' as const }];
      for (const v of variants) {
        const row = await runOne(task, v, { ...opts, project, preview, checks });
        rows.push(row);
        opts.onRow?.(row);
      }
    }
  } finally {
    await checks.browser.close();
    await preview.close();
  }
  return rows;
}

/** The checks' Chromium; replaced when a stuck tab would not even close. */
interface CheckBrowser { browser: Browser }

interface RunEnv extends EvalOptions { project: CurrentFiles; preview: HeadlessPreview; checks: CheckBrowser }

/** After the stop, how long the agent may take to end before the run is given up (a tool stuck past its own bound). */
const STOP_GRACE_MS = 30_000;
/** How long closing a stuck check's tab may take before its whole Chromium is replaced. */
const CLOSE_MS = 10_000;

/** `p`'s value, or 'late' once `ms` passed (a late `p` is let go, its rejection swallowed). */
async function within<T>(p: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  p.catch(() => undefined);
  return Promise.race([p, new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), ms)))]).finally(() => clearTimeout(timer));
}

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
    const runMs = (env.runSeconds ?? 900) * 1000;
    const timer = setTimeout(() => stop.abort(), runMs);
    const started = performance.now();
    try {
      const outcome = await within(agent.run(task.request, { signal: stop.signal }), runMs + STOP_GRACE_MS);
      if (outcome === 'late') {
        row.reason = 'timeout';
        row.detail = `the agent did not end within ${runMs / 1000 + STOP_GRACE_MS / 1000} s, ${STOP_GRACE_MS / 1000} s after it was told to stop; the run was given up`;
        return row;
      }
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
    const check = await checkPage(task, dir, env.checks, (env.checkSeconds ?? 60) * 1000);
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

/** null when the check passed, else what it found (or that it ran past its deadline). */
async function checkPage(task: EvalTask, dir: string, checks: CheckBrowser, deadlineMs: number): Promise<string | null> {
  const server = await serveFolder(dir);
  let context: BrowserContext | undefined;
  try {
    context = await checks.browser.newContext({ viewport: { width: 1024, height: 768 } });
    await confineToOrigin(context, server.url); // and the CSP of check-server.ts: two walls, one in the page, one in the driver
    const page = await context.newPage();
    page.setDefaultTimeout(5_000);
    const verdict = await within(task.check(page, `${server.url}index.html`).then(() => null, (e: Error) =>
      e.name === 'CheckFailed' ? e.message : `${e.name}: ${e.message.split('\n')[0]}`), deadlineMs);
    if (verdict !== 'late') return verdict;
    return `the check did not finish within ${deadlineMs / 1000} s: the page is stuck (an endless loop?), so its tab was closed`;
  } finally {
    // A tab stuck in a loop closes from the browser's side (Chromium ends its renderer); if even that
    // hangs, the whole check browser is replaced so the next task gets a working one.
    if (context && (await within(context.close(), CLOSE_MS)) === 'late') {
      const stuck = checks.browser;
      checks.browser = await launchSandboxedChromium();
      void within(stuck.close(), CLOSE_MS);
    }
    await server.close();
  }
}
