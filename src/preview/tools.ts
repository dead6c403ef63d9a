// The agent's three preview tools (docs/agent.md, Tools) over any PreviewApi: the browser host or headless.
import { PREVIEW_LOGS, RUN_JS, SERVE } from '../agent/tools/schemas.ts';
import type { Tool, ToolOutcome } from '../agent/tool-types.ts';
import { formatLogLine } from './log-buffer.ts';
import { PREVIEW_LIMITS, PreviewError, type LogsResult, type PreviewApi, type RunJsResult, type ServeResult, type ServedPage } from './types.ts';

const MAX_ERROR_LINE = 300;

export function createPreviewTools(preview: PreviewApi): Tool[] {
  return [
    { schema: SERVE, readOnly: true, run: (args) => guarded(() => serveTool(preview, args)) },
    { schema: PREVIEW_LOGS, readOnly: true, run: (args) => guarded(() => logsTool(preview, args)) },
    { schema: RUN_JS, readOnly: false, run: (args) => guarded(() => runJsTool(preview, args)) },
  ];
}

async function serveTool(preview: PreviewApi, args: Record<string, unknown>): Promise<ToolOutcome> {
  const path = args.path === undefined || args.path === null ? '' : String(args.path);
  return serveOutcome(await preview.serve(path));
}

/**
 * serve's outcome for the model and the loop. Its text holds the load time, which differs on every
 * serve of the same page, and says "Reloaded" from the second serve on; the repeat rules compare the
 * text without either (repeatText), so serving an unchanged broken page again and again is "the same
 * result" and ends `stuck`.
 */
export function serveOutcome(r: ServeResult): ToolOutcome {
  if (r.stalled) return { ok: false, error: `${serveTargetOf(r) || '/'} was ${r.stalled}` };
  return {
    ok: true, text: formatServe(r), repeatText: formatServe({ ...r, ms: 0, reloaded: false }),
    page: { port: r.port, path: serveTargetOf(r), loaded: r.loaded, errors: r.errors },
  };
}

async function logsTool(preview: PreviewApi, args: Record<string, unknown>): Promise<ToolOutcome> {
  const cursor = args.cursor === undefined || args.cursor === null ? 0 : Number(args.cursor);
  if (!Number.isSafeInteger(cursor) || cursor < 0) return { ok: false, error: `cursor must be a whole number ≥ 0 (got ${JSON.stringify(args.cursor)})` };
  return { ok: true, text: formatLogs(await preview.logs(cursor), cursor) };
}

async function runJsTool(preview: PreviewApi, args: Record<string, unknown>): Promise<ToolOutcome> {
  if (typeof args.code !== 'string' || args.code.trim() === '') return { ok: false, error: 'run_js needs code: a JavaScript module to run' };
  const port = args.port === undefined || args.port === null ? undefined : Number(args.port);
  if (port !== undefined && !Number.isSafeInteger(port)) return { ok: false, error: `port must be a port number like 5173 (got ${JSON.stringify(args.port)})` };
  const result = await preview.runJs(args.code, port);
  const text = formatRun(result);
  return result.status === 'done' ? { ok: true, text } : { ok: false, error: text.split('\n')[0]!, text };
}

/** The serve path that gives this page again: the folder, or folder/page.html when it is not index.html. */
export function serveTargetOf(p: ServedPage): string {
  return p.page === 'index.html' ? p.folder : p.folder === '' ? p.page : `${p.folder}/${p.page}`;
}

/** "Served / on :5173 — loaded in 240 ms, no errors." or the first errors, at most 8 lines. */
export function formatServe(r: ServeResult): string {
  const where = `${r.folder === '' ? '/' : r.folder + '/'}${r.page === 'index.html' ? '' : r.page}`;
  const head = `${r.reloaded ? 'Reloaded' : 'Served'} ${where} on :${r.port}/ — ` +
    (r.loaded ? `loaded in ${r.ms} ms` : `still loading after ${(r.ms / 1000).toFixed(1)} s`);
  if (r.errors.length === 0) {
    return r.loaded ? `${head}, no errors.` : `${head}, no errors yet (a long task or an endless loop while loading?); check preview_logs.`;
  }
  const shown = r.errors.slice(0, PREVIEW_LIMITS.firstErrorLines).map((e) => cut(e.split('\n')[0]!, MAX_ERROR_LINE));
  const more = r.errors.length - shown.length;
  return `${head}, ${r.errors.length} error${r.errors.length === 1 ? '' : 's'}:\n${shown.join('\n')}` +
    (more > 0 ? `\n(${more} more: call preview_logs)` : '');
}

export function formatLogs(r: LogsResult, cursor: number): string {
  const lines = r.lines.map((l) => formatLogLine(l));
  const head = r.skipped > 0 ? [`(${r.skipped} older line${r.skipped === 1 ? '' : 's'} since cursor ${cursor} not shown)`] : [];
  const body = lines.length ? [...head, ...lines].join('\n') : 'No new console output.';
  return `${body}\nnext cursor: ${r.next}`;
}

export function formatRun(r: RunJsResult): string {
  const printed = r.output.length ? r.output.join('\n') : '(nothing printed)';
  switch (r.status) {
    case 'done': return r.note ? `${printed}\n(${r.note})` : printed;
    case 'error': return `run_js failed: ${r.error}\n${printed}`;
    case 'timeout': return `run_js stopped after ${PREVIEW_LIMITS.runJsMs / 1000} s (an endless loop?); the page was reloaded.\n${printed}`;
  }
}

async function guarded(fn: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof PreviewError) return { ok: false, error: e.message };
    const err = e as Error;
    return { ok: false, error: `${err?.name ?? 'Error'}: ${err?.message ?? String(e)}` };
  }
}

function cut(s: string, n: number): string {
  return s.length <= n ? s : s.slice(0, n - 1) + '…';
}
