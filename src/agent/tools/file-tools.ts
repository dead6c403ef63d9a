// The five file tools as Tool objects over one project's files. The preview's serve, preview_logs and
// run_js join them in the same ToolRegistry (registry.ts).
import type { ProjectFiles } from '../files/types.ts';
import type { Tool, ToolOutcome, ToolPlan } from '../tool-types.ts';
import { EDIT_FILE, LIST_DIR, READ_FILE, SEARCH, WRITE_FILE } from './schemas.ts';
import { guarded } from './args.ts';
import { listDir, readFile, search } from './read-tools.ts';
import { applyPlan, planEdit, planWrite } from './write-tools.ts';
import { defaultRegexRunner, type RegexRunner } from './regex-runner.ts';

export interface FileToolOptions {
  /** Where search runs its regex (killable thread). Default: a Web Worker, or worker_threads in Node. */
  regexRunner?: RegexRunner;
}

export function createFileTools(files: ProjectFiles, options: FileToolOptions = {}): Tool[] {
  const runner = options.regexRunner ?? defaultRegexRunner();
  const tool = (schema: Tool['schema'], readOnly: boolean, body: (args: Record<string, unknown>, signal?: AbortSignal) => Promise<ToolOutcome>): Tool => ({
    schema,
    readOnly,
    run: (args, ctx) => guarded(() => body(args, ctx.signal)),
  });
  // A planned tool runs its own plan; asked for the plan alone, argument errors come back as a final outcome.
  const planned = (schema: Tool['schema'], plan: (args: Record<string, unknown>) => Promise<ToolPlan>): Tool => ({
    ...tool(schema, false, async (args) => applyPlan(await plan(args))),
    plan: async (args) => {
      try {
        return await plan(args);
      } catch (e) {
        return { kind: 'final', outcome: await guarded(() => Promise.reject(e)) };
      }
    },
  });
  return [
    tool(LIST_DIR, true, (args) => listDir(files, args)),
    tool(READ_FILE, true, (args) => readFile(files, args)),
    tool(SEARCH, true, (args, signal) => search(files, runner, args, signal)),
    planned(WRITE_FILE, (args) => planWrite(files, args)),
    planned(EDIT_FILE, (args) => planEdit(files, args)),
  ];
}
